"""The concurrency checker (issue 32): random mixes of commands fired at once at live `bureau serve` processes,
the history recorded with the ledger's event ids, and the case's invariants checked after every batch.

One batch: commands drawn from a seeded generator (whisper, interrogate, publish, delete a card,
cross-examine, reset, erase, evaluate and promote a finding), each sent by one of `THREADS` client threads
after its own small delay, to one of the servers (two `bureau serve` on one data directory share one store
and one ledger). Then the checker reads the case's whole event log (the operator stream from the start:
the ledger's ids are commit order), its snapshot and its findings, and checks:

- every answer: no 5xx, no missing answer, every non-2xx status and code declared for that operation in the
  app's OpenAPI document; `CASE_NOT_FOUND` only when the batch erased the case;
- after the last committed reset, the scenario's opening cards exist exactly once per role (compared by
  content with the scenario file); without a reset, the opening cards of the batch's start are all there but
  those the batch erased;
- nothing committed before that reset survives (every other card's `memory.written` comes after it), no
  card is in the store without a commit, no erased card is back;
- every write acknowledged after it is present (a whisper's card, a publication's copy, a finding's card,
  unless a later committed erasure or withdrawal explains its absence); a deleted card and its copies are
  gone; each command kind committed exactly as many times as it was acknowledged (a refused command
  committed nothing);
- once the case has been quiet for two publish leases (polled with a deadline that adds the maintenance
  loop's period), every board copy's source exists and every finding card belongs to a promoted finding;
- every promoted finding still qualifies: its supporting cards (learnt from `evaluate` on a fresh case of the
  scenario), as they are now, still leave `min_support` independent contributors after leave-one-out;
- an erased case: every command sent after the erase had answered is 404 `CASE_NOT_FOUND`, the case answers
  404, and neither the store (its rows, over the embedded seekdb's socket) nor the ledger (its rows, read-only)
  holds anything of it but the `case.erased` tombstone.

`tests/e2e/test_concurrency_checker.py` runs it bounded with a fixed seed (`make test`); `make chaos` runs it
long (`CHAOS_SECONDS`, `CHAOS_BATCHES`, `CHAOS_SEED`) and prints its figures (docs/faults.md).
`tests/e2e/test_command_races.py` fires the two races of issue 32 (resets with whispers, every command during
an erase) and checks them with the same rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

import httpx
import pymysql

from bureau.bootstrap.runtime import MAINTENANCE_INTERVAL_S
from bureau.config import Settings
from bureau.game.scenario_schema import Scenario, load_builtin_scenarios
from bureau.scope.keys import BOARD, ROLES
from contract import OpenApiContract
from sse_client import StreamClosed, open_sse

THREADS = 64  # client threads per batch
KINDS = ("whisper", "interrogate", "publish", "delete_card", "cross_examine", "reset", "erase", "evaluate", "promote")
# How often each kind is drawn for a batch's ordinary commands (resets and the erase are drawn per batch).
WEIGHTS = {
    "whisper": 30,
    "interrogate": 14,
    "publish": 12,
    "delete_card": 8,
    "cross_examine": 8,
    "evaluate": 6,
    "promote": 8,
}
# Night-ferry twice as often: its claims qualify, so findings are promoted, and withdrawn by deletions.
SCENARIOS = ("night-ferry", "night-ferry", "safe-combination")
QUIET_SLACK_S = 10.0  # a loaded machine's margin on top of two leases and one maintenance period
REQUEST_TIMEOUT_S = 120.0
# Whisper texts: unique by their serial number, innocent to the screening, unrelated to any scenario claim.
_COLOURS = ("blue", "green", "yellow", "grey", "red")
_THINGS = ("umbrella", "bicycle", "suitcase", "lantern", "kite")
_PLACES = ("bakery", "library", "station", "market", "fountain")
_STORE = Settings.model_fields  # the store's database and table, as the settings name them by default
_DATABASE, _TABLE = _STORE["seekdb_database"].default, _STORE["memory_collection"].default


# ----- commands and answers --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    kind: str
    method: str
    path: str
    body: dict[str, Any] | None = None
    server: int = 0  # which server of the fleet it is sent to
    delay_s: float = 0.0  # sent this long after the batch starts

    @property
    def target(self) -> str:
        """The last path segment (a card id for a card deletion)."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Answer:
    command: Command
    status: int  # 0: no answer at all (the connection failed or timed out)
    code: str | None  # `detail.code` of an error body
    body: Any
    sent_at: float
    answered_at: float

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def label(self) -> str:
        return f"{self.status} {self.code}" if self.code else str(self.status)


def whisper(case_id: str, role: str, text: str) -> Command:
    return Command("whisper", "POST", f"/api/cases/{case_id}/whispers", {"role": role, "text": text})


def interrogate(case_id: str, role: str, question: str) -> Command:
    return Command("interrogate", "POST", f"/api/cases/{case_id}/interrogations", {"role": role, "question": question})


