"""Calibrate the relevance threshold per embedder on the labelled retrieval set.

    .venv/bin/python scripts/calibrate_threshold.py                  # both embedders, print + write SVGs
    .venv/bin/python scripts/calibrate_threshold.py --embedders local
    .venv/bin/python scripts/calibrate_threshold.py --update-config  # also write DEFAULT_THRESHOLDS

The set is tests/data/retrieval_set.yaml; the method and the numbers are explained in docs/retrieval.md.
Each query is searched, as the game does, against one pool (all roles' cards of one scenario in one
language, plus every distractor card). "known" = best cosine score >= threshold. An answerable query is
correct when it is known and its top-1 card is an expected card; an unanswerable query is correct when it
is unknown.

Criterion (docs/retrieval.md explains why): maximise accuracy over all queries subject to
  (1) every off-topic unanswerable query is refused (a football question must never be "known"), and
  (2) at least 80 % of all unanswerable queries are refused, near-topic ones included.
Ties are broken by taking the middle of the tied thresholds (the lower one of an even tie). If no threshold
meets both constraints, the one refusing most wins.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from langchain_core.embeddings import Embeddings

from bureau.config import Settings
from bureau.game.scenario_schema import ROLES, load_builtin_scenarios
from bureau.memory.embedders import build_embedder, cosine

if TYPE_CHECKING:
    from rich.console import Console

REPO = Path(__file__).resolve().parents[1]
SET_PATH = REPO / "tests" / "data" / "retrieval_set.yaml"
CONFIG_PATH = REPO / "backend" / "bureau" / "config.py"
IMG_DIR = REPO / "docs" / "img"

CATEGORIES: tuple[str, ...] = ("direct", "paraphrase", "cross_language", "unanswerable")
ANSWERABLE: tuple[str, ...] = CATEGORIES[:3]
GRID: tuple[float, ...] = tuple(round(0.20 + 0.025 * i, 3) for i in range(17))  # 0.20 .. 0.60
MIN_REFUSAL = 0.80
BORDERLINE_BAND: float = Settings.model_fields["borderline_band"].default  # the game's band below the threshold
EMBEDDERS: tuple[str, ...] = ("local", "hashing")


# --------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Card:
    key: str
    lang: str
    content: str
    scenario: str | None = None  # None for distractors
    role: str | None = None


@dataclass(frozen=True)
class Query:
    text: str
    lang: str
    category: str
    expect: tuple[str, ...]  # empty: unanswerable
    scenario: str
    pool_lang: str
    near: bool = False  # unanswerable, but about something near a card's topic

    @property
    def answerable(self) -> bool:
        return bool(self.expect)


@dataclass(frozen=True)
class RetrievalSet:
    cards: dict[str, Card]
    queries: list[Query]

    def pool(self, query: Query) -> list[str]:
        return [
            key
            for key, card in self.cards.items()
            if card.scenario is None or (card.scenario == query.scenario and card.lang == query.pool_lang)
        ]


def scenario_cards() -> dict[str, Card]:
    cards: dict[str, Card] = {}
    for (scenario_id, lang), scenario in sorted(load_builtin_scenarios().items()):
        for role in ROLES:
            for card in getattr(scenario.cards, role):
                key = f"{scenario_id}.{lang}.{role}.{card.topic}"
                if key in cards:
                    raise ValueError(f"two {role} cards share topic {card.topic!r} in {scenario_id}.{lang}")
                cards[key] = Card(key, lang, card.content, scenario_id, role)
    return cards


def load_retrieval_set(path: Path = SET_PATH) -> RetrievalSet:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    cards = scenario_cards()
    for item in raw["distractors"]:
        if not item["key"].startswith("distractor."):
            raise ValueError(f"distractor key must start with 'distractor.': {item['key']}")
        cards[item["key"]] = Card(item["key"], item["lang"], item["content"])
    queries: list[Query] = []
    for index, item in enumerate(raw["queries"]):
        where = f"{path.name}: queries.{index} ({item.get('q')!r})"
        category = item["category"]
        if category not in CATEGORIES:
            raise ValueError(f"{where}: unknown category {category!r}")
        expect = item.get("expect")
        keys = () if expect is None else (expect,) if isinstance(expect, str) else tuple(expect)
        for key in keys:
            if key not in cards:
                raise ValueError(f"{where}: unknown card {key!r}")
        if (category == "unanswerable") != (not keys):
            raise ValueError(f"{where}: unanswerable queries (and only they) have expect: null")
        if keys:
            first = cards[keys[0]]
            if first.scenario is None:
                raise ValueError(f"{where}: expected cards must be scenario cards")
            if any((cards[k].scenario, cards[k].lang) != (first.scenario, first.lang) for k in keys):
                raise ValueError(f"{where}: expected cards must share one scenario and language")
            scenario, pool_lang = first.scenario, first.lang
            if (category == "cross_language") == (pool_lang == item["lang"]):
                raise ValueError(f"{where}: cross_language iff query and card languages differ")
        else:
            scenario, pool_lang = item["scenario"], item.get("pool_lang", item["lang"])
        if item.get("near") and keys:
            raise ValueError(f"{where}: only unanswerable queries can be near")
        queries.append(Query(item["q"], item["lang"], category, keys, scenario, pool_lang, bool(item.get("near"))))
    return RetrievalSet(cards, queries)


# ---------------------------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class Scored:
    query: Query
    ranked: tuple[tuple[str, float], ...]  # pool cards, best first

    @property
    def best(self) -> float:
        return self.ranked[0][1]

    @property
    def top(self) -> str:
        return self.ranked[0][0]

    @property
    def top1_correct(self) -> bool:
        return self.query.answerable and self.top in self.query.expect

    def correct_at(self, threshold: float) -> bool:
        known = self.best >= threshold
        return (known and self.top1_correct) if self.query.answerable else not known


def make_embedder(name: str) -> Embeddings:
    """The embedder the game would build for `BUREAU_EMBEDDER=name` (the environment is not read)."""
    return build_embedder(Settings.model_construct(embedder=name))


def embed_texts(
    embedder: Embeddings, texts: Sequence[str], advance: Callable[[int], None] | None = None, batch: int = 16
) -> dict[str, list[float]]:
    unique = list(dict.fromkeys(texts))
    vectors: dict[str, list[float]] = {}
    for start in range(0, len(unique), batch):
        chunk = unique[start : start + batch]
        for text, vector in zip(chunk, embedder.embed_documents(chunk), strict=True):
            vectors[text] = vector
        if advance:
            advance(len(chunk))
    return vectors


def score_set(data: RetrievalSet, embedder: Embeddings, advance: Callable[[int], None] | None = None) -> list[Scored]:
    texts = [c.content for c in data.cards.values()] + [q.text for q in data.queries]
    vectors = embed_texts(embedder, texts, advance)
    scored = []
    for query in data.queries:
        qv = vectors[query.text]
        ranked = sorted(
            ((key, cosine(qv, vectors[data.cards[key].content])) for key in data.pool(query)),
            key=lambda pair: (-pair[1], pair[0]),
        )
        scored.append(Scored(query, tuple(ranked)))
    return scored


def count_texts(data: RetrievalSet) -> int:
    return len(dict.fromkeys([c.content for c in data.cards.values()] + [q.text for q in data.queries]))


# ---------------------------------------------------------------------------------------- metrics
@dataclass
class Metrics:
    threshold: float
    recall: dict[str, float] = field(default_factory=dict)  # per answerable category; refusal for unanswerable
    counts: dict[str, int] = field(default_factory=dict)
    known: int = 0
    known_correct: int = 0
    answerable: int = 0
    accuracy: float = 0.0
    far_refusal: float = 0.0  # off-topic unanswerable queries refused
    near_refusal: float = 0.0  # near-topic unanswerable queries refused

    @property
    def precision(self) -> float:
        """Of the queries answered "known", the share whose top-1 card is a right answer."""
        return self.known_correct / self.known if self.known else 1.0

    @property
    def known_recall(self) -> float:
        """Of the answerable queries, the share answered "known" with the right top-1 card."""
        return self.known_correct / self.answerable if self.answerable else 0.0

    @property
    def refusal(self) -> float:
        return self.recall.get("unanswerable", 0.0)


def evaluate(scored: Sequence[Scored], threshold: float) -> Metrics:
    m = Metrics(threshold)
    correct_by_cat: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
    for cat in CATEGORIES:
        m.counts[cat] = sum(1 for s in scored if s.query.category == cat)
    total_correct = 0
    for s in scored:
        ok = s.correct_at(threshold)
        correct_by_cat[s.query.category] += ok
        total_correct += ok
        if s.best >= threshold:
            m.known += 1
            m.known_correct += s.top1_correct
    m.answerable = sum(m.counts[c] for c in ANSWERABLE)
    m.recall = {c: correct_by_cat[c] / m.counts[c] if m.counts[c] else 0.0 for c in CATEGORIES}
    m.accuracy = total_correct / len(scored)
    far = [s for s in scored if not s.query.answerable and not s.query.near]
    near = [s for s in scored if s.query.near]
    m.far_refusal = sum(s.best < threshold for s in far) / len(far) if far else 1.0
    m.near_refusal = sum(s.best < threshold for s in near) / len(near) if near else 1.0
    return m


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(random positive scores above random negative), ties count half (Mann-Whitney U)."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def separation_auroc(scored: Sequence[Scored]) -> float:
    positives = [s.best for s in scored if s.top1_correct]
    negatives = [s.best for s in scored if not s.query.answerable]
    return auroc(positives, negatives)


def category_auroc(scored: Sequence[Scored], category: str) -> float:
    """AUROC of one answerable category (top-1 right) against all unanswerable queries."""
    positives = [s.best for s in scored if s.top1_correct and s.query.category == category]
    negatives = [s.best for s in scored if not s.query.answerable]
    return auroc(positives, negatives)


def choose_threshold(
    scored: Sequence[Scored], grid: Iterable[float] = GRID, min_refusal: float = MIN_REFUSAL
) -> tuple[float, list[Metrics]]:
    sweep = [evaluate(scored, t) for t in grid]
    eligible = [m for m in sweep if m.refusal >= min_refusal - 1e-9 and m.far_refusal == 1.0]
    if eligible:
        best = max(m.accuracy for m in eligible)
        tied = [m for m in eligible if math.isclose(m.accuracy, best)]
    else:
        most = max(m.refusal for m in sweep)
        candidates = [m for m in sweep if math.isclose(m.refusal, most)]
        best = max(m.accuracy for m in candidates)
        tied = [m for m in candidates if math.isclose(m.accuracy, best)]
    return tied[(len(tied) - 1) // 2].threshold, sweep


# -------------------------------------------------------------------------------------------- SVG
_COLOURS = {
    "direct": "#2e7d32",
    "paraphrase": "#1565c0",
    "cross_language": "#8e24aa",
    "unanswerable": "#c62828",
}


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def render_svg(scored: Sequence[Scored], threshold: float, embedder: str, metrics: Metrics, auc: float) -> str:
    """Mirrored histogram (answerable up, unanswerable down) + one dot strip per category."""
    width, left, right = 960, 150, 30
    plot_w = width - left - right
    lo, hi, bin_w = -0.1, 1.0, 0.025

    def x(score: float) -> float:
        return left + (min(max(score, lo), hi) - lo) / (hi - lo) * plot_w

    nbins = round((hi - lo) / bin_w)
    up = [0] * nbins
    down = [0] * nbins
    for s in scored:
        b = min(nbins - 1, max(0, int((s.best - lo) / bin_w)))
        (up if s.query.answerable else down)[b] += 1
    peak = max([*up, *down, 1])
    hist_top, hist_max = 70, 110
    unit = hist_max / peak
    up_h, down_h = max(max(up) * unit, 30), max(max(down) * unit, 30)
    axis_y = hist_top + up_h

    strip_top = axis_y + down_h + 45
    strip_h = 34
    height = strip_top + strip_h * len(CATEGORIES) + 70

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" '
        f'viewBox="0 0 {width} {height:.0f}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height:.0f}" fill="#ffffff"/>',
        f'<text x="{left}" y="24" font-size="16" font-weight="bold">Best-score distribution, embedder '
        f'"{_esc(embedder)}" (cosine similarity)</text>',
        f'<text x="{left}" y="44" fill="#444">threshold {threshold:.3f} · accuracy {metrics.accuracy:.0%} · '
        f"precision of known {metrics.precision:.0%} · refusal {metrics.refusal:.0%} · AUROC {auc:.3f} · "
        f"n={len(scored)}</text>",
    ]
    # borderline band and threshold line over the whole plot
    band_x0, band_x1 = x(threshold - BORDERLINE_BAND), x(threshold)
    bottom = strip_top + strip_h * len(CATEGORIES)
    out.append(
        f'<rect x="{band_x0:.1f}" y="{hist_top}" width="{band_x1 - band_x0:.1f}" '
        f'height="{bottom - hist_top:.1f}" fill="#ffb300" opacity="0.22"/>'
    )
    for b in range(nbins):
        bx = x(lo + b * bin_w) + 1
        bw = plot_w / nbins - 2
        if up[b]:
            out.append(
                f'<rect x="{bx:.1f}" y="{axis_y - up[b] * unit:.1f}" width="{bw:.1f}" '
                f'height="{up[b] * unit:.1f}" fill="#2e7d32" opacity="0.8">'
                f"<title>{up[b]} answerable</title></rect>"
            )
        if down[b]:
            out.append(
                f'<rect x="{bx:.1f}" y="{axis_y}" width="{bw:.1f}" height="{down[b] * unit:.1f}" '
                f'fill="#c62828" opacity="0.8"><title>{down[b]} unanswerable</title></rect>'
            )
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#333"/>')
    out.append(f'<text x="{left - 8}" y="{axis_y - 8:.1f}" text-anchor="end">answerable ↑</text>')
    out.append(f'<text x="{left - 8}" y="{axis_y + 18:.1f}" text-anchor="end">unanswerable ↓</text>')
    out.append(f'<text x="{left - 8}" y="{hist_top + 10}" text-anchor="end" fill="#666">{peak} queries</text>')

    # dot strips per category
    for row, cat in enumerate(CATEGORIES):
        cy = strip_top + row * strip_h + strip_h / 2
        n = sum(1 for s in scored if s.query.category == cat)
        out.append(f'<text x="{left - 8}" y="{cy + 4}" text-anchor="end">{cat.replace("_", "-")} ({n})</text>')
        out.append(f'<line x1="{left}" y1="{cy}" x2="{left + plot_w}" y2="{cy}" stroke="#ddd" stroke-dasharray="2,3"/>')
        for i, s in enumerate(q for q in scored if q.query.category == cat):
            jitter = ((i * 7) % 5 - 2) * 3
            colour = _COLOURS[cat]
            hollow = s.query.answerable and not s.top1_correct
            fill = "#ffffff" if hollow else colour
            note = " (top-1 wrong card)" if hollow else ""
            out.append(
                f'<circle cx="{x(s.best):.1f}" cy="{cy + jitter:.1f}" r="4" fill="{fill}" stroke="{colour}" '
                f'opacity="0.85"><title>{_esc(s.query.text)} → {s.best:.3f}{note}</title></circle>'
            )
    # x axis
    axis2 = bottom + 6
    out.append(f'<line x1="{left}" y1="{axis2}" x2="{left + plot_w}" y2="{axis2}" stroke="#333"/>')
    tick = lo
    while tick <= hi + 1e-9:
        tx = x(tick)
        out.append(f'<line x1="{tx:.1f}" y1="{axis2}" x2="{tx:.1f}" y2="{axis2 + 5}" stroke="#333"/>')
        out.append(f'<text x="{tx:.1f}" y="{axis2 + 18}" text-anchor="middle">{tick:.1f}</text>')
        tick = round(tick + 0.1, 10)
    tx = x(threshold)
    out.append(f'<line x1="{tx:.1f}" y1="{hist_top - 6}" x2="{tx:.1f}" y2="{bottom}" stroke="#000" stroke-width="2"/>')
    out.append(f'<text x="{tx + 4:.1f}" y="{hist_top + 2}" font-weight="bold">threshold {threshold:.3f}</text>')
    out.append(f'<text x="{band_x0 + 2:.1f}" y="{bottom - 4}" fill="#8d6e00" font-size="11">borderline band</text>')
    out.append(
        f'<text x="{left}" y="{height - 14:.0f}" fill="#555">'
        "Each dot is one query at its best score in its pool; hollow = answerable but the top-1 card "
        "is wrong. Shaded: borderline band "
        f"(threshold − {BORDERLINE_BAND:.2f}).</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------- config
def update_config(thresholds: dict[str, float], path: Path = CONFIG_PATH) -> None:
    """Rewrite only the DEFAULT_THRESHOLDS dict, keeping any key not calibrated here (e.g. openai)."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(r"^DEFAULT_THRESHOLDS: dict\[str, float\] = \{(?P<body>[^}]*)\}$", re.MULTILINE)
    match = pattern.search(text)
    if match is None:
        raise SystemExit(f"DEFAULT_THRESHOLDS not found in {path}")
    current = {k: float(v) for k, v in re.findall(r'"(\w+)":\s*([0-9.]+)', match.group("body"))}
    current.update({k: round(v, 3) for k, v in thresholds.items()})
    body = ", ".join(f'"{k}": {v}' for k, v in current.items())
    path.write_text(text[: match.start()] + f"DEFAULT_THRESHOLDS: dict[str, float] = {{{body}}}" + text[match.end() :])


