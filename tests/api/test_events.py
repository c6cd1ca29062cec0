"""Live events over real HTTP: a real `bureau serve` process, httpx streaming, no sleeps.

Order and completeness of a whole game, resume by `Last-Event-ID` and `?after=`, heartbeats (also while
other cases are busy), delivery from a second process sharing the ledger within a second, the stream ending
after `case.erased`, and SIGTERM ending live streams promptly.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from helpers import ask, informant_secret_card, publish
from live_server import LiveServer
from sse_client import Comment, Frame, open_sse

STOP_DEADLINE_S = 5.0
CROSS_PROCESS_BUDGET_S = 1.0


# ----- helpers ------------------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module")
async def http(live_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def second_server(live_server: LiveServer) -> Iterator[LiveServer]:
    """A second OS process on the SAME data dir (embedded seekdb + SQLite ledger) as `live_server`."""
    server = LiveServer(live_server.data_dir).start()
    yield server
    server.stop()


async def create_case(http: httpx.AsyncClient, scenario_id: str = "safe-combination", language: str = "en") -> dict:
    response = await http.post("/api/cases", json={"scenario_id": scenario_id, "language": language})
    assert response.status_code == 201, response.text
    return response.json()


async def whisper(http: httpx.AsyncClient, case_id: str, role: str, text: str) -> dict[str, Any]:
    response = await http.post(f"/api/cases/{case_id}/whispers", json={"role": role, "text": text})
    assert response.status_code == 201, response.text
    return response.json()["card"]


def types(frames: list[Frame]) -> list[str]:
    return [f.event for f in frames]


def assert_strictly_increasing(frames: list[Frame]) -> None:
    ids = [f.id for f in frames]
    assert all(isinstance(i, int) for i in ids), ids
    assert all(a < b for a, b in itertools.pairwise(ids)), ids


INTERROGATION = ["memory.written", "retrieval.completed", "answer.completed"]
PUBLICATION = ["publication.started", "memory.written", "publication.completed"]


# ----- a whole game, in order -------------------------------------------------------------------------


async def test_a_subscriber_receives_every_event_of_a_full_game_in_order(http: httpx.AsyncClient) -> None:
    case = await create_case(http)
    case_id = case["case"]["id"]
    secret = informant_secret_card(case)

    async with (
        open_sse(http, f"/api/cases/{case_id}/events") as operator,
        open_sse(http, f"/api/cases/{case_id}/stage/events") as stage,
    ):
        assert operator.status_code == 200 and stage.status_code == 200
        assert operator.response.headers["content-type"].startswith("text/event-stream")
        assert operator.response.headers["cache-control"] == "no-store"
        received: list[Frame] = []

        # After each command, read exactly the frames it must produce, live.
        async def read(n: int) -> list[Frame]:
            frames = [await operator.next_frame() for _ in range(n)]
            received.extend(frames)
            return frames

        assert types(await read(1)) == ["case.created"]  # replayed: no cursor means from the start
        await ask(http, case_id, "detective")
        assert types(await read(3)) == INTERROGATION
        informant_answer = await ask(http, case_id, "informant")
        assert informant_answer["certainty"] == "known"
        assert types(await read(3)) == INTERROGATION
        await whisper(http, case_id, "suspect", "The getaway car is parked behind the bakery.")
        assert types(await read(1)) == ["memory.written"]
        published = await publish(http, case_id, "informant", secret["id"])
        assert published.status_code == 201, published.text
        assert types(await read(3)) == PUBLICATION
        after_publish = await ask(http, case_id, "detective")
        assert after_publish["certainty"] == "known"  # from the board copy
        assert types(await read(3)) == INTERROGATION
        assert (await http.post(f"/api/cases/{case_id}/reset")).status_code == 200
        assert types(await read(1)) == ["case.reset"]
        assert (await http.delete(f"/api/cases/{case_id}")).status_code == 204
        assert types(await read(1)) == ["case.erased"]
        # The stream ends after the tombstone: nothing else, and the server closes it.
        assert await operator.wait_closed(STOP_DEADLINE_S) == []
        stage_frames = await stage.wait_closed(STOP_DEADLINE_S)

    assert types(received) == [
        "case.created",
        *INTERROGATION,
        *INTERROGATION,
        "memory.written",
        *PUBLICATION,
        *INTERROGATION,
        "case.reset",
        "case.erased",
    ]
    assert_strictly_increasing(received)
    assert operator.retry_ms and operator.retry_ms[0] > 0
    assert operator.text().startswith("retry:")
    assert all(f.data["case_id"] == case_id for f in received)
    versions = [f.data["version"] for f in received[:-1]]
    assert versions == sorted(versions)
    assert received[-1].data["version"] == 0  # the tombstone carries nothing of the case
    published_id = published.json()["public_card"]["id"]
    completed = next(f for f in received if f.event == "publication.completed")
    assert completed.data["public_card_id"] == published_id

    # The stage stream saw the same game, minus what has no public projection (answers).
    assert stage.retry_ms
    assert types(stage_frames) == [t for t in types(received) if t != "answer.completed"]
    assert [f.id for f in stage_frames] == [f.id for f in received if f.event != "answer.completed"]


# ----- resume ------------------------------------------------------------------------------------------


async def _play_some(http: httpx.AsyncClient, case_id: str) -> None:
    await ask(http, case_id, "detective", "Where is the safe?")
    await whisper(http, case_id, "detective", "The butler keeps a spare key under the doormat.")


async def test_reconnecting_with_last_event_id_or_after_yields_exactly_the_missed_events(
    http: httpx.AsyncClient,
) -> None:
    case_id = (await create_case(http))["case"]["id"]
    await _play_some(http, case_id)  # 1 + 3 + 1 = 5 events

    async with open_sse(http, f"/api/cases/{case_id}/events", params={"after": 0}) as first:
        seen = await first.frames_until_idle()
    assert types(seen) == ["case.created", *INTERROGATION, "memory.written"]
    last_seen = seen[2].id  # pretend the connection dropped after the third frame
    assert last_seen is not None

    await _play_some(http, case_id)  # 4 more while "disconnected"
    async with open_sse(http, f"/api/cases/{case_id}/events", params={"after": 0}) as full:
        everything = await full.frames_until_idle()
    assert len(everything) == 9
    assert_strictly_increasing(everything)
    expected = [(f.id, f.event, f.data) for f in everything if f.id > last_seen]  # type: ignore[operator]
    assert len(expected) == 6

    variants: list[tuple[dict[str, str], dict[str, Any]]] = [
        ({"Last-Event-ID": str(last_seen)}, {}),
        ({}, {"after": last_seen}),
        ({"Last-Event-ID": str(last_seen)}, {"after": 0}),  # the header wins over the query
    ]
    for headers, params in variants:
        async with open_sse(http, f"/api/cases/{case_id}/events", headers=headers, params=params) as resumed:
            # Everything pending comes before the first heartbeat: exactly the missed events, no duplicates.
            frames = await resumed.frames_until_idle()
        assert [(f.id, f.event, f.data) for f in frames] == expected, (headers, params)

    # The stage stream resumes the same way (over its projected frames).
    async with open_sse(http, f"/api/cases/{case_id}/stage/events", headers={"Last-Event-ID": str(last_seen)}) as stage:
        stage_frames = await stage.frames_until_idle()
    assert [f.id for f in stage_frames] == [i for i, t, _ in expected if t != "answer.completed"]

    # Resuming at the newest id: nothing, just heartbeats.
    async with open_sse(http, f"/api/cases/{case_id}/events", params={"after": everything[-1].id}) as idle:
        assert await idle.frames_until_idle() == []


async def test_a_bad_cursor_or_an_unknown_case_is_a_clear_error(http: httpx.AsyncClient) -> None:
    case_id = (await create_case(http))["case"]["id"]
    bad_header = await http.get(f"/api/cases/{case_id}/events", headers={"Last-Event-ID": "abc"})
    assert bad_header.status_code == 422
    assert bad_header.json()["detail"]["code"] == "VALIDATION_ERROR"
    negative = await http.get(f"/api/cases/{case_id}/stage/events", params={"after": -1})
    assert negative.status_code == 422
    for path in ("events", "stage/events"):
        missing = await http.get(f"/api/cases/NoSuchCase0000/{path}")
        assert missing.status_code == 404
        assert missing.json()["detail"]["code"] == "CASE_NOT_FOUND"


# ----- heartbeats ----------------------------------------------------------------------------------------


async def test_heartbeats_arrive_on_a_quiet_stream(http: httpx.AsyncClient) -> None:
    case_id = (await create_case(http))["case"]["id"]
    async with open_sse(http, f"/api/cases/{case_id}/stage/events") as stream:
        assert (await stream.next_frame()).event == "case.created"
        pings = [await stream.next_comment(timeout_s=5) for _ in range(2)]
    assert [p.text for p in pings] == ["ping", "ping"]
    assert 0.5 <= pings[1].received_at - pings[0].received_at <= 3.0  # BUREAU_HEARTBEAT_S=1


async def test_heartbeats_keep_coming_while_other_cases_are_busy(http: httpx.AsyncClient) -> None:
    """Every commit wakes every subscriber; a quiet case's stream must still get its heartbeat on time."""
    quiet_id = (await create_case(http))["case"]["id"]
    busy_id = (await create_case(http))["case"]["id"]
    async with open_sse(http, f"/api/cases/{quiet_id}/events") as quiet:
        assert (await quiet.next_frame()).event == "case.created"
        await quiet.next_comment(timeout_s=5)  # in the steady state
        start = time.monotonic()
        commands = 0
        while time.monotonic() - start < 3.5:  # a steady stream of commits on another case
            await whisper(http, busy_id, "suspect", f"Busy note number {commands}.")
            commands += 1
        window_end = time.monotonic()
        pings = [c for c in quiet.comments if start < c.received_at <= window_end]
        assert commands >= 5
        assert len(pings) >= 2, f"{len(pings)} heartbeats in 3.5 s while another case committed {commands} events"
        assert [f.event for f in quiet.frames] == ["case.created"]  # nothing of the busy case leaked in


