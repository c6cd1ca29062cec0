"""Precision and recall of the content screening on the labelled set, and what screening costs per text.

    .venv/bin/python scripts/eval_screening.py [--set tests/data/screening_set.yaml] [--rounds 20]

A positive counts as found when its own reason code is raised; precision is over every text flagged with
any reason. Numbers, not assertions (tests/unit/scope/test_screening_set.py holds the rules that must not break).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

from bureau.scope.content_policy import screen_text

DEFAULT_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "screening_set.yaml"


def load(path: Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data["positives"], data["negatives"]


def evaluate(positives: list[dict[str, str]], negatives: list[dict[str, str]]) -> int:
    found, total, wrong_reason = Counter(), Counter(), []
    flagged_positive = 0
    for item in positives:
        reasons = screen_text(item["text"])
        total[item["flag"]] += 1
        flagged_positive += bool(reasons)
        if item["flag"] in reasons:
            found[item["flag"]] += 1
        else:
            wrong_reason.append(f"  missed ({item['flag']}, got {reasons or 'clean'}): {item['text']}")
    false_positives = [
        f"  rejected look-alike {screen_text(n['text'])}: {n['text']}" for n in negatives if screen_text(n["text"])
    ]
    flagged = flagged_positive + len(false_positives)
    precision = flagged_positive / flagged if flagged else 1.0
    recall = sum(found.values()) / len(positives)
    by_lang = Counter(item["lang"] for item in positives + negatives)
    print(f"screening set: {len(positives)} positives, {len(negatives)} look-alike negatives ({dict(by_lang)})")
    print(f"precision {precision:.3f}   recall {recall:.3f}   look-alikes rejected {len(false_positives)}")
    for reason in sorted(total):
        print(f"  {reason:<18} recall {found[reason]}/{total[reason]}")
    for line in wrong_reason + false_positives:
        print(line)
    return len(false_positives)


def cost(texts: list[str], rounds: int) -> None:
    per_text_us = []
    for _ in range(rounds):
        for text in texts:
            started = time.perf_counter()
            screen_text(text)
            per_text_us.append((time.perf_counter() - started) * 1e6)
    per_text_us.sort()
    p95 = per_text_us[int(0.95 * (len(per_text_us) - 1))]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"cost per text: median {statistics.median(per_text_us):.0f} µs, p95 {p95:.0f} µs, "
        f"max {per_text_us[-1]:.0f} µs over {len(per_text_us)} calls (load average {load:.2f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    positives, negatives = load(args.set)
    rejected = evaluate(positives, negatives)
    cost([item["text"] for item in positives + negatives], args.rounds)
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
