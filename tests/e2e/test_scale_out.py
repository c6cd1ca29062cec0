"""Scale-out for real: two `bureau serve` instances over one seekdb server (TCP, root password) and one
PostgreSQL ledger, all on loopback, passcodes on. Each test prints its figures."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pymysql
import pytest
import pytest_asyncio

from bureau.game.interrogation import SESSION_MEMORY_KEEP
from bureau.memory.seekdb_search import OWNER_INDEX
from helpers import QUESTION, informant_secret_card
from live_server import REPO, LiveServer
from servers import PostgresCluster, SeekdbServer
from sse_client import open_sse

OPERATOR, STAGE = "operator-passcode-1", "stage-passcode-22"
CONCURRENT_PUBLISHES = 25  # per instance
CONCURRENT_WHISPERS = 200  # per instance
_clients = itertools.count(1)


@dataclass
class Deployment:
    postgres: PostgresCluster
    seekdb: SeekdbServer
    env: dict[str, str]
    a: LiveServer
    b: LiveServer
    root: Path

    def instance(self, name: str) -> LiveServer:
        data_dir = self.root / name
        data_dir.mkdir()
        return LiveServer(data_dir, **self.env).start()

    def store_counts(self, case_id: str) -> dict[str, int]:
        """Cards per space, counted in the store itself (not through the API)."""
        rows = self.seekdb.query(
            "SELECT agent_id, COUNT(*) FROM bureau_cards WHERE user_id = %s GROUP BY agent_id", f"case:{case_id}"
        )
        return {agent: int(count) for agent, count in rows}


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]


def report(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\n[scale-out] {line}")


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    postgres = PostgresCluster()
    if not postgres.available:
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs Debian's postgresql)")
    root = tmp_path_factory.mktemp("scale-out")
    postgres.start()
    seekdb = SeekdbServer(root / "seekdb", password="seekdb-root-pw").start()
    kek = root / "secrets" / "bureau_vault_kek"  # what compose mounts as a secret: made by the operator
    kek.parent.mkdir(mode=0o700)
    kek.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    kek.chmod(0o600)
    env = {
        **seekdb.env(),
        "BUREAU_DATABASE_URL": postgres.url,
        # The vault: a database of its own beside the ledger's, and the KEK as a file both instances read.
        "BUREAU_VAULT_DATABASE_URL": postgres.vault_url,
        "BUREAU_VAULT_KEK_FILE": str(kek),
        "BUREAU_OPERATOR_PASSCODE": OPERATOR,
        "BUREAU_STAGE_PASSCODE": STAGE,
        "BUREAU_TRUSTED_PROXIES": "127.0.0.1",  # each test signs in as its own client address
    }
    instances: list[LiveServer] = []
    try:
        # The setup step, once: migrations, the seekdb database and collection. Instances never create them.
        setup = [sys.executable, "-m", "bureau.cli", "setup", "--data-dir", str(root / "setup")]
        done = subprocess.run(setup, cwd=REPO, env=LiveServer(root).environment() | env, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        deployment = Deployment(postgres, seekdb, env, None, None, root)  # type: ignore[arg-type]
        deployment.a = deployment.instance("a")
        instances.append(deployment.a)
        deployment.b = deployment.instance("b")
        instances.append(deployment.b)
        yield deployment
    finally:
        for server in instances:
            server.stop()
        seekdb.stop()
        postgres.stop()
    for server in instances:
        assert "Traceback" not in server.log_text()


async def sign_in(server: LiveServer, passcode: str = OPERATOR, client_ip: str | None = None) -> dict[str, Any]:
    """A session opened on one instance; it is a ledger row, so every instance honours it."""
    headers = {"X-Bureau-Passcode": passcode, "X-Forwarded-For": client_ip or f"10.0.0.{next(_clients)}"}
    async with httpx.AsyncClient(base_url=server.url) as http:
        response = await http.post("/api/session", headers=headers)
    assert response.status_code == 204, response.text
    return {"cookies": dict(response.cookies), "headers": {"X-CSRF-Token": response.headers["X-CSRF-Token"]}}


@pytest_asyncio.fixture
async def clients(deployment: Deployment) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    session = await sign_in(deployment.a)
    # Idle connections closed before uvicorn's 5 s keep-alive does: no request sent on a closing socket.
    limits = httpx.Limits(max_connections=400, keepalive_expiry=1.0)
    async with (
        httpx.AsyncClient(base_url=deployment.a.url, timeout=120, limits=limits, **session) as a,
        httpx.AsyncClient(base_url=deployment.b.url, timeout=120, limits=limits, **session) as b,
    ):
        yield a, b


async def new_case(http: httpx.AsyncClient) -> dict[str, Any]:
    response = await http.post("/api/cases", json={"scenario_id": "safe-combination"})
    assert response.status_code == 201, response.text
    return response.json()


async def ask(http: httpx.AsyncClient, case_id: str, role: str) -> dict[str, Any]:
    response = await http.post(f"/api/cases/{case_id}/interrogations", json={"role": role, "question": QUESTION})
    assert response.status_code == 200, response.text
    return response.json()


async def whisper(http: httpx.AsyncClient, case_id: str, text: str, role: str = "detective") -> httpx.Response:
    return await http.post(f"/api/cases/{case_id}/whispers", json={"role": role, "text": text})


async def test_a_game_played_half_through_a_and_half_through_b_is_consistent(clients, deployment) -> None:
    a, b = clients
    case = await new_case(a)
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    assert (await ask(b, case_id, "detective"))["certainty"] == "unknown"
    assert (await ask(a, case_id, "informant"))["evidence"] == [secret["id"]]
    published = await b.post(f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": secret["id"]})
    assert published.status_code == 201
    again = await a.post(f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": secret["id"]})
    assert again.status_code == 200 and again.json()["idempotent"] is True
    assert again.json()["public_card"]["id"] == published.json()["public_card"]["id"]
    detective = await ask(a, case_id, "detective")
    assert detective["certainty"] == "known"
    assert detective["evidence"] == [published.json()["public_card"]["id"]]
    assert (await whisper(b, case_id, "The gardener saw a blue van at midnight.")).status_code == 201

    seen_a, seen_b = (await a.get(f"/api/cases/{case_id}")).json(), (await b.get(f"/api/cases/{case_id}")).json()
    assert seen_a == seen_b  # one game, whichever instance answers
    reset = await b.post(f"/api/cases/{case_id}/reset")
    assert reset.status_code == 200
    after = (await a.get(f"/api/cases/{case_id}")).json()
    assert after["spaces"]["bulletin_board"] == [] and after["case"]["version"] == reset.json()["case"]["version"]
    assert (await ask(a, case_id, "detective"))["certainty"] == "unknown"  # the reset reached A's answers too
    assert (await a.delete(f"/api/cases/{case_id}")).status_code == 204
    assert (await b.get(f"/api/cases/{case_id}")).status_code == 404
    assert deployment.store_counts(case_id) == {}


async def test_questions_alternating_between_instances_keep_the_last_five_session_records(clients) -> None:
    """Each instance trims by the ids it knows; the other's records become known as soon as its search returns
    them, so the role's space holds the newest five, not five per instance."""
    a, b = clients
    case_id = (await new_case(a))["case"]["id"]
    for n in range(1, 13):
        await ask((a, b)[n % 2], case_id, "detective")
        cards = (await a.get(f"/api/cases/{case_id}")).json()["spaces"]["detective"]
        assert sum(1 for card in cards if card["memory_type"] == "session") == min(n, SESSION_MEMORY_KEEP), n
    assert (await a.delete(f"/api/cases/{case_id}")).status_code == 204


