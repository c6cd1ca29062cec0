"""How often the role voice *speaks* with the packaged local model: the 11 English preset questions of the three
scenarios, asked of all 3 roles (33 answers), through the real game (in-process app over real HTTP, PowerMem
over embedded seekdb, the SQL ledger) against llama.cpp's server with SmolLM2-135M-Instruct at temperature 0
and a fixed seed.

Prints, per certainty (known / uncertain / unknown, as retrieval decided it), how many answers were spoken by
the role voice and the fallback reasons of the rest, then the latency of the spoken answers. Numbers, not
assertions (tests/e2e/test_role_voice_real_server.py holds a floor on a subset).

    .venv/bin/python scripts/role_voice_rate.py                 # starts the local model server itself
    .venv/bin/python scripts/role_voice_rate.py --base-url URL  # an OpenAI-compatible server already running
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import yaml

import bureau
from bureau.api.app import create_app
from bureau.config import Settings

ROLES = ("detective", "informant", "suspect")
SCENARIOS = ("safe-combination", "allergy", "mole")
SEED = 42
CERTAINTIES = ("known", "uncertain", "unknown")


def preset_questions(scenario: str) -> list[str]:
    path = Path(bureau.__file__).parent / "game" / "scenarios" / f"{scenario}.en.yaml"
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["preset_questions"])


def role_voice_settings(data: Path, base_url: str, timeout_s: float) -> Settings:
    wanted: dict[str, Any] = {
        "llm_base_url": base_url,
        "llm_model": "smollm2",
        "llm_timeout_s": timeout_s,
        "llm_max_tokens": 96,
        "llm_temperature": 0.0,
        "llm_seed": SEED,
        "llm_stream": True,
        "llm_languages": "en",
    }
    # Only the settings this checkout has (the script also measures older code, for a before / after).
    known = {k: v for k, v in wanted.items() if k in Settings.model_fields}
    return Settings(_env_file=None, data_dir=data, **known)


async def measure(base_url: str, timeout_s: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bureau-rv-") as data:
        app = create_app(role_voice_settings(Path(data), base_url, timeout_s))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=120) as http:
                for scenario in SCENARIOS:
                    created = await http.post("/api/cases", json={"scenario_id": scenario})
                    created.raise_for_status()
                    case_id = created.json()["case"]["id"]
                    for question in preset_questions(scenario):
                        for role in ROLES:
                            started = time.perf_counter()
                            reply = await http.post(
                                f"/api/cases/{case_id}/interrogations", json={"role": role, "question": question}
                            )
                            reply.raise_for_status()
                            body = reply.json()
                            rows.append(
                                {
                                    "scenario": scenario,
                                    "role": role,
                                    "question": question,
                                    "certainty": body["certainty"],
                                    "responder": body["responder"],
                                    "fallback_reason": body["fallback_reason"],
                                    "seconds": time.perf_counter() - started,
                                    "answer": body["answer"],
                                }
                            )
                            mark = "spoken" if body["responder"] == "role_voice" else body["fallback_reason"]
                            print(f"  {scenario:17} {role:9} {body['certainty']:9} {mark:32} {question}", flush=True)
                    await http.delete(f"/api/cases/{case_id}")
    return rows


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"answers": len(rows), "by_certainty": {}}
    print()
    print(f"{'certainty':10} {'answers':>7} {'spoken':>7} {'rate':>6}  fallback reasons")
    for certainty in (*CERTAINTIES, "all"):
        group = [r for r in rows if certainty in ("all", r["certainty"])]
        if not group:
            continue
        spoken = sum(r["responder"] == "role_voice" for r in group)
        reasons = Counter(r["fallback_reason"] for r in group if r["responder"] != "role_voice")
        rate = spoken / len(group)
        summary["by_certainty"][certainty] = {"answers": len(group), "spoken": spoken, "reasons": dict(reasons)}
        listed = ", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "-"
        print(f"{certainty:10} {len(group):7} {spoken:7} {rate:6.0%}  {listed}")
    seconds = sorted(r["seconds"] for r in rows)
    voiced = sorted(r["seconds"] for r in rows if r["responder"] == "role_voice")
    summary["median_s"] = statistics.median(seconds)
    summary["p95_s"] = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
    summary["first_s"] = rows[0]["seconds"]
    print(
        f"\nper answer (question to reply, every answer): median {summary['median_s']:.2f} s, "
        f"p95 {summary['p95_s']:.2f} s, max {seconds[-1]:.2f} s; first answer {summary['first_s']:.2f} s"
    )
    if voiced:
        summary["spoken_median_s"] = statistics.median(voiced)
        print(f"spoken answers: median {summary['spoken_median_s']:.2f} s, max {voiced[-1]:.2f} s")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server already running (default: start one)")
    parser.add_argument("--timeout", type=float, default=8.0, help="BUREAU_LLM_TIMEOUT_S (default 8, as shipped)")
    parser.add_argument("--json", type=Path, help="also write the rows and the summary here")
    args = parser.parse_args()
    if args.base_url:
        rows = asyncio.run(measure(args.base_url, args.timeout))
    else:
        from bureau.answering.local_model import LocalModelServer

        with LocalModelServer() as server:
            print(f"local model server: loaded in {server.load_s:.1f} s, warmed in {server.warm_s:.2f} s")
            rows = asyncio.run(measure(server.base_url, args.timeout))
    summary = report(rows)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