def publish(case_id: str, role: str, card_id: str) -> Command:
    return Command("publish", "POST", f"/api/cases/{case_id}/publications", {"role": role, "card_id": card_id})


def delete_card(case_id: str, card_id: str) -> Command:
    return Command("delete_card", "DELETE", f"/api/cases/{case_id}/cards/{card_id}")


def cross_examine(case_id: str, roles: Sequence[str], question: str) -> Command:
    body = {"roles": list(roles), "question": question}
    return Command("cross_examine", "POST", f"/api/cases/{case_id}/cross-examinations", body)


def reset(case_id: str) -> Command:
    return Command("reset", "POST", f"/api/cases/{case_id}/reset")


def erase(case_id: str) -> Command:
    return Command("erase", "DELETE", f"/api/cases/{case_id}")


def evaluate(case_id: str, claim: str | None) -> Command:
    body = {"claim": claim} if claim is not None else {}
    return Command("evaluate", "POST", f"/api/cases/{case_id}/findings/evaluate", body)


def promote(case_id: str, claim: str) -> Command:
    return Command("promote", "POST", f"/api/cases/{case_id}/findings", {"claim": claim})


class Clients:
    """One keep-alive HTTP client per thread and server, closed together."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = list(urls)
        self._local = threading.local()
        self._all: list[httpx.Client] = []
        self._lock = threading.Lock()

    def get(self, server: int) -> httpx.Client:
        mine: dict[int, httpx.Client] | None = getattr(self._local, "clients", None)
        if mine is None:
            mine = self._local.clients = {}
        if server not in mine:
            mine[server] = httpx.Client(base_url=self.urls[server], timeout=REQUEST_TIMEOUT_S)
            with self._lock:
                self._all.append(mine[server])
        return mine[server]

    def send(self, command: Command) -> Answer:
        sent = time.monotonic()
        try:
            response = self.get(command.server).request(command.method, command.path, json=command.body)
        except httpx.HTTPError:
            return Answer(command, 0, None, None, sent, time.monotonic())
        answered = time.monotonic()
        body: Any = None
        if response.headers.get("content-type", "").startswith("application/json"):
            body = response.json()
        detail = body.get("detail") if isinstance(body, dict) else None
        code = detail.get("code") if response.status_code >= 400 and isinstance(detail, dict) else None
        return Answer(command, response.status_code, code, body, sent, answered)

    def close(self) -> None:
        for client in self._all:
            client.close()


def fire(urls: Sequence[str], commands: Sequence[Command], threads: int = THREADS) -> list[Answer]:
    """Every command at once from `threads` client threads (each after its own delay, if it has one); the
    answers in the commands' order."""
    clients = Clients(urls)
    start = threading.Event()

    def send(command: Command) -> Answer:
        start.wait()
        if command.delay_s:
            time.sleep(command.delay_s)  # the batch's spread, drawn by the generator: no synchronisation
        return clients.send(command)

    try:
        with ThreadPoolExecutor(threads) as pool:
            futures = [pool.submit(send, command) for command in commands]
            start.set()
            return [future.result() for future in futures]
    finally:
        clients.close()


def fire_during_erase(
    url: str, case_id: str, senders: Sequence[Callable[[], Command]], erase_after_s: float, max_each: int = 40
) -> list[Answer]:
    """Each sender sends its commands one after another, from its own thread, until its case answers
    `CASE_NOT_FOUND` after the erase was answered (or `max_each` were sent); the case's erase is sent
    `erase_after_s` after they start, so every kind of command is in flight around it."""
    clients = Clients([url])
    start, erased = threading.Event(), threading.Event()
    eraser = erase(case_id)

    def loop(sender: Callable[[], Command]) -> list[Answer]:
        start.wait()
        answers: list[Answer] = []
        for _ in range(max_each):
            answer = clients.send(sender())
            answers.append(answer)
            if erased.is_set() and answer.code == "CASE_NOT_FOUND":
                break
        return answers

    def erase_case() -> list[Answer]:
        start.wait()
        time.sleep(erase_after_s)  # where the erase lands among the commands: the race's variable
        answer = clients.send(eraser)
        erased.set()
        return [answer]

    try:
        with ThreadPoolExecutor(len(senders) + 1) as pool:
            futures = [pool.submit(loop, sender) for sender in senders] + [pool.submit(erase_case)]
            start.set()
            return [answer for future in futures for answer in future.result()]
    finally:
        clients.close()


# ----- what the servers hold -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    type: str
    data: dict[str, Any]


def case_events(url: str, case_id: str) -> list[Event] | None:
    """The case's whole event log in commit order: its operator stream from the start, read until the server
    has nothing more to send (its first heartbeat). None when the case is not found."""

    async def read() -> list[Event] | None:
        async with (
            httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S) as http,
            open_sse(http, f"/api/cases/{case_id}/events", params={"after": 0}, read_timeout_s=60) as stream,
        ):
            if stream.status_code == 404:
                return None
            assert stream.status_code == 200, stream.response.text
            with contextlib.suppress(StreamClosed):  # the log ended with the case's erasure
                await stream.frames_until_idle(timeout_s=REQUEST_TIMEOUT_S)
            return [Event(f.id, f.event, f.data) for f in stream.frames if f.id is not None]

    return asyncio.run(read())


