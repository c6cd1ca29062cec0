"""A data directory made by the main before the vault (commit 96dd46b: one key per case in the ledger's
`case_keys`, texts `sealed:v1:`) keeps working under this version (issues 33.6 and 34.1), with the SQLite ledger
and with a PostgreSQL one:

1. the old code, taken from the repository's history (`git archive`), runs `bureau serve` on a new data
   directory: whispers in two roles with a source, questions, a publication, a cross-examination, a finding;
   what it answered is kept;
2. this version starts on it with a vault beside it and the test-only hook `BUREAU_TEST_KILL_AT=
   after_store_reseal`: the keys move out of the ledger at once, and the first case's re-seal (begun by the
   retention sweep at start-up, a first touch) is killed by SIGKILL between its store rows and its ledger texts;
3. SQLite: `bureau setup` finishes every re-seal; PostgreSQL: a plain restart does (first touch);
4. a server started on it answers everything as the old one did (cards, sources, record, findings, the same
   answers to the same questions); `case_keys` is empty and no old key is left in the data (SQLite's file,
   `secure_delete`; PostgreSQL's dump); every store row and ledger text is `sealed:v2:`, each under a key the
   vault holds; the old keys are gone from the vault too.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bureau.scope.keys import PSEUDONYMS, SPACES
from bureau.vault import Vault
from bureau.vault.keyring import LEGACY
from bureau.vault.opening import VaultLocation, open_vault
from disk_scan import scan_bytes
from helpers import QUESTION, informant_secret_card, interrogated, posted
from live_server import REPO, LiveServer
from servers import PostgresCluster, running_postgres
from store_probe import stored_rows
from vault_keys import encodings

BASELINE = "96dd46b"  # the main before compartments and the vault
KILLED_AT = "after_store_reseal"

# The questions asked of the old server, asked again of the new one: (role, question).
QUESTIONS = (
    ("detective", QUESTION),
    ("informant", QUESTION),
    ("detective", "What did the gardener see at midnight?"),
    ("suspect", "What did the butler hear at midnight?"),
)


@pytest.fixture(scope="module")
def old_backend(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The old main's backend, extracted from this repository's history."""
    found = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{BASELINE}^{{commit}}"], capture_output=True)
    if found.returncode != 0:
        pytest.fail(
            f"commit {BASELINE} (the main before the vault) is not in this repository's history: the upgrade tests "
            "build their data directory with it (fetch the full history: git fetch --unshallow)"
        )
    where = tmp_path_factory.mktemp("baseline")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", BASELINE, "backend"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    assert (where / "backend" / "bureau" / "sealing.py").is_file(), "not the one-key-per-case version"
    return where / "backend"


class OldServer(LiveServer):
    """`bureau serve` of the old code: its own PYTHONPATH, and no `--vault-dir` (it knows no vault)."""

    def __init__(self, data_dir: Path, backend: Path, **env: str) -> None:
        super().__init__(data_dir, PYTHONPATH=str(backend), **env)

    def command(self) -> list[str]:
        command = super().command()
        at = command.index("--vault-dir")
        return command[:at] + command[at + 2 :]


class Ledger:
    """The ledger's tables, read directly (SQLite file, or PostgreSQL through psql)."""

    def __init__(self, data_dir: Path, postgres: PostgresCluster | None) -> None:
        self.data_dir = data_dir
        self.postgres = postgres

    def env(self) -> dict[str, str]:
        return {"BUREAU_DATABASE_URL": self.postgres.url} if self.postgres else {}

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.postgres is None:
            with sqlite3.connect(self.data_dir / "bureau.db") as connection:
                return connection.execute(sql).fetchall()
        out = self.postgres.psql(sql)
        return [tuple(line.split("|")) for line in out.splitlines() if line]

    def case_keys(self) -> dict[str, bytes]:
        if self.postgres is None:
            return {case: bytes(key) for case, key in self.rows("SELECT case_id, key FROM case_keys")}
        return {case: bytes.fromhex(key[2:]) for case, key in self.rows("SELECT case_id, key FROM case_keys")}

    def dump(self, into: Path) -> None:
        assert self.postgres is not None
        self.postgres.dump("bureau", into)


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    if request.param == "sqlite":
        yield Ledger(data_dir, None)
        return
    with running_postgres() as cluster:
        yield Ledger(data_dir, cluster)


