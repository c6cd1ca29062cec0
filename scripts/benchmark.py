"""Measure the game's hot paths over real HTTP (in-process ASGI app, real PowerMem + embedded seekdb).

Prints p50/p95/max per operation and writes an SVG chart (docs/img/benchmark.svg by default).
Numbers, not assertions: run it on the machine you care about.

    .venv/bin/python scripts/benchmark.py [--rounds 40] [--concurrency 8] [--out docs/img/benchmark.svg]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bureau.api.app import create_app
from bureau.config import Settings

QUESTIONS = [
    ("detective", "What is the safe combination?"),
    ("informant", "What is the safe combination?"),
    ("suspect", "What is your alibi for the night of the break-in?"),
    ("detective", "Who won the football match?"),
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def timed(samples: list[float], call: Callable[[], Awaitable[httpx.Response]], ok: tuple[int, ...]) -> Any:
    started = time.perf_counter()
    response = await call()
    samples.append((time.perf_counter() - started) * 1000)
    if response.status_code not in ok:
        raise RuntimeError(f"unexpected status {response.status_code}")
    return response.json() if response.content else None


async def run(rounds: int, concurrency: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {
        k: [] for k in ("create case", "whisper", "interrogate", f"interrogate x{concurrency}", "publish", "snapshot")
    }
    with tempfile.TemporaryDirectory(prefix="bureau-bench-") as data:
        app = create_app(Settings(_env_file=None, data_dir=Path(data)))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=120) as http:
                with Progress() as progress:
                    task = progress.add_task("Benchmarking", total=rounds)
                    for i in range(rounds):
                        await one_round(http, results, i, concurrency)
                        progress.advance(task)
    return results


async def one_round(http: httpx.AsyncClient, results: dict[str, list[float]], i: int, concurrency: int) -> None:
    case = await timed(
        results["create case"], lambda: http.post("/api/cases", json={"scenario_id": "safe-combination"}), (201,)
    )
    case_id = case["case"]["id"]
    base = f"/api/cases/{case_id}"
    await timed(
        results["whisper"],
        lambda: http.post(base + "/whispers", json={"role": "suspect", "text": f"Crate {i} went to the docks."}),
        (201,),
    )
    role, question = QUESTIONS[i % len(QUESTIONS)]
    await timed(
        results["interrogate"],
        lambda: http.post(base + "/interrogations", json={"role": role, "question": question}),
        (200,),
    )
    started = time.perf_counter()
    await asyncio.gather(
        *[
            http.post(base + "/interrogations", json={"role": r, "question": q})
            for r, q in (QUESTIONS * concurrency)[:concurrency]
        ]
    )
    results[f"interrogate x{concurrency}"].append((time.perf_counter() - started) * 1000)
    secret = next(c for c in case["spaces"]["informant"] if "0427" in c["content"])
    await timed(
        results["publish"],
        lambda: http.post(base + "/publications", json={"role": "informant", "card_id": secret["id"]}),
        (201,),
    )
    await timed(results["snapshot"], lambda: http.get(base), (200,))
    await http.delete(base)


def svg_chart(results: dict[str, list[float]], title: str) -> str:
    """Horizontal bars: p50 solid, p95 lighter, max as a tick."""
    width, row, left, top = 820, 38, 170, 56
    height = top + row * len(results) + 40
    scale_max = max(max(v) for v in results.values()) * 1.1
    x = lambda ms: left + (width - left - 130) * ms / scale_max  # noqa: E731
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif"'
        ' font-size="13">',
        '<rect width="100%" height="100%" fill="#fff"/>',
        f'<text x="16" y="26" font-size="16" font-weight="bold">{title}</text>',
        '<text x="16" y="44" fill="#555">p50 (dark), p95 (light), max (tick); milliseconds</text>',
    ]
    for index, (name, values) in enumerate(results.items()):
        y = top + index * row
        p50, p95, worst = percentile(values, 0.5), percentile(values, 0.95), max(values)
        parts += [
            f'<text x="16" y="{y + 18}">{name}</text>',
            f'<rect x="{left}" y="{y + 4}" width="{x(p95) - left:.1f}" height="20" fill="#9ecae1"/>',
            f'<rect x="{left}" y="{y + 4}" width="{x(p50) - left:.1f}" height="20" fill="#3182bd"/>',
            f'<line x1="{x(worst):.1f}" x2="{x(worst):.1f}" y1="{y + 2}" y2="{y + 26}" stroke="#333"/>',
            f'<text x="{max(x(p95), x(worst)) + 6:.1f}" y="{y + 18}" fill="#333">'
            f"{p50:.0f} / {p95:.0f} / {worst:.0f}</text>",
        ]
    parts.append("</svg>")
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("docs/img/benchmark.svg"))
    args = parser.parse_args()
    results = asyncio.run(run(args.rounds, args.concurrency))
    table = Table(title=f"{args.rounds} rounds on {platform.machine()}, {platform.python_version()}")
    for column in ("operation", "n", "p50 ms", "p95 ms", "max ms", "mean ms"):
        table.add_column(column, justify="right" if column != "operation" else "left")
    for name, values in results.items():
        table.add_row(
            name,
            str(len(values)),
            f"{percentile(values, 0.5):.1f}",
            f"{percentile(values, 0.95):.1f}",
            f"{max(values):.1f}",
            f"{statistics.fmean(values):.1f}",
        )
    Console().print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg_chart(results, "Bureau hot paths: real PowerMem + embedded seekdb, in-process HTTP"))
    print(f"chart: {args.out}")


if __name__ == "__main__":
    main()