def store_rows(data_dir: Path, case_id: str) -> list[str]:
    """Rows of the case in the embedded store, read over its own unix socket (any space, readable or not),
    each named by its space, kind and creator (never its text)."""
    connection = pymysql.connect(
        unix_socket=str(data_dir / "seekdb" / "run" / "sql.sock"), user="root", password="", database=_DATABASE
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT agent_id, JSON_UNQUOTE(JSON_EXTRACT(metadata, '$.kind')),"
                f" JSON_UNQUOTE(JSON_EXTRACT(metadata, '$.created_by')) FROM `{_TABLE}` WHERE user_id = %s",
                (f"case:{case_id}",),
            )
            return [f"{space} {kind} by {creator}" for space, kind, creator in cursor.fetchall()]
    finally:
        connection.close()


def ledger_rows(data_dir: Path, case_id: str) -> dict[str, int]:
    """Rows of the case in each table of the SQLite ledger (read-only), the `case.erased` tombstone left out."""
    ledger = sqlite3.connect(f"file:{data_dir / 'bureau.db'}?mode=ro", uri=True, timeout=30)
    try:
        tables = [name for (name,) in ledger.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        found: dict[str, int] = {}
        for table in tables:
            columns = {row[1] for row in ledger.execute(f"PRAGMA table_info({table})")}
            if table == "cases":
                query, args = "SELECT COUNT(*) FROM cases WHERE id = ?", (case_id,)
            elif table == "events":
                query, args = "SELECT COUNT(*) FROM events WHERE case_id = ? AND type != 'case.erased'", (case_id,)
            elif "case_id" in columns:
                query, args = f"SELECT COUNT(*) FROM {table} WHERE case_id = ?", (case_id,)
            else:
                continue
            [(count,)] = ledger.execute(query, args).fetchall()
            if count:
                found[table] = count
        return found
    finally:
        ledger.close()


class Contract:
    """Which error statuses and codes the app's OpenAPI document declares for each operation."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.paths = OpenApiContract(document)

    @classmethod
    def of(cls, url: str) -> Contract:
        return cls(httpx.get(url + "/openapi.json", timeout=REQUEST_TIMEOUT_S).json())

    def declares(self, answer: Answer) -> bool:
        template = self.paths.template_of(answer.command.path)
        if template is None:
            return False
        operation = self.document["paths"][template].get(answer.command.method.lower(), {})
        declared = operation.get("responses", {}).get(str(answer.status))
        if declared is None:
            return False
        if answer.ok:
            return True
        return answer.code in declared.get("description", "").split(", ")


# ----- the oracle of findings ------------------------------------------------------------------------------


def _brute_support(contributions: Sequence[tuple[str, str]]) -> int:
    """The most contributions no two of which share a role or a source, by trying every subset."""
    for size in range(len(contributions), 0, -1):
        for chosen in itertools.combinations(contributions, size):
            if len({r for r, _ in chosen}) == size and len({s for _, s in chosen}) == size:
                return size
    return 0


def leave_one_out(contributions: Sequence[tuple[str, str]]) -> int:
    """The smallest support left after removing any one role or any one source (role, source pairs)."""
    if not contributions:
        return 0
    roles, sources = {r for r, _ in contributions}, {s for _, s in contributions}
    left = [_brute_support([c for c in contributions if c[0] != r]) for r in roles]
    left += [_brute_support([c for c in contributions if c[1] != s]) for s in sources]
    return min(left)


@dataclass(frozen=True, slots=True)
class Supporters:
    """Which opening cards support each claim of a scenario, as `evaluate` judged them on a fresh case:
    (role, content) -> the source they count under."""

    min_support: int
    by_claim: dict[str, dict[tuple[str, str], str]]
    qualifying: tuple[str, ...] = ()  # the claims that qualified then

    def leave_one_out_now(self, claim: str, snapshot: dict[str, Any]) -> int:
        cards = self.by_claim.get(claim, {})
        here = [
            (role, cards[(role, c["content"])])
            for role in ROLES
            for c in snapshot["spaces"][role]
            if (role, c["content"]) in cards
        ]
        return leave_one_out(sorted(set(here)))


# ----- the history of one batch and its checks -------------------------------------------------------------


@dataclass
class Log:
    """The commit order of one case: which event committed what."""

    events: list[Event]
    written: dict[str, int] = field(default_factory=dict)  # card id -> memory.written
    erased: dict[str, int] = field(default_factory=dict)  # private card id or board copy id -> card.erased
    published: dict[str, int] = field(default_factory=dict)  # public card id -> publication.completed
    promoted: dict[str, int] = field(default_factory=dict)  # finding card id -> finding.promoted
    withdrawn: dict[str, int] = field(default_factory=dict)  # finding id -> finding.withdrawn

    def __post_init__(self) -> None:
        for e in self.events:
            if e.type == "memory.written":
                self.written[e.data["card"]["id"]] = e.id
            elif e.type == "card.erased":
                for card_id in [e.data["card_id"], *e.data["board_card_ids"]]:
                    self.erased[card_id] = e.id
            elif e.type == "publication.completed":
                self.published.setdefault(e.data["public_card_id"], e.id)
            elif e.type == "finding.promoted":
                self.promoted[e.data["public_card_id"]] = e.id
            elif e.type == "finding.withdrawn":
                self.withdrawn[e.data["finding_id"]] = e.id

    def since(self, after: int) -> list[Event]:
        return [e for e in self.events if e.id > after]


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


@dataclass
class CaseUnderTest:
    case_id: str
    scenario: Scenario
    snapshot: dict[str, Any]  # at the start of the next batch
    last_event: int = 0  # the newest event id checked so far


def opening_contents(scenario: Scenario) -> dict[str, Counter[str]]:
    return {role: Counter(card.content for card in cards) for role, cards in scenario.cards.by_role().items()}


def _card_ids(snapshot: dict[str, Any]) -> dict[str, set[str]]:
    return {space: {c["id"] for c in cards} for space, cards in snapshot["spaces"].items()}


def unsettled(snapshot: dict[str, Any], findings: list[dict[str, Any]]) -> list[Violation]:
    """What only time may still mend (a publish that lost to an erasure, swept by the maintenance loop): board
    copies whose source is gone, finding cards of no promoted finding, promoted findings without their card."""
    problems: list[Violation] = []
    ids = _card_ids(snapshot)
    ready = {f["public_card_id"] for f in findings if f["state"] == "ready"}
    for card in snapshot["spaces"][BOARD]:
        source = card.get("source")
        if source is not None and source["card_id"] not in ids[source["role"]]:
            problems.append(
                Violation("board source", f"board copy {card['id']}: its source {source['card_id']} is gone")
            )
        if source is None and card["kind"] == "finding" and card["id"] not in ready:
            problems.append(Violation("board source", f"finding card {card['id']} belongs to no promoted finding"))
    for card_id in ready - ids[BOARD]:
        problems.append(Violation("board source", f"a promoted finding's card {card_id} is not on the board"))
    return problems


def check_answers(contract: Contract, answers: Sequence[Answer], *, erasing: bool) -> list[Violation]:
    found: list[Violation] = []
    for a in answers:
        what = f"{a.command.kind} ({a.command.method} {a.command.path.split('/', 4)[-1]})"
        if a.status == 0:
            found.append(Violation("no answer", f"{what} got no answer"))
        elif a.status >= 500:
            found.append(Violation("5xx", f"{what} answered {a.label}"))
        elif not contract.declares(a):
            found.append(Violation("undocumented", f"{what} answered {a.label}, not declared for the operation"))
        elif a.code == "CASE_NOT_FOUND" and not erasing:
            found.append(Violation("case lost", f"{what} answered {a.label} while nothing erased the case"))
        elif a.code == "VERSION_CONFLICT":  # no command of the checker sends expected_version
            found.append(Violation("undocumented", f"{what} answered {a.label} without an expected_version"))
    return found


@dataclass
class History:
    """One batch on a case that is still there: what was sent and answered, and what the servers hold after it."""

    case: CaseUnderTest  # as at the batch's start
    answers: Sequence[Answer]
    events: list[Event]  # the case's whole log
    snapshot: dict[str, Any]
    findings: list[dict[str, Any]]
    supporters: Supporters | None
    log: Log = field(init=False)
    last_reset: int | None = field(init=False)  # the last reset the batch committed

    def __post_init__(self) -> None:
        self.log = Log(self.events)
        self.last_reset = max((e.id for e in self.batch if e.type == "case.reset"), default=None)

    @property
    def batch(self) -> list[Event]:
        return self.log.since(self.case.last_event)

    def acknowledged(self, kind: str, *statuses: int) -> list[Answer]:
        return [a for a in self.answers if a.command.kind == kind and (a.status in statuses if statuses else a.ok)]

    def after_reset(self, event_id: int) -> bool:
        return self.last_reset is None or event_id > self.last_reset

    @property
    def present(self) -> dict[str, set[str]]:
        return _card_ids(self.snapshot)


def check_history(history: History) -> list[Violation]:
    """The invariants of a case that is still there after a batch (see the module's docstring)."""
    current, found = _opening_cards(history)
    found += _commit_order(history)
    found += _survivors(history, current)
    found += _acknowledged_writes(history)
    found += _commits_match_acknowledgements(history)
    found += unsettled(history.snapshot, history.findings)
    found += _findings_qualify(history)
    return found


def _commit_order(h: History) -> list[Violation]:
    found = []
    ids = [e.id for e in h.events]
    if ids != sorted(set(ids)):
        found.append(Violation("commit order", "event ids are not strictly increasing"))
    versions = [e.data["version"] for e in h.events]
    if versions != sorted(versions):
        found.append(Violation("commit order", "case versions go backwards along the event ids"))
    return found


def _opening_cards(h: History) -> tuple[set[str], list[Violation]]:
    """By content per role: after a reset the scenario's opening cards, exactly once and all new; without one,
    those of the batch's start but the ones it erased. Returns the ids of the opening cards found."""
    found: list[Violation] = []
    opening, before = opening_contents(h.case.scenario), _card_ids(h.case.snapshot)
    current: set[str] = set()
    for role in ROLES:
        here = [c for c in h.snapshot["spaces"][role] if c["content"] in opening[role]]
        current |= {c["id"] for c in here}
        if h.last_reset is not None:
            expected = opening[role]
            if stale := sorted(c["id"] for c in here if c["id"] in before[role]):
                found.append(Violation("survived the reset", f"{role}: opening cards {stale} from before the reset"))
        else:
            start = h.case.snapshot["spaces"][role]
            kept = [c for c in start if c["content"] in opening[role] and c["id"] not in h.log.erased]
            expected = Counter(c["content"] for c in kept)
            if {c["id"] for c in here} != {c["id"] for c in kept}:
                found.append(Violation("opening cards", f"{role}: the opening cards changed without a reset"))
        counts = Counter(c["content"] for c in here)
        if counts != expected:
            missing, extra = sum((expected - counts).values()), sum((counts - expected).values())
            found.append(
                Violation(
                    "opening cards",
                    f"{role}: {sum(counts.values())} opening cards, expected {sum(expected.values())} "
                    f"({missing} missing, {extra} extra)",
                )
            )
    return current, found


def _survivors(h: History, opening: set[str]) -> list[Violation]:
    """Every card but the opening ones: committed, after the last reset, and not erased."""
    found = []
    for space, cards in h.snapshot["spaces"].items():
        for card in (c for c in cards if c["id"] not in opening):
            committed = h.log.written.get(card["id"])
            if committed is None:
                found.append(Violation("uncommitted card", f"{space} card {card['id']} has no memory.written"))
            elif not h.after_reset(committed):
                what = f"{space} card {card['id']} committed at {committed}, before the reset at {h.last_reset}"
                found.append(Violation("survived the reset", what))
            if card["id"] in h.log.erased:
                what = f"{space} card {card['id']} is back after its erasure at {h.log.erased[card['id']]}"
                found.append(Violation("erased card back", what))
    return found


def _acknowledged_writes(h: History) -> list[Violation]:
    """Every write acknowledged: committed; present when committed after the last reset, unless a later
    erasure (of it or its source) or withdrawal explains its absence. A deleted card and its copies: gone."""
    found = []
    present = h.present
    every = set().union(*present.values())

    def missing(what: str, committed: int) -> Violation:
        return Violation(
            "acknowledged write missing", f"{what} committed at {committed}, after the last reset ({h.last_reset})"
        )

    for a in h.acknowledged("whisper"):
        card_id = a.body["card"]["id"]
        committed = h.log.written.get(card_id)
        if committed is None:
            found.append(Violation("acknowledged, never committed", f"whisper card {card_id}"))
        elif h.after_reset(committed) and card_id not in every and h.log.erased.get(card_id, 0) < committed:
            found.append(missing(f"whisper card {card_id}", committed))
    for a in h.acknowledged("publish"):
        copy_id, source_id = a.body["public_card"]["id"], a.command.body["card_id"]  # type: ignore[index]
        committed = h.log.published.get(copy_id)
        erased = max(h.log.erased.get(copy_id, 0), h.log.erased.get(source_id, 0))
        if committed is None:
            found.append(Violation("acknowledged, never committed", f"board copy {copy_id}"))
        elif h.after_reset(committed) and copy_id not in present[BOARD] and erased < committed:
            found.append(missing(f"board copy {copy_id}", committed))
    for a in h.acknowledged("promote"):
        card_id, finding_id = a.body["card"]["id"], a.body["finding"]["id"]
        committed = h.log.promoted.get(card_id)
        if committed is None:
            found.append(Violation("acknowledged, never committed", f"finding card {card_id}"))
        elif (
            h.after_reset(committed)
            and card_id not in present[BOARD]
            and h.log.withdrawn.get(finding_id, 0) < committed
        ):
            found.append(missing(f"finding card {card_id}", committed))
    copied = {c["source"]["card_id"] for c in h.snapshot["spaces"][BOARD] if c.get("source")}
    for a in h.acknowledged("delete_card"):
        card_id = a.command.target
        if card_id not in h.log.erased:
            found.append(Violation("acknowledged, never committed", f"deletion of {card_id}: no card.erased"))
        if card_id in every or card_id in copied:
            found.append(Violation("erased card back", f"deleted card {card_id} or a copy of it is present"))
    return found


def _commits_match_acknowledgements(h: History) -> list[Violation]:
    """Each kind committed exactly as often as it was acknowledged: a refused command committed nothing."""
    found = []
    batch = h.batch
    commits = Counter(e.type for e in batch)
    whispered = {
        e.data["card"]["id"]
        for e in batch
        if e.type == "memory.written"
        and e.data["card"]["space"] != BOARD
        and e.data["card"]["created_by"] == "operator"
    }
    answered = {a.body["card"]["id"] for a in h.acknowledged("whisper")}
    if whispered - answered:
        what = f"{len(whispered - answered)} whisper cards committed, never acknowledged"
        found.append(Violation("committed but refused", what))
    fresh = sum(1 for e in batch if e.type == "publication.completed" and not e.data["idempotent"])
    for what, committed, acknowledged in (
        ("resets", commits["case.reset"], len(h.acknowledged("reset"))),
        ("interrogations", commits["answer.completed"], len(h.acknowledged("interrogate"))),
        ("cross-examinations", commits["cross_examination.completed"], len(h.acknowledged("cross_examine"))),
        ("card deletions", commits["card.erased"], len(h.acknowledged("delete_card"))),
        ("new publications", fresh, len(h.acknowledged("publish", 201))),
        ("new findings", commits["finding.promoted"], len(h.acknowledged("promote", 201))),
    ):
        # Concurrent resets may coalesce into one (docs/api.md): fewer commits than answers, never none.
        coalesced = what == "resets" and 0 < committed <= acknowledged
        if committed != acknowledged and not coalesced:
            found.append(
                Violation("commits ≠ acknowledgements", f"{what}: {committed} committed, {acknowledged} acknowledged")
            )
    return found


def _findings_qualify(h: History) -> list[Violation]:
    if h.supporters is None:
        return []
    found = []
    for f in (f for f in h.findings if f["state"] == "ready"):
        left = h.supporters.leave_one_out_now(f["claim"], h.snapshot)
        if left < h.supporters.min_support:
            what = f"finding {f['id']}: leave-one-out {left} < {h.supporters.min_support} with the cards there now"
            found.append(Violation("finding not qualified", what))
    return found


def check_erased(data_dir: Path, url: str, case_id: str, answers: Sequence[Answer]) -> list[Violation]:
    """After a batch that erased the case: whatever was sent after the erase had answered is not found, and
    nothing of the case is left but its tombstone."""
    found: list[Violation] = []
    done = [a.answered_at for a in answers if a.command.kind == "erase" and a.status == 204]
    if not done:
        return [Violation("erase", "the erase did not answer 204")]
    for a in answers:
        if a.command.kind != "erase" and a.sent_at > done[0] and a.code != "CASE_NOT_FOUND":
            found.append(Violation("erase", f"{a.command.kind} sent after the erase answered {a.label}"))
    gone = httpx.get(url + f"/api/cases/{case_id}", timeout=REQUEST_TIMEOUT_S)
    if gone.status_code != 404:
        found.append(Violation("erase", f"the erased case answers {gone.status_code}"))
    if rows := store_rows(data_dir, case_id):
        found.append(Violation("erase wrote", f"{len(rows)} rows of the erased case left in the store: {rows}"))
    if rows_by_table := ledger_rows(data_dir, case_id):
        found.append(Violation("erase wrote", f"ledger rows of the erased case: {rows_by_table}"))
    return found


# ----- the generator and the runner ------------------------------------------------------------------------


@dataclass
class Figures:
    """What a run did and found."""

    fired: Counter[str] = field(default_factory=Counter)
    statuses: dict[str, Counter[str]] = field(default_factory=dict)
    histories: int = 0
    batches_with_reset: int = 0
    batches_with_erase: int = 0
    cases: int = 0
    violations: list[tuple[int, Violation]] = field(default_factory=list)  # (batch, violation)
    quiet_waits_s: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def record(self, answers: Iterable[Answer]) -> None:
        for a in answers:
            self.fired[a.command.kind] += 1
            self.statuses.setdefault(a.command.kind, Counter())[a.label] += 1

    def table(self) -> str:
        rules = Counter(v.rule for _, v in self.violations)
        lines = [
            f"commands fired: {sum(self.fired.values())} in {self.histories} histories checked "
            f"({self.cases} cases, {self.batches_with_reset} batches with a reset, "
            f"{self.batches_with_erase} with an erase) in {self.seconds:.0f} s",
            "kind            fired  answers",
        ]
        for kind in KINDS:
            statuses = ", ".join(f"{label} ×{n}" for label, n in sorted(self.statuses.get(kind, {}).items()))
            lines.append(f"{kind:<15} {self.fired[kind]:>5}  {statuses}")
        wait = max(self.quiet_waits_s, default=0.0)
        lines.append(f"longest wait for a quiet case to settle: {wait:.1f} s")
        lines.append(f"violations: {len(self.violations)} in {len({b for b, _ in self.violations})} batches")
        lines += [f"  {rule}: {n}" for rule, n in rules.most_common()]
        return "\n".join(lines)


@dataclass
class Mix:
    """Draws batches of commands from a seed. The plan (how many commands of which kind, whether resets and an
    erase, their order, when and to which server each goes) comes from one generator, so a seed always names
    the same plan whatever the cases hold; the particulars (roles, questions, texts, which card, which claim),
    drawn from the case's cards, from another."""

    seed: int
    servers: int
    size: tuple[int, int] = (20, 40)
    reset_chance: float = 0.6
    erase_chance: float = 0.15
    qualifying_chance: float = 0.7  # a promotion names a claim that qualified on a fresh case
    serial: Iterator[int] = field(default_factory=itertools.count)
    plan: random.Random = field(init=False)
    pick: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.plan, self.pick = random.Random(f"plan {self.seed}"), random.Random(f"pick {self.seed}")

    def text(self) -> str:
        n, r = next(self.serial), self.pick
        return f"Chaos note {n}: a {r.choice(_COLOURS)} {r.choice(_THINGS)} was left by the {r.choice(_PLACES)}."

    def kinds(self) -> list[str]:
        """One batch's plan: the kinds of its commands (resets and the erase included), in sending order."""
        p = self.plan
        size = p.randint(*self.size)
        planned = ["reset"] * (p.choice((1, 2, 4)) if p.random() < self.reset_chance else 0)
        planned += ["erase"] if p.random() < self.erase_chance else []
        planned += p.choices(list(WEIGHTS), list(WEIGHTS.values()), k=max(0, size - len(planned)))
        p.shuffle(planned)
        return planned

    def batch(self, case: CaseUnderTest, qualifying: Sequence[str] = ()) -> list[Command]:
        planned = self.kinds()
        spread = self.plan.choice((0.0, 0.0, 0.5, 1.5))
        timing = [(self.plan.randrange(self.servers), self.plan.uniform(0, spread)) for _ in planned]
        commands = [self.command(kind, case, qualifying) for kind in planned]
        return [Command(c.kind, c.method, c.path, c.body, *when) for c, when in zip(commands, timing, strict=True)]

    def command(self, kind: str, case: CaseUnderTest, qualifying: Sequence[str]) -> Command:
        r, scenario, case_id = self.pick, case.scenario, case.case_id
        spaces = case.snapshot["spaces"]
        private = [(role, c["id"]) for role in ROLES for c in spaces[role] if c["memory_type"] != "session"]
        role, question = r.choice(ROLES), r.choice(scenario.preset_questions)
        if kind == "reset":
            return reset(case_id)
        if kind == "erase":
            return erase(case_id)
        if kind == "whisper" or (kind in ("publish", "delete_card") and not private):
            return whisper(case_id, role, self.text())
        if kind == "interrogate":
            return interrogate(case_id, role, question)
        if kind == "publish":
            return publish(case_id, *r.choice(private))
        if kind == "delete_card":
            return delete_card(case_id, r.choice(private)[1])
        if kind == "cross_examine":
            return cross_examine(case_id, r.sample(ROLES, r.choice((2, 3))), question)
        if kind == "promote" and scenario.claims:
            likely = qualifying and r.random() < self.qualifying_chance
            return promote(case_id, r.choice(qualifying if likely else scenario.claims))
        return evaluate(case_id, r.choice([*scenario.claims, None]))


class Checker:
    """Runs batches against a fleet of servers over one data directory and checks each history. The history
    of a batch with violations is kept as JSON in `kept` (default `<data dir>/chaos-histories/`)."""

    def __init__(
        self,
        urls: Sequence[str],
        data_dir: Path,
        seed: int,
        lease_s: float,
        log: Callable[[str], None] = print,
        kept: Path | None = None,
    ) -> None:
        self.urls, self.data_dir, self.lease_s, self.log = list(urls), data_dir, lease_s, log
        self.mix = Mix(seed, len(self.urls))
        self.contract = Contract.of(self.urls[0])
        self.scenarios = load_builtin_scenarios()
        self.supporters: dict[str, Supporters] = {}
        self.figures = Figures()
        self.kept = kept or data_dir / "chaos-histories"

    @property
    def url(self) -> str:
        return self.urls[0]

    def new_case(self, scenario_id: str | None = None) -> CaseUnderTest:
        scenario_id = scenario_id or self.mix.plan.choice(SCENARIOS)
        created = httpx.post(
            self.url + "/api/cases", json={"scenario_id": scenario_id, "language": "en"}, timeout=REQUEST_TIMEOUT_S
        )
        assert created.status_code == 201, created.text
        snapshot = created.json()
        self.figures.cases += 1
        case = CaseUnderTest(snapshot["case"]["id"], self.scenarios[(scenario_id, "en")], snapshot)
        if scenario_id not in self.supporters and case.scenario.claims:
            self.supporters[scenario_id] = self.learn_supporters(case)
        return case

    def learn_supporters(self, case: CaseUnderTest) -> Supporters:
        """What supports each claim on a fresh case (`evaluate` changes nothing): the cards counted or left out
        only as a second card of a role or a source, by role and content, with the source they count under."""
        by_claim: dict[str, dict[tuple[str, str], str]] = {}
        min_support, qualifying = 0, []
        for claim in case.scenario.claims:
            path = f"/api/cases/{case.case_id}/findings/evaluate"
            judged = httpx.post(self.url + path, json={"claim": claim}, timeout=REQUEST_TIMEOUT_S).json()
            min_support = judged["min_support"]
            [result] = judged["claims"]
            by_claim[claim] = {
                (c["role"], c["content"]): c["source"] or f"card:{c['content']}"
                for c in result["contributors"]
                if c["status"] in ("counted", "same_role", "shared_source")
            }
            if result["decision"] == "qualifies":
                qualifying.append(claim)
        return Supporters(min_support, by_claim, tuple(qualifying))

    def settle(self, case_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
        """The snapshot and findings once board copies and finding cards agree with their sources, polled for
        at most two publish leases and a maintenance period (plus a loaded machine's slack)."""
        started = time.monotonic()
        deadline = started + 2 * self.lease_s + MAINTENANCE_INTERVAL_S + QUIET_SLACK_S
        while True:
            snapshot = httpx.get(self.url + f"/api/cases/{case_id}", timeout=REQUEST_TIMEOUT_S).json()
            findings = httpx.get(self.url + f"/api/cases/{case_id}/findings", timeout=REQUEST_TIMEOUT_S).json()
            if not unsettled(snapshot, findings["findings"]) or time.monotonic() > deadline:
                return snapshot, findings["findings"], time.monotonic() - started
            time.sleep(0.25)  # a poll with a deadline: the maintenance loop mends on its own timer

    def check_batch(self, case: CaseUnderTest, answers: Sequence[Answer]) -> list[Violation]:
        """Check one batch's history; on success the case is ready for the next batch."""
        self.figures.record(answers)
        self.figures.histories += 1
        kinds = {a.command.kind for a in answers}
        self.figures.batches_with_reset += "reset" in kinds
        found = check_answers(self.contract, answers, erasing="erase" in kinds)
        if "erase" in kinds:
            self.figures.batches_with_erase += 1
            found += check_erased(self.data_dir, self.url, case.case_id, answers)
            self.keep(case, answers, None, found)
            return found
        snapshot, findings, waited = self.settle(case.case_id)
        self.figures.quiet_waits_s.append(waited)
        events = case_events(self.url, case.case_id)
        if events is None:
            found.append(Violation("case lost", "the case's event log is not found"))
        else:
            history = History(case, answers, events, snapshot, findings, self.supporters.get(case.scenario.id))
            found += check_history(history)
        self.keep(case, answers, {"events": events, "snapshot": snapshot, "findings": findings}, found)
        case.snapshot, case.last_event = snapshot, max((e.id for e in events or []), default=case.last_event)
        return found

    def keep(
        self, case: CaseUnderTest, answers: Sequence[Answer], after: dict[str, Any] | None, found: list[Violation]
    ) -> None:
        """A batch that broke a rule, kept for a human: the case at its start, every command with its answer,
        the log, snapshot and findings after it, and the violations."""
        if not found:
            return
        self.kept.mkdir(parents=True, exist_ok=True)
        path = self.kept / f"history-{self.figures.histories:04d}-{case.case_id}.json"
        record = {
            "case_id": case.case_id,
            "scenario": case.scenario.id,
            "last_event_before": case.last_event,
            "snapshot_before": case.snapshot,
            "answers": [
                {
                    **asdict(a.command),
                    "status": a.status,
                    "code": a.code,
                    "body": a.body,
                    "sent_at": a.sent_at,
                    "answered_at": a.answered_at,
                }
                for a in answers
            ],
            "after": after,
            "violations": [str(v) for v in found],
        }
        path.write_text(json.dumps(record, default=lambda o: asdict(o) if is_dataclass(o) else str(o), indent=1))
        self.log(f"[chaos]   history kept in {path}")

    def run(self, batches: int | None, seconds: float | None) -> Figures:
        """Batches until `batches` are done or `seconds` have passed (whichever first; at least one batch)."""
        started = time.monotonic()
        case: CaseUnderTest | None = None
        n = 0
        while True:
            if case is None:
                case = self.new_case()
            supporters = self.supporters.get(case.scenario.id)
            commands = self.mix.batch(case, supporters.qualifying if supporters else ())
            found = self.check_batch(case, fire(self.urls, commands))
            self.figures.violations += [(n, v) for v in found]
            kinds = Counter(c.kind for c in commands)
            erased = ", erase" if kinds["erase"] else ""
            self.log(
                f"[chaos] batch {n}: {len(commands)} commands ({kinds['reset']} resets{erased}) on "
                f"{case.scenario.id} {case.case_id}: {len(found)} violations"
            )
            for violation in found:
                self.log(f"[chaos]   {violation}")
            if kinds["erase"] or found:
                case = None  # a new case: an erased one is gone, a broken one would only repeat its violations
            n += 1
            self.figures.seconds = time.monotonic() - started
            if (batches is not None and n >= batches) or (seconds is not None and self.figures.seconds >= seconds):
                return self.figures