async def test_a_stage_on_a_sees_events_caused_through_b_within_one_second(clients, deployment, capsys) -> None:
    a, b = clients
    case_id = (await new_case(a))["case"]["id"]
    stage = await sign_in(deployment.b, STAGE)  # a stage session opened on B, streaming from A
    latencies = []
    async with (
        httpx.AsyncClient(base_url=deployment.a.url, timeout=30, **stage) as stage_client,
        open_sse(stage_client, f"/api/cases/{case_id}/stage/events") as stream,
    ):
        assert stream.status_code == 200
        await stream.frames_until(lambda f: f.event == "case.created")  # the case's history so far
        for n in range(10):
            sent = time.monotonic()
            assert (await whisper(b, case_id, f"Witness statement number {n} was taken.")).status_code == 201
            acknowledged = time.monotonic()  # B has committed the event by now
            frame = await stream.next_frame(timeout_s=5)
            latencies.append((frame.received_at - sent, max(0.0, frame.received_at - acknowledged)))
            assert frame.event == "memory.written"
            assert "Witness" not in frame.raw  # the stage gets counts, never private text
    end_to_end, after_commit = sorted(t for t, _ in latencies), max(t for _, t in latencies)
    report(
        capsys,
        f"stage on A, whispers through B: request to frame median {end_to_end[5]:.3f} s, max {end_to_end[-1]:.3f} s;"
        f" B's acknowledgement to frame max {after_commit:.3f} s",
    )
    assert after_commit < 1.0


