"""A card's erasure killed between its commit and its keys' destruction (issue 34.2): the erasure's cleanup tasks,
written in its own transaction, are all that is left of the promise; a restarted server carries them out. The
card's key, its board copy's key and the key of the record text that quoted it are destroyed, and the rows are
gone from the store.

The kill comes from the test-only hook `BUREAU_TEST_KILL_AT=after_card_erasure_commit` (refused unless
`BUREAU_ENV=test`): the process sends itself SIGKILL right after the ledger's commit, as a crash would.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from bureau.ledger.cleanups import INLINE_GRACE_S
from bureau.vault import Vault
from live_server import LiveServer, open_vault_of
from store_probe import stored_rows

CLEANUP_DEADLINE_S = INLINE_GRACE_S + 60  # due after the grace the erasure's own run had; maintenance every 5 s


def items_of(vault: Vault, case_id: str, compartment: str) -> set[str]:
    return set(vault.store.compartment_items(case_id, compartment))


def cleanup_tasks(data_dir: Path, case_id: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(data_dir / "bureau.db") as ledger:
        query = "SELECT space, card_id, item, done_at FROM cleanup_tasks WHERE case_id = ? ORDER BY id"
        return ledger.execute(query, (case_id,)).fetchall()


def test_a_card_erasure_killed_after_its_commit_destroys_the_keys_when_the_server_restarts(tmp_path: Path) -> None:
    server = LiveServer(tmp_path, BUREAU_ENV="test", BUREAU_TEST_KILL_AT="after_card_erasure_commit").start()
    assert server.process is not None
    vault = open_vault_of(server.vault_dir)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            case_id = http.post("/api/cases", json={"scenario_id": "safe-combination"}).json()["case"]["id"]
            own, board = items_of(vault, case_id, "detective"), items_of(vault, case_id, "bulletin_board")
            whisper = {"role": "detective", "text": "The brass key hides in the attic.", "source": "the gardener"}
            card = http.post(f"/api/cases/{case_id}/whispers", json=whisper).json()["card"]
            card_items = items_of(vault, case_id, "detective") - own  # the card's text and its named source
            copy = http.post(
                f"/api/cases/{case_id}/publications", json={"role": "detective", "card_id": card["id"]}
            ).json()["public_card"]
            copy_items = items_of(vault, case_id, "bulletin_board") - board
            asked = http.post(
                f"/api/cases/{case_id}/interrogations",
                json={"role": "detective", "question": "Where does the brass key hide?"},
            ).json()
            assert asked["certainty"] == "known" and {card["id"], copy["id"]} & set(asked["evidence"])
            assert len(card_items) == 2 and len(copy_items) == 1, (card_items, copy_items)  # a copy names no source
            with pytest.raises(httpx.TransportError):  # killed after the commit: no answer at all
                http.delete(f"/api/cases/{case_id}/cards/{card['id']}")
            assert server.process.wait(timeout=60) == -signal.SIGKILL
            server.process = None  # killed: nothing left to stop
        assert "killing this process at card erasure step after_card_erasure_commit" in server.log_text()

        # What the crash left: the erasure committed with its tasks; not one key destroyed.
        tasks = cleanup_tasks(tmp_path, case_id)
        assert {(space, card_id) for space, card_id, _, _ in tasks} >= {
            ("detective", card["id"]),
            ("bulletin_board", copy["id"]),
        }
        assert all(done is None for *_, done in tasks)
        record_items = {item for space, _, item, _ in tasks if space == "record"}
        assert record_items, "the answer that quoted the card left no key to destroy"
        doomed = card_items | copy_items | record_items
        assert set(vault.store.items(case_id, doomed)) == doomed

        # Restarted without the hook: the background loop carries the tasks out once their grace is over.
        with LiveServer(tmp_path) as restarted, httpx.Client(base_url=restarted.url, timeout=120) as http:
            deadline = time.monotonic() + CLEANUP_DEADLINE_S
            while vault.store.items(case_id, doomed) or any(
                done is None for *_, done in cleanup_tasks(tmp_path, case_id)
            ):
                assert time.monotonic() < deadline, cleanup_tasks(tmp_path, case_id)
                time.sleep(0.5)
            snapshot = http.get(f"/api/cases/{case_id}").json()
            shown = {c["id"] for cards in snapshot["spaces"].values() for c in cards}
            again = http.post(f"/api/cases/{case_id}/publications", json={"role": "detective", "card_id": card["id"]})
        assert not {card["id"], copy["id"]} & shown
        assert (again.status_code, again.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND")
        assert set(vault.store.items(case_id, own | board)) == own | board  # the opening cards' keys are kept
    finally:
        server.stop()  # when the test failed before the kill
        vault.close()

    rows = stored_rows(tmp_path, [case_id])[case_id]
    assert not {card["id"], copy["id"]} & {row["id"] for row in rows}  # the rows too, not only the keys
