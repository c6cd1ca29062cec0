"""Which gate keeps an answerable question from its right outcome (docs/retrieval.md, "Diagnosis").

For every direct / follow-up question not known with the right card, and every paraphrase whose right card is
neither known nor uncertain, on the labelled set's test half and on blind sets 1 and 2 (development sets since
rounds two and three), the first gate that fails:

- `model: right card not top`  — without the rule, the best-judged candidate is another card;
- `model: below cut`           — the right card is top but its score is below the known (paraphrase:
                                  uncertain) cut;
- `contradiction`, `focus`, `attribute`, `no focus match` — the coverage rule held it back.

And for every near-topic question answered known, its kind. Prints counts only, unless `--show` (for study on
the development sets; blind set 3, the one scored once, is never passed here).

    .venv/bin/python scripts/diagnose_retrieval.py [--show]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from bureau.evaluation import build_scorer, judge, load_blind, load_set, score_set, without_rule
from bureau.evaluation.scoring import Scored
from bureau.evaluation.sets import BLIND_SET_2_PATH, BLIND_SET_PATH, SET_PATH
from bureau.memory.relevance import load_policy
from bureau.scope.relevance import LogisticPolicy

GATES = (
    ("rule_contradiction", "contradiction"),
    ("rule_no_focus", "no focus match"),
    ("rule_focus_missing", "focus"),
    ("rule_attribute_missing", "attribute"),
)


def gate(scored: Scored, policy: LogisticPolicy, want_known: bool) -> str:
    """The first gate that fails for an answerable question (see the module docstring)."""
    bare = judge(without_rule([scored])[0], policy)
    if bare.best_card != scored.probe.expected:
        return "model: right card not top"
    cuts = policy.cuts(scored.probe.language)
    if bare.best_score < (cuts.known if want_known else cuts.uncertain):
        return "model: below cut"
    right = next(c for c in scored.candidates if c.card.id == scored.probe.expected)
    failed = [label for name, label in GATES if right.signals.get(name, 0.0) >= 1.0]
    if not want_known:
        failed = [f for f in failed if f in ("no focus match", "contradiction")]
    return " + ".join(failed) or "other candidate outranks it after the rule"


def diagnose(name: str, scored: list[Scored], policy: LogisticPolicy, show: bool) -> None:
    for lang in ("en", "zh"):
        counts: Counter[tuple[str, str]] = Counter()
        for s in scored:
            if s.probe.language != lang:
                continue
            outcome = judge(s, policy)
            kind = s.probe.kind
            if kind in ("direct", "followup") and not outcome.correct_known:
                label = gate(s, policy, want_known=True)
            elif kind == "paraphrase" and not (outcome.right_card and outcome.verdict != "unknown"):
                label = gate(s, policy, want_known=False)
            elif kind == "near" and outcome.verdict == "known":
                label = f"known ({s.probe.near_kind or 'near'})"
            else:
                continue
            counts[kind, label] += 1
            if show:
                best = next((c for c in s.candidates if c.card.id == (s.probe.expected or outcome.best_card)), None)
                gaps = best.gaps if best else ()
                content = best.card.content if best else ""
                print(f"  [{name} {lang} {kind}] {label}: {s.probe.text} | {content} | gaps={gaps}")
        print(f"{name} {lang.upper()}:")
        for (kind, label), n in sorted(counts.items()):
            print(f"  {kind:10} {label:40} {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each failing question (development sets only)")
    parser.add_argument("--embedder", default="local")
    args = parser.parse_args()
    policy = load_policy(args.embedder)
    assert isinstance(policy, LogisticPolicy)
    scorer, embed = build_scorer(args.embedder)
    labelled = score_set(load_set(SET_PATH), scorer, embed)
    diagnose("test half", [s for s in labelled if s.probe.split == "test"], policy, args.show)
    for name, path in (("blind set 1 (seen)", BLIND_SET_PATH), ("blind set 2 (seen)", BLIND_SET_2_PATH)):
        diagnose(name, score_set(load_blind(Path(path)), scorer, embed), policy, args.show)


if __name__ == "__main__":
    main()