async def test_concurrent_publishes_of_one_card_through_both_leave_exactly_one_board_copy(
    clients, deployment, capsys
) -> None:
    a, b = clients
    case = await new_case(a)
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    body = {"role": "informant", "card_id": secret["id"]}

    async def publish(http: httpx.AsyncClient) -> httpx.Response:
        for _ in range(20):  # a client honours 409 PUBLICATION_PENDING + Retry-After
            response = await http.post(f"/api/cases/{case_id}/publications", json=body)
            if response.status_code != 409:
                return response
            await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
        return response

    started = time.monotonic()
    results = await asyncio.gather(*(publish(http) for http in [a, b] * CONCURRENT_PUBLISHES))
    elapsed = time.monotonic() - started
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(201) == 1 and statuses.count(200) == 2 * CONCURRENT_PUBLISHES - 1, statuses
    assert len({r.json()["public_card"]["id"] for r in results}) == 1
    assert deployment.store_counts(case_id).get("bulletin_board") == 1
    board = (await b.get(f"/api/cases/{case_id}")).json()["spaces"]["bulletin_board"]
    assert [c["source"]["card_id"] for c in board] == [secret["id"]]
    report(capsys, f"2 x {CONCURRENT_PUBLISHES} concurrent publishes: 1 board copy, {elapsed:.1f} s")


async def test_concurrent_whispers_through_both_all_survive_in_the_store(clients, deployment, capsys) -> None:
    a, b = clients
    case_id = (await new_case(a))["case"]["id"]
    opening = deployment.store_counts(case_id).get("detective", 0)
    started = time.monotonic()
    texts = [f"Clue {n} from the {'east' if n % 2 else 'west'} wing." for n in range(2 * CONCURRENT_WHISPERS)]
    refusals = []

    async def whisper_until_acknowledged(http: httpx.AsyncClient, text: str) -> httpx.Response:
        """A client honours 503 + Retry-After (an overloaded store call times out and is undone)."""
        for _ in range(10):
            response = await whisper(http, case_id, text)
            if response.status_code != 503:
                return response
            refusals.append(response.json()["detail"]["code"])
            await asyncio.sleep(float(response.headers["Retry-After"]))
        return response

    results = await asyncio.gather(
        *(whisper_until_acknowledged(http, text) for http, text in zip(itertools.cycle([a, b]), texts, strict=False))
    )
    elapsed = time.monotonic() - started
    assert [r.status_code for r in results] == [201] * len(texts)
    assert set(refusals) <= {"MEMORY_UNAVAILABLE"}
    ids = {r.json()["card"]["id"] for r in results}
    assert len(ids) == len(texts)  # distinct ids: the two instances never shared a worker id
    listed = (await b.get(f"/api/cases/{case_id}")).json()["spaces"]["detective"]
    assert ids <= {c["id"] for c in listed}
    # Exactly the acknowledged ones: a refused (timed-out) write is undone once it finishes on the server.
    deadline = time.monotonic() + 60
    while (stored := deployment.store_counts(case_id)["detective"] - opening) != len(texts):
        assert stored > len(texts) and time.monotonic() < deadline, stored
        await asyncio.sleep(0.5)
    figures = f"{stored}/{len(texts)} in the store, {elapsed:.1f} s, {len(refusals)} retried after 503"
    report(capsys, f"2 x {CONCURRENT_WHISPERS} concurrent whispers: {figures}")
    processes = {"instance A": deployment.a.process, "instance B": deployment.b.process}
    processes["seekdb server"] = deployment.seekdb.process
    sizes = ", ".join(f"{name} {rss_mb(p.pid):.0f} MB" for name, p in processes.items() if p is not None)
    report(capsys, f"resident memory after the whispers: {sizes}")