def play_old(http: httpx.Client) -> dict[str, str]:
    """Everything that writes a sealed text, on the old server: the cases made."""
    case = posted(http, "/api/cases", {"scenario_id": "safe-combination"})
    played = case["case"]["id"]
    whispers = f"/api/cases/{played}/whispers"
    posted(http, whispers, {"role": "detective", "text": "The gardener saw a blue van at midnight.", "source": "Ada"})
    posted(http, whispers, {"role": "suspect", "text": "The butler heard the safe click at midnight.", "source": "Bo"})
    for role, question in QUESTIONS:
        interrogated(http, played, role, question)
    secret = informant_secret_card(case)["id"]
    posted(http, f"/api/cases/{played}/publications", {"role": "informant", "card_id": secret})
    joint = posted(
        http,
        f"/api/cases/{played}/cross-examinations",
        {"roles": ["informant", "suspect"], "question": "What happened at the safe at midnight?"},
        200,
    )
    assert joint["conclusion"]["text"]
    ferry = posted(http, "/api/cases", {"scenario_id": "night-ferry"})["case"]["id"]
    posted(http, f"/api/cases/{ferry}/findings", {"claim": "The grey van left the harbour at midnight."})
    return {"played": played, "ferry": ferry}


def seen(http: httpx.Client, case_id: str) -> dict[str, Any]:
    """What the operator sees of a case: its cards, answers, knowledge, record and findings."""
    snapshot = http.get(f"/api/cases/{case_id}").json()
    return {
        "spaces": snapshot["spaces"],
        "answers": snapshot["answers"],
        "knowledge": snapshot["knowledge"],
        "record": http.get(f"/api/cases/{case_id}/record", params={"limit": 200}).json()["entries"],
        "findings": http.get(f"/api/cases/{case_id}/findings").json()["findings"],
    }


def answers_to(http: httpx.Client, case_id: str) -> list[tuple[str, list[str], str]]:
    found = []
    for role, question in QUESTIONS:
        answer = interrogated(http, case_id, role, question)
        found.append((answer["certainty"], answer["evidence"], answer["answer"]))
    return found


def kept(old: Any, new: Any, where: str = "") -> list[str]:
    """Where `new` differs from `old`, ignoring fields `new` adds (this version's additions)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [d for key in old for d in (kept(old[key], new.get(key), f"{where}.{key}") if key in new else [where])]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True)) for d in kept(a, b, f"{where}[{i}]")]
    return [] if old == new else [where]


def open_the_vault(vault_dir: Path) -> Vault:
    vault = open_vault(VaultLocation(vault_dir, f"sqlite:///{vault_dir / 'vault.db'}", vault_dir / "kek"))
    assert vault is not None
    return vault


def killed_mid_reseal(server: LiveServer) -> None:
    """Started with the hook, the server's start-up retention sweep begins a re-seal and dies in it."""
    with contextlib.suppress(RuntimeError):  # it may die before it answers health
        server.start()
    assert server.process is not None
    try:
        returncode = server.process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        server.stop()
        raise AssertionError("the re-seal did not reach its kill point") from None
    assert returncode == -signal.SIGKILL, server.log_text()[-3000:]
    assert f"killing this process at re-seal step {KILLED_AT}" in server.log_text()
    server.process = None


