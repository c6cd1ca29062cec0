"""Backups that open nothing after an erase (issue 34.3; docs/erasure.md, docs/operations.md "Backups"), played
by real `bureau serve` processes:

1. a case with a card that will be deleted (and its board copy) and a neighbour whisper, and a second case that
   will be erased, written over HTTP;
2. the server stopped (a copy of a live embedded store may be torn) and the data directory copied: the backup
   (with the PostgreSQL ledger, its `pg_dump` is part of it);
3. the card deleted and the second case erased by a server on the live data;
4. the backup restored beside the live vault (the data directory replaced, the vault kept; the dump restored
   into a fresh database) and a server started on it.

The restored server must answer as if the erase had reached the backup: the deleted card and its copy absent
(snapshot, search, record), the erased case 404 on every route and no key of it made again, the neighbour still
`known`. Then every live key, read through the vault, is looked for in every file under the data directories
and the backup, and in the ledger's dump: raw, hex and base64. None may be found; the same scan over the vault's
own directory finds the KEK (the scan can see a key where one is).
"""

from __future__ import annotations

import json
import secrets
import shutil
import string
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from bureau.vault import Vault
from bureau.vault.opening import VaultLocation, open_vault
from disk_scan import scan_bytes
from helpers import interrogated, posted
from live_server import LiveServer
from servers import PostgresCluster, running_postgres
from vault_keys import count_kinds, encodings, key_material

# Every route of a case; the erased one must answer 404 CASE_NOT_FOUND on each.
CASE_READS = (
    "",
    "/record",
    "/record/export",
    "/subject-access",
    "/findings",
    "/events",
    "/stage",
    "/stage/record",
    "/stage/events",
)


def marker() -> str:
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(14))


@dataclass
class Played:
    """What the first server wrote, by name: the test's own record of the run, printed at the end."""

    kept_case: str = ""
    erased_case: str = ""
    deleted_card: str = ""
    deleted_copy: str = ""
    neighbour_card: str = ""
    erased_card: str = ""  # a card of the erased case
    markers: dict[str, str] = field(default_factory=dict)


