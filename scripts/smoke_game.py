"""Play one short game against a running `bureau serve`, as a newcomer would after `make run`.

    python scripts/smoke_game.py --url http://127.0.0.1:8000

The store's health watched for a while first, then the console page, a new case, a whisper, questions of
the role told and of another role, a publish, and the same question again (now answered from the board).
Prints one line per step; exits 1 at the first step whose answer is not what the game promises. Used by
`.ci/run` (scripts/readme_smoke.sh) and by tests/e2e/test_defaults.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import httpx

WHISPER = {"role": "suspect", "text": "The spare key to the vault hangs behind the clock in the library."}
WHISPER_QUESTION = "Where does the spare key to the vault hang?"
SAFE_QUESTION = "What is the safe combination?"
SECRET = "0427"  # what the informant knows in the safe-combination scenario


class SmokeFailure(AssertionError):
    pass


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise SmokeFailure(what)


def step(name: str, started: float, detail: str) -> None:
    print(f"  {name:<34} {detail}  ({(time.monotonic() - started) * 1000:.0f} ms)", flush=True)


def ask(http: httpx.Client, case_id: str, role: str, question: str) -> dict[str, Any]:
    started = time.monotonic()
    answer = http.post(f"/api/cases/{case_id}/interrogations", json={"role": role, "question": question})
    expect(answer.status_code == 200, f"interrogation of the {role} answered {answer.status_code}")
    body: dict[str, Any] = answer.json()
    step(f"ask the {role}", started, f"{body['certainty']:<9} {body['answer'][:70]!r}")
    return body


def watch_health(http: httpx.Client, seconds: float) -> None:
    """The store must stay up past the supervisor's next pings: a store that dies seconds after "ready" (as a
    relative data dir once made it) looks fine to a game played at once."""
    started = time.monotonic()
    pings = 0
    while time.monotonic() - started < seconds:
        memory = http.get("/api/health").json()["memory"]
        expect(memory["status"] == "up", f"the memory store went {memory['status']} ({memory.get('reason')})")
        pings += 1
        time.sleep(0.5)
    step(f"health for {seconds:.0f} s", started, f"memory up in all {pings} checks")


def play(url: str, watch_s: float = 0.0) -> list[str]:
    """The short game; returns the certainties of its questions, in order."""
    with httpx.Client(base_url=url, timeout=60) as http:
        if watch_s:
            watch_health(http, watch_s)
        started = time.monotonic()
        page = http.get("/")
        expect(page.status_code == 200 and "<html" in page.text.lower(), f"console page answered {page.status_code}")
        step("console page", started, "served")

        started = time.monotonic()
        created = http.post("/api/cases", json={"scenario_id": "safe-combination", "language": "en"})
        expect(created.status_code == 201, f"new case answered {created.status_code}")
        snapshot = created.json()
        case_id = snapshot["case"]["id"]
        step("new case", started, f"{case_id} (safe-combination, en)")

        started = time.monotonic()
        whispered = http.post(f"/api/cases/{case_id}/whispers", json=WHISPER)
        expect(whispered.status_code == 201, f"whisper answered {whispered.status_code}")
        step("whisper to the suspect", started, "stored")

        told = ask(http, case_id, "suspect", WHISPER_QUESTION)
        other = ask(http, case_id, "detective", WHISPER_QUESTION)
        expect(told["certainty"] == "known", "the suspect does not know what it was told")
        expect(other["certainty"] == "unknown", "the detective knows what only the suspect was told")

        before = ask(http, case_id, "detective", SAFE_QUESTION)
        expect(before["certainty"] == "unknown", "the detective knows the combination before it was published")

        started = time.monotonic()
        [secret] = [card for card in snapshot["spaces"]["informant"] if SECRET in card["content"]]
        published = http.post(f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": secret["id"]})
        expect(published.status_code == 201, f"publish answered {published.status_code}")
        step("publish the informant's secret", started, "copied to the board")

        after = ask(http, case_id, "detective", SAFE_QUESTION)
        expect(after["certainty"] == "known", "the detective does not find the published combination")
        expect(SECRET in after["answer"], "the detective's answer does not give the combination")
        return [told["certainty"], other["certainty"], before["certainty"], after["certainty"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--watch-s", type=float, default=12.0, help="watch /api/health this long first")
    args = parser.parse_args()
    print(f"short game against {args.url}", flush=True)
    try:
        play(args.url, args.watch_s)
    except (SmokeFailure, httpx.HTTPError, KeyError, ValueError) as exc:
        print(f"SMOKE FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print("short game: every answer as promised", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