# ------------------------------------------------------------------------------------------- main
def _pct(value: float) -> str:
    return f"{value:6.1%}"


@dataclass(frozen=True)
class BandStats:
    """What the borderline band [threshold - band, threshold) holds (role voice checks these)."""

    answerable_rescuable: int  # answerable, top-1 right, best score in the band
    unanswerable_in_band: int  # unanswerable with best score in the band (the model must turn them down)


def band_stats(scored: Sequence[Scored], threshold: float, band: float = BORDERLINE_BAND) -> BandStats:
    in_band = [s for s in scored if threshold - band <= s.best < threshold]
    return BandStats(sum(s.top1_correct for s in in_band), sum(not s.query.answerable for s in in_band))


@dataclass(frozen=True)
class PresetRow:
    scenario: str
    lang: str
    question: str
    best: dict[str, tuple[float, str]]  # role -> (best score over that role's own cards, topic)


def preset_matrix(embedder: Embeddings) -> list[PresetRow]:
    """Each preset question against each role's own opening cards (the board starts empty)."""
    rows = []
    for (scenario_id, lang), scenario in sorted(load_builtin_scenarios().items()):
        by_role = scenario.cards.by_role()
        texts = [q for q in scenario.preset_questions] + [c.content for cs in by_role.values() for c in cs]
        vectors = embed_texts(embedder, texts)
        for question in scenario.preset_questions:
            best = {}
            for role, cards in by_role.items():
                score, topic = max((cosine(vectors[question], vectors[c.content]), c.topic) for c in cards)
                best[role] = (score, topic)
            rows.append(PresetRow(scenario_id, lang, question, best))
    return rows