class Deployment:
    """Where the data, the ledger and the vault are, and how a backup of the data is taken and restored."""

    def __init__(self, root: Path, postgres: PostgresCluster | None) -> None:
        self.root = root
        self.data = root / "data"
        self.vault_dir = root / "vault"  # beside the data, never in it; never backed up
        self.backup = root / "backup"
        self.postgres = postgres
        self.ledger_database = "bureau"

    def url(self, database: str) -> str:
        assert self.postgres is not None
        return make_url(self.postgres.url).set(database=database).render_as_string(hide_password=False)

    def env(self) -> dict[str, str]:
        if self.postgres is None:
            return {}
        # The vault in a database of its own (PostgresCluster's `vault`), its KEK in the vault directory.
        return {"BUREAU_DATABASE_URL": self.url(self.ledger_database), "BUREAU_VAULT_DATABASE_URL": self.url("vault")}

    def server(self) -> LiveServer:
        self.data.mkdir(exist_ok=True)
        return LiveServer(self.data, vault_dir=self.vault_dir, **self.env())

    def open_vault(self) -> Vault:
        url = self.url("vault") if self.postgres else f"sqlite:///{self.vault_dir / 'vault.db'}"
        vault = open_vault(VaultLocation(self.vault_dir, url, self.vault_dir / "kek"))
        assert vault is not None, f"no vault at {self.vault_dir}"
        return vault

    def take_backup(self) -> None:
        """The data directory, and the ledger's dump when the ledger is PostgreSQL: never the vault."""
        shutil.copytree(self.data, self.backup / "data")
        if self.postgres is not None:
            self.dump(self.ledger_database, self.backup / "ledger.sql")

    def restore_backup(self) -> None:
        """The data directory replaced by the backup's (the erased state kept aside, for the scan); the dump
        restored into a fresh database, which the ledger URL now names. The vault is left as it is."""
        self.data.rename(self.root / "data-after-erase")
        shutil.copytree(self.backup / "data", self.data)
        if self.postgres is not None:
            self.ledger_database = "bureau_restored"
            self.postgres.psql(f"CREATE DATABASE {self.ledger_database}", database="postgres")
            self._psql_file(self.ledger_database, self.backup / "ledger.sql")

    def dump(self, database: str, into: Path) -> None:
        assert self.postgres is not None
        self.postgres.dump(database, into)

    def _psql_file(self, database: str, script: Path) -> None:
        assert self.postgres is not None
        command = ["psql", "-h", "127.0.0.1", "-p", str(self.postgres.port), "-U", "postgres", "-d", database]
        subprocess.run([*command, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(script)], check=True, capture_output=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    if request.param == "sqlite":
        yield Deployment(tmp_path, None)
        return
    with running_postgres() as cluster:
        yield Deployment(tmp_path, cluster)


def play(http: httpx.Client) -> Played:
    """The kept case: a detective's card (published to the board) that will be deleted, a suspect's whisper
    beside it; the case to erase: a whisper and a question. Every marker answers `known` now."""
    played = Played(markers={name: marker() for name in ("deleted", "neighbour", "erased")})
    kept = posted(http, "/api/cases", {"scenario_id": "safe-combination"})["case"]["id"]
    doomed = posted(
        http,
        f"/api/cases/{kept}/whispers",
        {"role": "detective", "text": f"The brass key hides in crate {played.markers['deleted']}.", "source": "Ada"},
    )["card"]
    neighbour = posted(
        http,
        f"/api/cases/{kept}/whispers",
        {"role": "suspect", "text": f"The silver coin hides in box {played.markers['neighbour']}."},
    )["card"]
    copy = posted(http, f"/api/cases/{kept}/publications", {"role": "detective", "card_id": doomed["id"]})
    answer = interrogated(http, kept, "detective", "Where does the brass key hide?")
    assert answer["certainty"] == "known" and played.markers["deleted"] in answer["answer"]
    assert interrogated(http, kept, "suspect", "Where does the silver coin hide?")["certainty"] == "known"

    erased = posted(http, "/api/cases", {"scenario_id": "safe-combination"})["case"]["id"]
    ring = posted(
        http,
        f"/api/cases/{erased}/whispers",
        {"role": "informant", "text": f"The copper ring hides in chest {played.markers['erased']}."},
    )["card"]
    assert interrogated(http, erased, "informant", "Where does the copper ring hide?")["certainty"] == "known"
    played.kept_case, played.erased_case = kept, erased
    played.deleted_card, played.deleted_copy = doomed["id"], copy["public_card"]["id"]
    played.neighbour_card, played.erased_card = neighbour["id"], ring["id"]
    return played


def every_case_route(http: httpx.Client, case_id: str, card_id: str) -> dict[str, tuple[int, str]]:
    """Every route of a case, read and command: (status, error code) of each."""
    base = f"/api/cases/{case_id}"
    commands: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", "/whispers", {"role": "detective", "text": "A new whisper for an erased case."}),
        ("POST", "/interrogations", {"role": "informant", "question": "Where does the copper ring hide?"}),
        ("POST", "/cross-examinations", {"roles": ["informant", "suspect"], "question": "Who hid the ring?"}),
        ("POST", "/publications", {"role": "informant", "card_id": card_id}),
        ("POST", "/findings/evaluate", {}),
        ("POST", "/findings", {"claim": "The copper ring hides in the boathouse."}),
        ("POST", "/reset", None),
        ("DELETE", f"/cards/{card_id}", None),
    ]
    answers: dict[str, tuple[int, str]] = {}
    for path in CASE_READS:
        # Streamed: a stream that began would never end; its status and first bytes are enough.
        with http.stream("GET", base + path) as response:
            code = error_code(response.read()) if response.status_code != 200 else "(answered)"
        answers[f"GET {path or '/'}"] = (response.status_code, code)
    for method, path, body in commands:
        response = http.request(method, base + path, json=body)
        answers[f"{method} {path}"] = (response.status_code, error_code(response.content))
    return answers


def error_code(body: bytes) -> str:
    found = json.loads(body) if body else {}
    return str(found.get("detail", {}).get("code", "(answered)")) if isinstance(found, dict) else "(answered)"


def card_ids(snapshot: dict[str, Any]) -> set[str]:
    return {card["id"] for cards in snapshot["spaces"].values() for card in cards}