async def test_sigkill_of_one_instance_loses_nothing_acknowledged_and_the_other_keeps_serving(
    clients, deployment, capsys
) -> None:
    _, b = clients
    victim = deployment.instance("victim")  # its own process, so the other tests keep both A and B
    session = await sign_in(victim)
    case_id = (await new_case(b))["case"]["id"]
    opening = deployment.store_counts(case_id).get("suspect", 0)
    acknowledged: list[str] = []

    async with httpx.AsyncClient(base_url=victim.url, timeout=30, **session) as doomed:

        async def keep_whispering(n: int) -> None:
            try:
                response = await whisper(doomed, case_id, f"Alibi detail {n} was checked.", role="suspect")
            except httpx.HTTPError:
                return  # the connection died with the process: not acknowledged
            if response.status_code == 201:
                acknowledged.append(response.json()["card"]["id"])

        writers = [asyncio.create_task(keep_whispering(n)) for n in range(60)]
        while len(acknowledged) < 10:  # mid-game: some acknowledged, some in flight
            await asyncio.sleep(0.05)
        assert victim.process is not None
        victim.process.send_signal(signal.SIGKILL)
        await asyncio.gather(*writers)
        victim.process.wait(timeout=10)

    listed = {c["id"] for c in (await b.get(f"/api/cases/{case_id}")).json()["spaces"]["suspect"]}
    assert set(acknowledged) <= listed  # nothing acknowledged was lost
    stored = deployment.store_counts(case_id)["suspect"] - opening
    assert (await whisper(b, case_id, "The survivor instance still writes.")).status_code == 201
    assert (await ask(b, case_id, "informant"))["certainty"] == "known"
    report(capsys, f"SIGKILL mid-game: {len(acknowledged)} acknowledged, all kept; {stored} in the store; B served on")


async def test_five_wrong_passcodes_spread_over_both_instances_trigger_the_throttle(deployment, capsys) -> None:
    guesser, bystander = "10.9.9.9", "10.9.9.10"
    statuses = []
    for n, server in enumerate([deployment.a, deployment.b] * 3):
        async with httpx.AsyncClient(base_url=server.url) as http:
            headers = {"X-Bureau-Passcode": f"wrong-guess-{n}", "X-Forwarded-For": guesser}
            statuses.append((await http.post("/api/session", headers=headers)).status_code)
    assert statuses == [401] * 5 + [429]  # the 6th guess, whichever instance it reaches
    for server in (deployment.a, deployment.b):  # even the right passcode: no oracle while throttled
        async with httpx.AsyncClient(base_url=server.url) as http:
            right = await http.post("/api/session", headers={"X-Bureau-Passcode": OPERATOR, "X-Forwarded-For": guesser})
            assert right.status_code == 429 and int(right.headers["Retry-After"]) > 0
    await sign_in(deployment.b, client_ip=bystander)  # another client is not affected
    report(capsys, f"throttle: guesses A,B,A,B,A -> {statuses[:5]}, 6th (on B) -> {statuses[5]}")