# ----- a second process ----------------------------------------------------------------------------------


async def test_an_event_committed_by_a_second_process_reaches_a_subscriber_within_a_second(
    live_server: LiveServer, second_server: LiveServer
) -> None:
    async with (
        httpx.AsyncClient(base_url=live_server.url, timeout=30) as on_a,
        httpx.AsyncClient(base_url=second_server.url, timeout=30) as on_b,
    ):
        case_id = (await create_case(on_a))["case"]["id"]
        async with open_sse(on_a, f"/api/cases/{case_id}/events") as stream:
            assert (await stream.next_frame()).event == "case.created"
            latencies: list[float] = []
            # Measured from the command's answer (its events are committed by then), so the command's own
            # time on a busy machine does not count against the cross-process wake-up.
            for n in range(3):
                await whisper(on_b, case_id, "informant", f"Second process tip number {n}.")
                committed = time.monotonic()
                frame = await stream.next_frame(timeout_s=5)
                assert frame.event == "memory.written"
                latencies.append(frame.received_at - committed)
            await ask(on_b, case_id, "detective", "Who forced the back door?")
            committed = time.monotonic()
            frames = [await stream.next_frame(timeout_s=5) for _ in range(3)]
            assert types(frames) == INTERROGATION
            latencies.append(frames[0].received_at - committed)
            # Commands on both processes interleave into one ordered stream.
            await whisper(on_a, case_id, "suspect", "First process note.")
            await whisper(on_b, case_id, "suspect", "Second process note.")
            interleaved = [await stream.next_frame(timeout_s=5) for _ in range(2)]
            assert types(interleaved) == ["memory.written", "memory.written"]
            assert_strictly_increasing(stream.frames)
    assert max(latencies) < CROSS_PROCESS_BUDGET_S, latencies