def test_a_backup_taken_before_an_erase_opens_nothing_of_what_was_erased(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    with deployment.server() as first, httpx.Client(base_url=first.url, timeout=120) as http:
        played = play(http)
    deployment.take_backup()

    with deployment.server() as second, httpx.Client(base_url=second.url, timeout=120) as http:
        assert http.delete(f"/api/cases/{played.kept_case}/cards/{played.deleted_card}").status_code == 204
        assert http.delete(f"/api/cases/{played.erased_case}").status_code == 204
        kept_after_erase = http.get(f"/api/cases/{played.kept_case}").json()
    assert not {played.deleted_card, played.deleted_copy} & card_ids(kept_after_erase)

    deployment.restore_backup()
    with deployment.server() as restored, httpx.Client(base_url=restored.url, timeout=120) as http:
        snapshot = http.get(f"/api/cases/{played.kept_case}")
        assert snapshot.status_code == 200, snapshot.text
        shown = snapshot.json()
        record = http.get(f"/api/cases/{played.kept_case}/record")
        assert record.status_code == 200, record.text
        searched = interrogated(http, played.kept_case, "detective", "Where does the brass key hide?")
        published = http.post(
            f"/api/cases/{played.kept_case}/publications", json={"role": "detective", "card_id": played.deleted_card}
        )
        deleted_again = http.delete(f"/api/cases/{played.kept_case}/cards/{played.deleted_card}")
        neighbour = interrogated(http, played.kept_case, "suspect", "Where does the silver coin hide?")
        erased_routes = every_case_route(http, played.erased_case, played.erased_card)
        restored_log = restored.log_text()

    # The deleted card and its board copy: absent from the snapshot, the search and the record; not publishable.
    assert not {played.deleted_card, played.deleted_copy} & card_ids(shown)
    assert played.neighbour_card in card_ids(shown)
    assert played.markers["deleted"] not in snapshot.text + record.text
    hits = {hit["card_id"] for hit in searched["trace"]["hits"]}
    assert searched["certainty"] != "known" and not {played.deleted_card, played.deleted_copy} & hits
    assert played.markers["deleted"] not in searched["answer"]
    assert (published.status_code, published.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND")
    assert (deleted_again.status_code, deleted_again.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND")
    # The neighbour whisper, in the same case, beside the deleted card: still known.
    assert neighbour["certainty"] == "known" and played.markers["neighbour"] in neighbour["answer"]
    assert neighbour["evidence"] == [played.neighbour_card]
    # The erased case: 404 on every route, and no key of it made again by anything the restored server ran.
    assert set(erased_routes.values()) == {(404, "CASE_NOT_FOUND")}, erased_routes
    assert "Traceback" not in restored_log

    vault = deployment.open_vault()
    try:
        erased_keys_left = len(vault.store.compartments(played.erased_case))
        erased_case_in_vault = played.erased_case in vault.store.cases()  # compartment or item keys
        material = key_material(vault)
    finally:
        vault.close()
    assert any(name.startswith(f"{played.kept_case}/") for name in material)

    # Every live key, in every form, under every data directory, the backup and the ledger's dumps: none found.
    needles = encodings(material)
    scanned = {
        "restored data dir": deployment.data,
        "data dir after the erase": deployment.root / "data-after-erase",
        "backup": deployment.backup,
    }
    if deployment.postgres is not None:
        dumps = deployment.root / "ledger-dumps"
        dumps.mkdir()
        deployment.dump("bureau", dumps / "ledger-after-erase.sql")
        deployment.dump(deployment.ledger_database, dumps / "ledger-restored.sql")
        scanned["ledger dumps"] = dumps
    found = {name: scan_bytes(where, needles) for name, where in scanned.items()}
    # The control: the same scan sees the KEK in the vault's own directory, where it is.
    control = scan_bytes(deployment.vault_dir, {k: v for k, v in needles.items() if k.startswith("KEK")})

    summary = {
        "ledger": "postgresql" if deployment.postgres else "sqlite",
        "erased": {
            "deleted card (detective, with its source)": played.deleted_card,
            "its board copy": played.deleted_copy,
            "erased case": played.erased_case,
        },
        "restored server answered": {
            "kept case snapshot": f"{snapshot.status_code}, {len(card_ids(shown))} cards, deleted card and copy absent",
            "search for the deleted card": f"{searched['certainty']}, evidence {searched['evidence']}",
            "publish the deleted card": f"{published.status_code} {published.json()['detail']['code']}",
            "neighbour whisper": f"{neighbour['certainty']}, evidence {neighbour['evidence']}",
            "erased case": {route: f"{status} {code}" for route, (status, code) in erased_routes.items()},
            "compartment keys of the erased case in the vault afterwards": erased_keys_left,
        },
        "scan": {
            "live keys": count_kinds(material),
            "needles (raw, hex, HEX, base64, base64url)": len(needles),
            "found": found,
            "control: KEK found in the vault dir": sorted(control),
        },
    }
    (deployment.root / "restore-run.json").write_text(json.dumps(summary, indent=2))
    with capsys.disabled():
        print(f"\n[restore run] {json.dumps(summary, indent=2)}")
    assert (erased_keys_left, erased_case_in_vault) == (0, False)
    assert found == {name: {} for name in scanned}, found
    assert "KEK raw" in control or "KEK base64" in control, control