def report(console: Console, name: str, scored: Sequence[Scored], chosen: float, sweep: list[Metrics]) -> Metrics:
    from rich.table import Table

    m = next(x for x in sweep if math.isclose(x.threshold, chosen))
    auc = separation_auroc(scored)
    top1 = {c: sum(s.top1_correct for s in scored if s.query.category == c) / max(1, m.counts[c]) for c in ANSWERABLE}
    table = Table(title=f"[{name}] sweep (* = chosen)", show_lines=False)
    cols = (
        "threshold",
        "accuracy",
        "known prec",
        "known recall",
        *ANSWERABLE,
        "refused",
        "off-topic",
        "near",
    )
    for col in cols:
        table.add_column(col, justify="right")
    for x in sweep:
        mark = "*" if math.isclose(x.threshold, chosen) else ""
        table.add_row(
            f"{mark}{x.threshold:.3f}",
            _pct(x.accuracy),
            _pct(x.precision),
            _pct(x.known_recall),
            *(_pct(x.recall[c]) for c in ANSWERABLE),
            _pct(x.refusal),
            _pct(x.far_refusal),
            _pct(x.near_refusal),
        )
    console.print(table)

    cats = Table(title=f"[{name}] at threshold {chosen:.3f}")
    for col in ("category", "n", "recall / refusal", "top-1 right (no threshold)"):
        cats.add_column(col, justify="right")
    for c in CATEGORIES:
        cats.add_row(c, str(m.counts[c]), _pct(m.recall[c]), _pct(top1[c]) if c in top1 else "-")
    console.print(cats)

    wrong = [s for s in scored if not s.correct_at(chosen)]
    if wrong:
        console.print(f"[{name}] misclassified at {chosen:.3f}:")
        for s in sorted(wrong, key=lambda s: (s.query.category, -s.best)):
            if not s.query.answerable:
                why = f"false known ({s.top})"
            else:
                why = "below threshold" if s.best < chosen else f"wrong top-1 ({s.top})"
            console.print(f"  {s.query.category:14} {s.best:6.3f}  {s.query.text}  → {why}", highlight=False)
    band = band_stats(scored, chosen)
    console.print(
        f"[{name}] borderline band [{chosen - BORDERLINE_BAND:.3f}, {chosen:.3f}): "
        f"{band.answerable_rescuable} answerable queries with the right top-1 (role voice can confirm them), "
        f"{band.unanswerable_in_band} unanswerable (role voice must turn them down)",
        highlight=False,
    )
    console.print(
        f"[bold][{name}][/bold] threshold={chosen:.3f} accuracy={m.accuracy:.1%} "
        f"precision(known)={m.precision:.1%} recall(known)={m.known_recall:.1%} "
        f"refusal={m.refusal:.1%} (off-topic {m.far_refusal:.0%}, near {m.near_refusal:.1%}) AUROC={auc:.3f} "
        + " ".join(f"{c}={m.recall[c]:.1%}" for c in ANSWERABLE)
        + " | AUROC by category: "
        + " ".join(f"{c}={category_auroc(scored, c):.3f}" for c in ANSWERABLE),
        highlight=False,
    )
    return m


