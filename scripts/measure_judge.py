"""How often the configured model's verdict on an uncertain candidate agrees with the labels (issue 23).

With a model configured, every uncertain candidate is given to it as a BORDERLINE item for a strict true/false
verdict (docs/retrieval.md). This script asks a real OpenAI-compatible server exactly as the game does (the
production `RoleVoiceResponder`, its prompt, reply parsing and validation) for every question of the labelled
set's test half (and the blind set, with `--blind`) whose best candidate is uncertain in evidence mode, and
compares each verdict with the label: true exactly when the card is the one that answers the question.

    .venv/bin/python scripts/measure_judge.py --base-url http://127.0.0.1:8088/v1 --model smollm2 --limit 40

Reports per language: items judged, agreement, how often the model confirmed, and the replies that failed
validation (the game then falls back to evidence mode, "uncertain"). Prints no question or card text.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bureau.answering.base import AnswerRequest
from bureau.answering.role_voice.packet import build_packet
from bureau.answering.role_voice.reply import MalformedOutputError, parse_reply
from bureau.answering.role_voice.responder import RoleVoiceResponder
from bureau.config import Settings
from bureau.memory.relevance import load_policy
from bureau.memory.types import Candidate
from bureau.retrieval_eval import (
    BLIND_SET_PATH,
    LANGUAGES,
    Probe,
    Scored,
    build_scorer,
    load_blind,
    load_set,
    score_set,
)
from bureau.scope.relevance import RelevancePolicy
from bureau.scope.vocabulary import Certainty


class RecordingResponder(RoleVoiceResponder):
    """The production responder, keeping the model's last raw reply: its verdicts are read even when the whole
    reply then fails validation (the game falls back to evidence mode and uses none of them)."""

    last: Any = None

    async def _call_model(self, request: AnswerRequest, packet: Any) -> Any:
        self.last = None
        self.last = await super()._call_model(request, packet)
        return self.last


def raw_verdicts(responder: RecordingResponder, request: AnswerRequest) -> dict[str, bool] | None:
    """card id -> the model's verdict as it wrote it (strict: a ref without `true` is a no); None: no parsable
    reply at all."""
    if responder.last is None:
        return None
    try:
        reply = parse_reply(responder.last)
    except MalformedOutputError:
        return None
    refs = {item.ref: item.card_id for item in build_packet(request).borderline}
    return {card_id: reply.borderline.get(ref) is True for ref, card_id in refs.items()}


def uncertain_items(scored: list[Scored], policy: RelevancePolicy) -> Iterator[tuple[Probe, tuple[Candidate, ...]]]:
    """(probe, candidates judged uncertain, best first) for every question with no known candidate."""
    for s in scored:
        lang = s.probe.language
        judged = sorted(
            ((policy.judge(c.signals, lang), c) for c in s.candidates if c.card.may_be_evidence),
            key=lambda jc: (-jc[0].score, -jc[1].score, jc[1].card.id),
        )
        if any(j.verdict == Certainty.KNOWN for j, _ in judged):
            continue
        borderline = tuple(c for j, c in judged if j.verdict == Certainty.UNCERTAIN)
        if borderline:
            yield s.probe, borderline


async def measure(args: argparse.Namespace) -> None:
    settings = Settings(
        llm_base_url=args.base_url,
        llm_model=args.model,
        llm_api_key=SecretStr("not-needed"),
        llm_timeout_s=args.timeout,
        llm_request_budget=100_000,
        llm_max_tokens=args.max_tokens,
        data_dir=Path("/tmp/measure-judge"),
    )
    responder = RecordingResponder(settings, degraded_after=1_000_000)
    policy = load_policy("local")
    assert policy is not None
    scorer, embedder = build_scorer("local")
    sets = []
    if not args.no_labelled:
        sets.append(
            ("labelled test half", [s for s in score_set(load_set(), scorer, embedder) if s.probe.split == "test"])
        )
    if args.blind:
        sets.append(("blind set", score_set(load_blind(Path(args.blind)), scorer, embedder)))
    for name, scored in sets:
        per_lang: dict[str, Counter[str]] = defaultdict(Counter)
        items = list(uncertain_items(scored, policy))
        taken: Counter[str] = Counter()
        started = time.perf_counter()
        for probe, borderline in items:
            lang = probe.language
            if taken[lang] >= args.limit:
                continue
            taken[lang] += 1
            request = AnswerRequest(probe.case_id, probe.role, probe.text, lang, hits=(), borderline=borderline)
            answer = await responder.answer(request)
            raw = raw_verdicts(responder, request)
            counts = per_lang[lang]
            counts["questions"] += 1
            if answer.fallback_reason is not None:
                counts[f"fallback:{answer.fallback_reason}"] += 1
            for candidate in borderline:
                label = candidate.card.id == probe.expected
                verdict = answer.borderline_verdicts.get(candidate.card.id)
                counts["items"] += 1
                counts["label_true"] += label
                if raw is not None and candidate.card.id in raw:
                    counts["raw_judged"] += 1
                    counts["raw_agree"] += raw[candidate.card.id] == label
                    counts["raw_confirmed"] += raw[candidate.card.id]
                if verdict is None:
                    counts["no_verdict"] += 1
                    continue
                counts["judged"] += 1
                counts["confirmed"] += verdict
                counts["agree"] += verdict == label
                counts["agree_on_true"] += verdict and label
        elapsed = time.perf_counter() - started
        print(f"{name}: {sum(taken.values())} questions with an uncertain best candidate, {elapsed:.0f} s")
        for lang in LANGUAGES:
            c = per_lang[lang]

            def pct(part: int, whole: int) -> str:
                return f"{100 * part / whole:.1f} %" if whole else "–"

            fallbacks = ", ".join(
                f"{k.split(':', 1)[1]} {v}" for k, v in sorted(c.items()) if k.startswith("fallback:")
            )
            print(
                f"  {lang}: {c['questions']} questions, {c['items']} uncertain candidates ({c['label_true']} truly "
                f"answer); verdicts on {c['judged']}: agreement {pct(c['agree'], c['judged'])}, confirmed "
                f"{c['confirmed']} (right {c['agree_on_true']}); no verdict {c['no_verdict']}; raw replies (before "
                f"validation) parsable for {c['raw_judged']}: agreement "
                f"{pct(c['raw_agree'], c['raw_judged'])}, confirmed {c['raw_confirmed']}"
                + (f"; fallbacks: {fallbacks}" if fallbacks else "")
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8088/v1")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--limit", type=int, default=40, help="questions per language and set")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--blind", nargs="?", const=str(BLIND_SET_PATH), default=None, help="also the blind set")
    parser.add_argument("--no-labelled", action="store_true", help="leave the labelled set's test half out")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
