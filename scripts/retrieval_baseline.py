"""The "before" figures of `bureau eval-retrieval`: the scorer as it stood at one commit, measured on today's sets.

Each round of issue 23 compares its scorer with main's at the start of the round (round two: 9745252; round
three: 39339f5, the default). That code is taken from git (`git archive <commit> backend` into a temporary
folder) and run in a child Python with that folder first on the path, so the old coverage rule, word lists and
model file score the same set files; the figures per set and language go into
`docs/data/retrieval-baseline.json`, which `make eval` prints as the "before" columns.

    .venv/bin/python scripts/retrieval_baseline.py --sets test,blind1,blind2    # the development sets
    .venv/bin/python scripts/retrieval_baseline.py --sets blind3                # once, with the final scorer

Sets: `test` (the labelled set's test half), `blind1` and `blind2` (blind sets 1 and 2: development sets,
fitting data since round three), `blind3` (blind set 3: only when the scorer of this branch is final; scoring
it is a one-time event, docs/retrieval.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE_PATH = REPO / "docs" / "data" / "retrieval-baseline.json"
START_OF_ROUND = "39339f5"  # round three (round two's "before" was 9745252)
SET_FILES = {
    "test": REPO / "tests" / "data" / "honest_retrieval_set.yaml",
    "blind1": REPO / "tests" / "data" / "blind_retrieval_set.yaml",
    "blind2": REPO / "tests" / "data" / "blind_retrieval_set_2.yaml",
    "blind3": REPO / "tests" / "data" / "blind_retrieval_set_3.yaml",
}

# Runs inside the old code: only names that existed at the start of the round.
_CHILD = """
import json, sys
from pathlib import Path
from bureau.evaluation import build_scorer, evaluate, load_blind, load_set, score_set
from bureau.memory.relevance import load_policy
name, path = sys.argv[1], Path(sys.argv[2])
scorer, embed = build_scorer("local")
policy = load_policy("local")
if name == "test":
    report = evaluate(score_set(load_set(path), scorer, embed), policy, "test", "local")
else:
    report = evaluate(score_set(load_blind(path), scorer, embed), policy, "blind", "local")
print("FIGURES " + json.dumps({lang: report.by_language[lang] for lang in ("en", "zh")}))
"""


def export(commit: str, into: Path) -> Path:
    """The commit's backend/ folder, unpacked under `into`."""
    archive = subprocess.run(["git", "archive", commit, "backend"], cwd=REPO, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "backend"


def measure(backend: Path, name: str) -> dict[str, dict[str, float]]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, name, str(SET_FILES[name])],
        env={"PYTHONPATH": str(backend), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        check=True,
        capture_output=True,
        text=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("FIGURES "))
    return json.loads(line.removeprefix("FIGURES "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default=START_OF_ROUND)
    parser.add_argument("--sets", default="test,blind1", help="comma-separated: test, blind1, blind2, blind3")
    args = parser.parse_args()
    names = [n for n in args.sets.split(",") if n]
    unknown = sorted(set(names) - set(SET_FILES))
    if unknown:
        raise SystemExit(f"unknown set(s): {', '.join(unknown)}")
    stored = json.loads(BASELINE_PATH.read_text("utf-8")) if BASELINE_PATH.exists() else {}
    stored.setdefault("about", "Figures of the scorer at `commit` on today's sets (scripts/retrieval_baseline.py).")
    stored["commit"] = args.commit
    with tempfile.TemporaryDirectory() as tmp:
        backend = export(args.commit, Path(tmp))
        for name in names:
            print(f"Scoring {name} with the scorer of {args.commit} …", flush=True)
            stored.setdefault("sets", {})[name] = measure(backend, name)
    BASELINE_PATH.parent.mkdir(parents=True, exist_ok=True)
    BASELINE_PATH.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n", "utf-8")
    print(f"Wrote {BASELINE_PATH}")


if __name__ == "__main__":
    main()