async def test_the_live_stream_cap_of_a_session_holds_across_instances(clients, deployment) -> None:
    a, b = clients
    case_id = (await new_case(a))["case"]["id"]
    url = f"/api/cases/{case_id}/events"
    cap = 6  # BUREAU_MAX_SSE_PER_SESSION default
    async with contextlib.AsyncExitStack() as streams:
        opened = [await streams.enter_async_context(open_sse(http, url)) for http in [a, b] * (cap // 2)]
        assert [s.status_code for s in opened] == [200] * cap
        for http in (a, b):
            async with open_sse(http, url) as refused:
                assert refused.status_code == 429
        await opened[0].aclose()  # a stream on A ends: B may open one now

        async def reopened_on_b() -> int:
            async with open_sse(b, url) as stream:
                return stream.status_code

        deadline = time.monotonic() + 10
        while (status := await reopened_on_b()) != 200:
            assert status == 429 and time.monotonic() < deadline
            await asyncio.sleep(0.1)


def preflight(deployment: Deployment, **overrides: str) -> subprocess.CompletedProcess[str]:
    env = LiveServer(deployment.root).environment() | deployment.env | overrides
    command = [sys.executable, "-m", "bureau.cli", "preflight", "--data-dir", str(deployment.root / "preflight")]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_setup_secured_the_fresh_seekdb_server(deployment) -> None:
    """The server starts with a passwordless root on every interface; `bureau setup` set the password."""
    with pytest.raises(pymysql.err.OperationalError) as refused:
        pymysql.connect(host="127.0.0.1", port=deployment.seekdb.port, user="root", password="")
    assert refused.value.args[0] == 1045
    assert deployment.seekdb.query("SELECT 1") == [(1,)]  # with the configured password


def test_preflight_passes_on_the_deployment_and_names_each_problem_without_secrets(deployment) -> None:
    good = preflight(deployment)
    assert good.returncode == 0, good.stdout
    assert "Ready." in good.stdout and "FAIL" not in good.stdout

    wrong_password = preflight(deployment, BUREAU_SEEKDB_PASSWORD="not-the-root-password")
    assert wrong_password.returncode == 1
    assert "FAIL  memory store" in wrong_password.stdout and "1045" in wrong_password.stdout  # access denied

    deployment.postgres.psql("CREATE DATABASE unmigrated", database="postgres")
    unmigrated_url = deployment.postgres.url.rsplit("/", 1)[0] + "/unmigrated"
    fresh = preflight(deployment, BUREAU_DATABASE_URL=unmigrated_url, BUREAU_SEEKDB_DATABASE="nothing_here")
    assert fresh.returncode == 1
    assert "FAIL  migrations" in fresh.stdout and "run bureau setup" in fresh.stdout
    assert "no database 'nothing_here'" in fresh.stdout

    held = deployment.postgres.psql("SELECT min(slot) FROM process_slots")  # leased by a running instance
    taken = preflight(deployment, BUREAU_WORKER_ID=held)
    assert taken.returncode == 1 and f"BUREAU_WORKER_ID={held} is held by a live instance" in taken.stdout

    everything = good.stdout + wrong_password.stdout + fresh.stdout + taken.stdout
    everything += good.stderr + wrong_password.stderr + fresh.stderr + taken.stderr
    for secret in (deployment.seekdb.password, "not-the-root-password", OPERATOR, STAGE):
        assert secret not in everything


def owner_index_columns(deployment: Deployment) -> list[str]:
    rows = deployment.seekdb.query(
        "SELECT column_name FROM information_schema.statistics WHERE table_schema = 'bureau' "
        f"AND table_name = 'bureau_cards' AND index_name = '{OWNER_INDEX}' ORDER BY seq_in_index"
    )
    return [str(row[0]).lower() for row in rows]


def test_setup_gives_the_collection_its_owner_index_and_preflight_names_a_missing_one(deployment) -> None:
    """Scoped searches read the owner index, not the whole table. `bureau setup` creates it, runs again
    without harm, and preflight says what to run where it is missing."""
    assert owner_index_columns(deployment) == ["user_id", "agent_id"]
    deployment.seekdb.query(f"DROP INDEX {OWNER_INDEX} ON bureau.bureau_cards")
    try:
        missing = preflight(deployment)
    finally:  # the index back for the tests after this one, whatever preflight did
        setup = [sys.executable, "-m", "bureau.cli", "setup", "--data-dir", str(deployment.root / "setup")]
        env = LiveServer(deployment.root).environment() | deployment.env
        again = subprocess.run(setup, cwd=REPO, env=env, capture_output=True, timeout=300)
    assert missing.returncode == 1
    assert "FAIL  memory store" in missing.stdout and "no owner index: run bureau setup" in missing.stdout
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert owner_index_columns(deployment) == ["user_id", "agent_id"]
    assert preflight(deployment).returncode == 0
