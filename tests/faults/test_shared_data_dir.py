"""Two `bureau serve` processes on one `--data-dir` with the embedded store. They share it by design: the
first starts the embedded seekdb server (its child), the second attaches to that server's unix socket, the
SQLite ledger is shared through its file locks (WAL), and each process leases its own Snowflake worker id
from it, so their card ids never collide. This proves the sharing is safe, also when the shared server dies
and when the process that started it is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path

import httpx

from helpers import QUESTION, informant_secret_card, wait_until
from live_server import LiveServer
from process_tree import is_gone, live_children, seekdb_child

WHISPERS_EACH = 20
RECOVERY_DEADLINE_S = 90.0


def ready(server: LiveServer) -> bool:
    try:
        return httpx.get(server.url + "/api/ready", timeout=10).status_code == 200
    except httpx.HTTPError:
        return False


def embedded_servers(data_dir: Path) -> list[int]:
    """Live seekdb servers working on this data directory, whoever their parent is now."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "seekdb" or is_gone(int(entry.name)):
                continue
            if os.readlink(entry / "cwd") == str(data_dir / "seekdb"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def whisper_through_both(servers: list[LiveServer], case_id: str, tag: str) -> list[str]:
    """WHISPERS_EACH whispers through every server at once; the texts acknowledged with 201."""
    async with httpx.AsyncClient(timeout=120) as http:

        async def whisper(server: LiveServer, n: int) -> str:
            text = f"{tag}: note {n} through port {server.port}."
            response = await http.post(
                server.url + f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": text}
            )
            assert response.status_code == 201, response.text
            return text

        return list(await asyncio.gather(*(whisper(s, n) for s in servers for n in range(WHISPERS_EACH))))


def detective_notes(server: LiveServer, case_id: str) -> list[str]:
    snapshot = httpx.get(server.url + f"/api/cases/{case_id}", timeout=60).json()
    return sorted(card["content"] for card in snapshot["spaces"]["detective"])


def test_two_servers_on_one_embedded_data_directory_share_the_store_safely(tmp_path: Path) -> None:
    first = LiveServer(tmp_path).start()
    second = LiveServer(tmp_path).start()
    assert first.process is not None and second.process is not None
    try:
        # One embedded server for the directory: the second process attached to the first one's.
        child = seekdb_child(first.process.pid)
        assert live_children(second.process.pid, "seekdb") == []
        assert embedded_servers(tmp_path) == [child]
        with sqlite3.connect(tmp_path / "bureau.db") as ledger:
            slots = [row[0] for row in ledger.execute("SELECT slot FROM process_slots")]
        assert len(slots) == len(set(slots)) == 2  # one worker id each: card ids cannot collide

        case = httpx.post(first.url + "/api/cases", json={"scenario_id": "safe-combination"}, timeout=60).json()
        case_id = case["case"]["id"]
        scenario_notes = detective_notes(first, case_id)
        # Concurrent writes through both: every acknowledged card is there, seen alike from both processes.
        written = asyncio.run(whisper_through_both([first, second], case_id, "shared"))
        expected = sorted(scenario_notes + written)
        assert detective_notes(first, case_id) == detective_notes(second, case_id) == expected

        # The shared server dies: each process reopens the store by itself (or, if the other one was first,
        # its next connection reaches the new server on the same socket), and the directory ends up with one
        # server again (if both start one, the loser's exits at once: seekdb locks its directory).
        os.kill(child, signal.SIGKILL)
        killed = time.monotonic()
        wait_until(lambda: not ready(first), 30, "the first process unready")
        wait_until(lambda: ready(first) and ready(second), RECOVERY_DEADLINE_S, "both ready again")
        print(f"[faults] shared seekdb killed: both processes ready again after {time.monotonic() - killed:.1f} s")
        wait_until(lambda: len(embedded_servers(tmp_path)) == 1, 30, "one embedded server for the directory")
        assert any("memory store reopened" in server.log_text() for server in (first, second))
        assert detective_notes(first, case_id) == detective_notes(second, case_id) == expected
        written += asyncio.run(whisper_through_both([first, second], case_id, "after the reopen"))
        expected = sorted(scenario_notes + written)
        assert detective_notes(first, case_id) == detective_notes(second, case_id) == expected

        # The process whose child the server is (now) is killed: the server lives on for the other one,
        # which keeps serving everything that was acknowledged, and goes on writing.
        [server_pid] = embedded_servers(tmp_path)
        owner, other = (first, second) if server_pid in live_children(first.process.pid, "seekdb") else (second, first)
        assert owner.process is not None
        owner.process.send_signal(signal.SIGKILL)
        owner.process.wait(timeout=30)
        assert embedded_servers(tmp_path) == [server_pid]
        assert ready(other)
        assert detective_notes(other, case_id) == expected
        written += asyncio.run(whisper_through_both([other], case_id, "after the kill"))
        assert detective_notes(other, case_id) == sorted(scenario_notes + written)
        asked = httpx.post(
            other.url + f"/api/cases/{case_id}/interrogations",
            json={"role": "informant", "question": QUESTION},
            timeout=60,
        ).json()
        assert asked["evidence"] == [informant_secret_card(case)["id"]]
    finally:
        second.stop()
        first.stop()
    for server in (first, second):
        assert "Traceback" not in server.log_text()