# ----- shutdown ------------------------------------------------------------------------------------------


async def test_sigterm_ends_live_streams_promptly(second_server: LiveServer) -> None:
    """Runs last in this module: it stops the second server (the module fixture tolerates that)."""
    async with httpx.AsyncClient(base_url=second_server.url, timeout=30) as on_b:
        case_id = (await create_case(on_b))["case"]["id"]
        async with (
            open_sse(on_b, f"/api/cases/{case_id}/events", read_timeout_s=30) as operator,
            open_sse(on_b, f"/api/cases/{case_id}/stage/events", read_timeout_s=30) as stage,
        ):
            for stream in (operator, stage):
                assert (await stream.next_frame()).event == "case.created"
                assert isinstance(await stream.next_item(timeout_s=5), Comment)  # live and idle
            process = second_server.process
            assert process is not None
            stopped_at = time.monotonic()
            process.send_signal(signal.SIGTERM)
            for stream in (operator, stage):
                await stream.wait_closed(STOP_DEADLINE_S)
                assert stream.closed_at is not None
                assert stream.closed_at - stopped_at < STOP_DEADLINE_S
            code = await asyncio.to_thread(process.wait, 20)
    exited_after = time.monotonic() - stopped_at
    log = second_server.log_text()
    second_server.stop()
    # A graceful shutdown (lifespan finished), then uvicorn re-raises the captured SIGTERM.
    assert code in (0, -signal.SIGTERM), code
    assert "Application shutdown complete" in log
    assert exited_after < 15, exited_after
