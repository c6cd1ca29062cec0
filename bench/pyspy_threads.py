"""Where a profiled server's threads spent a window (issue 36.4): reads py-spy's raw output
(`py-spy record --threads -f raw`) and prints, per thread, how much of a core it was busy and the frames
nearest the top of its stacks.

    .venv/bin/python bench/pyspy_threads.py /tmp/room-profile/all.txt --seconds 60 --rate 100
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("--seconds", type=float, required=True, help="how long py-spy recorded")
    parser.add_argument("--rate", type=float, default=100, help="py-spy's samples per second")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    busy: Counter[str] = Counter()
    frames: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for line in args.raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        thread, *calls = stack.split(";")
        busy[thread] += int(count)
        frames[thread][calls[-1] if calls else "(none)"] += int(count)
    for thread, samples in busy.most_common():
        print(f"{thread}: {samples / args.seconds / args.rate:.2f} of a core ({samples} samples)")
        for frame, n in frames[thread].most_common(args.top):
            print(f"  {100 * n / samples:5.1f}%  {frame}")


if __name__ == "__main__":
    main()