def test_a_data_dir_of_the_old_main_keeps_working_with_its_keys_moved_out_and_resealed(
    ledger: Ledger, old_backend: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, vault_dir = ledger.data_dir, tmp_path / "vault"
    started = time.monotonic()
    with OldServer(data, old_backend, **ledger.env()) as old, httpx.Client(base_url=old.url, timeout=120) as http:
        cases = play_old(http)
        answered_before = answers_to(http, cases["played"])
        before = {name: seen(http, case_id) for name, case_id in cases.items()}
    old_keys = ledger.case_keys()
    assert set(old_keys) == set(cases.values()) and not vault_dir.exists()  # the old code's keys, in the ledger
    stored_before = stored_rows(data, list(cases.values()))
    assert {row["text"] for rows in stored_before.values() for row in rows} == {"sealed:v1"}

    # Killed in the middle of the first re-seal: the keys had moved out of the ledger already.
    env = {**ledger.env(), "BUREAU_ENV": "test", "BUREAU_TEST_KILL_AT": KILLED_AT}
    killed_mid_reseal(LiveServer(data, vault_dir=vault_dir, **env))
    assert ledger.case_keys() == {}
    vault = open_the_vault(vault_dir)
    try:
        half_done = sorted(vault.legacy_cases())
        assert half_done == sorted(cases.values())  # the killed one keeps its old key until its last row
        assert any(len(vault.store.compartments(case_id)) > 1 for case_id in half_done)
    finally:
        vault.close()

    # SQLite: `bureau setup` re-seals every case; PostgreSQL: the server's own first touch does.
    if ledger.postgres is None:
        setup = LiveServer(data, vault_dir=vault_dir, **ledger.env())
        done = subprocess.run(
            [*setup.command()[:3], "setup", "--data-dir", str(data), "--vault-dir", str(vault_dir)],
            env=setup.environment(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"{len(cases)} case(s) re-sealed into compartments" in done.stdout, done.stdout

    with LiveServer(data, vault_dir=vault_dir, **ledger.env()) as new, httpx.Client(base_url=new.url) as http:
        http.timeout = httpx.Timeout(120)
        after = {name: seen(http, case_id) for name, case_id in cases.items()}
        answered_after = answers_to(http, cases["played"])
        log = new.log_text()
    assert "Traceback" not in log

    # Everything answers as before: cards and their sources, answers, knowledge, record texts, findings.
    for name in cases:
        assert kept(before[name], after[name]) == [], name
    assert after["played"]["record"] and after["ferry"]["findings"][0]["claim"]
    assert answered_after == answered_before

    # The ledger holds no key, and no copy of one (SQLite: secure_delete and the WAL truncated; PostgreSQL: its
    # dump), and only texts sealed under keys of their own.
    assert ledger.case_keys() == {}
    old_key_forms = encodings({f"old key of {case}": key for case, key in old_keys.items()})
    assert scan_bytes(data, old_key_forms) == {}
    if ledger.postgres is not None:
        dump = tmp_path / "dump"
        dump.mkdir()
        ledger.dump(dump / "ledger.sql")
        assert scan_bytes(dump, old_key_forms) == {}
    bodies = ledger.rows("SELECT body, body_item FROM case_record")
    claims = ledger.rows("SELECT claim, claim_item FROM findings")
    assert bodies and claims
    assert {text.split(":", 2)[:2] == ["sealed", "v2"] for text, _ in bodies + claims} == {True}
    assert [a for (a,) in ledger.rows("SELECT answer FROM case_latest_answers")] == [""] * len(
        ledger.rows("SELECT answer FROM case_latest_answers")
    )

    # Every store row sealed under a key of its own (its source too), every key in the vault, no old key left.
    stored = stored_rows(data, list(cases.values()))
    for case_id in cases.values():  # each card re-sealed in place, its id kept (session records come and go)
        kept_ids = {row["id"] for row in stored_before[case_id] if row["memory_type"] != "session"}
        assert kept_ids <= {row["id"] for row in stored[case_id]}
    assert {(row["text"], row["told_by"]) for rows in stored.values() for row in rows} <= {
        ("sealed:v2", ""),
        ("sealed:v2", "sealed:v2"),
    }
    assert any(row["told_by"] for row in stored[cases["played"]])
    vault = open_the_vault(vault_dir)
    try:
        assert vault.legacy_cases() == []
        for case_id, rows in stored.items():
            compartments = {key.compartment for key in vault.store.compartments(case_id)}
            assert LEGACY not in compartments and {*SPACES, PSEUDONYMS} <= compartments
            assert any(name.startswith("record") for name in compartments)
            items = {row["item"] for row in rows} | {f"{row['item']}.source" for row in rows if row["told_by"]}
            assert set(vault.store.items(case_id, items)) == items
        texts = {item for _, item in bodies + claims}
        assert sum(len(vault.store.items(case_id, texts)) for case_id in cases.values()) == len(texts)
    finally:
        vault.close()
    assert scan_bytes(vault_dir, old_key_forms) == {}  # the legacy keys left the vault once re-sealed

    with capsys.disabled():
        figures: dict[str, Any] = {
            "ledger": "postgresql" if ledger.postgres else "sqlite",
            "cases": len(cases),
            "store rows, all sealed:v2": sum(len(rows) for rows in stored.values()),
            "ledger texts, all sealed:v2": len(bodies) + len(claims),
            "seconds": round(time.monotonic() - started, 1),
        }
        if ledger.postgres is not None and ledger.postgres.base is not None:
            # Not asserted (issue 34.1 asks SQLite's secure_delete): what PostgreSQL's own files still hold of the
            # deleted `case_keys` rows (dead tuples until vacuumed and overwritten), for the threat model.
            figures["old keys in PostgreSQL's own files"] = scan_bytes(ledger.postgres.base, old_key_forms)
        print(f"\n[upgrade] {json.dumps(figures)}")