def report_presets(console: Console, name: str, rows: list[PresetRow], threshold: float) -> None:
    from rich.table import Table

    table = Table(title=f"[{name}] preset questions × roles' own cards (bold = known at {threshold:.3f})")
    for col in ("scenario", "question", *ROLES):
        table.add_column(col)
    for row in rows:
        cells = []
        for role in ROLES:
            score, topic = row.best[role]
            cell = f"{score:.2f} {topic}"
            if score >= threshold:
                cell = f"[bold green]{cell}[/]"
            elif score >= threshold - BORDERLINE_BAND:
                cell = f"[yellow]{cell}[/]"
            cells.append(cell)
        table.add_row(f"{row.scenario}.{row.lang}", row.question, *cells)
    console.print(table)


def main(argv: Sequence[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", nargs="+", choices=EMBEDDERS, default=list(EMBEDDERS))
    parser.add_argument("--set", type=Path, default=SET_PATH, help="labelled retrieval set (YAML)")
    parser.add_argument("--img-dir", type=Path, default=IMG_DIR, help="where to write threshold-<embedder>.svg")
    parser.add_argument("--min-refusal", type=float, default=MIN_REFUSAL)
    parser.add_argument("--no-svg", action="store_true", help="do not write the SVG charts")
    parser.add_argument("--update-config", action="store_true", help="write DEFAULT_THRESHOLDS in config.py")
    args = parser.parse_args(argv)

    console = Console()
    data = load_retrieval_set(args.set)
    n_q = {c: sum(q.category == c for q in data.queries) for c in CATEGORIES}
    n_near = sum(q.near for q in data.queries)
    console.print(
        f"retrieval set: {len(data.cards)} cards, {len(data.queries)} queries {n_q} "
        f"({n_near} of the unanswerable are near-topic)",
        highlight=False,
    )

    scored_by: dict[str, list[Scored]] = {}
    presets_by: dict[str, list[PresetRow]] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        for name in args.embedders:
            task = progress.add_task(f"embedding ({name})", total=count_texts(data))
            embedder = make_embedder(name)
            scored_by[name] = score_set(data, embedder, lambda n, task=task: progress.advance(task, n))
            presets_by[name] = preset_matrix(embedder)

    results: dict[str, tuple[float, Metrics, float]] = {}
    for name, scored in scored_by.items():
        chosen, sweep = choose_threshold(scored, GRID, args.min_refusal)
        metrics = report(console, name, scored, chosen, sweep)
        report_presets(console, name, presets_by[name], chosen)
        auc = separation_auroc(scored)
        results[name] = (chosen, metrics, auc)
        if not args.no_svg:
            args.img_dir.mkdir(parents=True, exist_ok=True)
            svg_path = args.img_dir / f"threshold-{name}.svg"
            svg_path.write_text(render_svg(scored, chosen, name, metrics, auc), encoding="utf-8")
            shown = svg_path.relative_to(REPO) if svg_path.is_relative_to(REPO) else svg_path
            console.print(f"wrote {shown}")

    console.rule("summary")
    for name, (chosen, m, auc) in results.items():
        console.print(
            f"{name:8} threshold {chosen:.3f} | accuracy {m.accuracy:.1%} | known precision {m.precision:.1%}"
            f" recall {m.known_recall:.1%} | direct {m.recall['direct']:.1%} paraphrase "
            f"{m.recall['paraphrase']:.1%} cross-language {m.recall['cross_language']:.1%} | refused "
            f"{m.refusal:.1%} (off-topic {m.far_refusal:.0%}, near {m.near_refusal:.1%}) | AUROC {auc:.3f}",
            highlight=False,
        )
    if args.update_config:
        update_config({name: chosen for name, (chosen, _, _) in results.items()})
        console.print(f"updated DEFAULT_THRESHOLDS in {CONFIG_PATH.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
