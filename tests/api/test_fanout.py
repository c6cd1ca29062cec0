"""Fan-out of live events to many stage screens, each with its own session, over real HTTP.

Every subscriber of a case is served from one shared read of each new event (api/events.py `CaseFeed`):
these tests prove that sharing loses nothing, duplicates nothing, keeps the order, and gives each audience
its own projection — while commands commit concurrently and screens join mid-game — and that a stream
further behind than the feed keeps still gets everything.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
import pytest_asyncio

from bureau.api import events
from bureau.api.delivery import project_event
from bureau.api.deps import Services
from bureau.api.events import event_stream
from bureau.ledger.repository import EventRecord, LedgerError
from bureau.scope.audience import Audience
from helpers import NewCase, informant_secret_card, signed_in_headers
from live_server import OPERATOR_PASSCODE, STAGE_PASSCODE, LiveServer
from sse_client import SSEStream, open_sse

SUBSCRIBERS = 50
WHISPERS = [f"Field note {i}: the courier changed trains at platform {i}." for i in range(8)]
DEADLINE_S = 60.0


@pytest_asyncio.fixture(scope="module")
async def http(passcode_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    limits = httpx.Limits(max_connections=SUBSCRIBERS + 20)
    async with httpx.AsyncClient(base_url=passcode_server.url, timeout=30, limits=limits) as client:
        yield client


async def test_fifty_stage_screens_each_get_every_public_event_exactly_once_in_order(
    http: httpx.AsyncClient,
) -> None:
    operator = await signed_in_headers(http, OPERATOR_PASSCODE)
    stages = [await signed_in_headers(http, STAGE_PASSCODE) for _ in range(SUBSCRIBERS)]
    created = await http.post("/api/cases", json={"scenario_id": "safe-combination"}, headers=operator)
    assert created.status_code == 201, created.text
    case = created.json()
    case_id = case["case"]["id"]
    base = f"/api/cases/{case_id}"

    async def play() -> None:
        """Whispers, questions and a publication, several at once: commits race the fan-out."""
        whispers = [
            http.post(f"{base}/whispers", json={"role": "suspect", "text": text}, headers=operator) for text in WHISPERS
        ]
        asks = [
            http.post(
                f"{base}/interrogations", json={"role": role, "question": "Where did the courier go?"}, headers=operator
            )
            for role in ("detective", "informant")
        ]
        for response in await asyncio.gather(*whispers, *asks):
            assert response.status_code in (200, 201), response.text
        secret = informant_secret_card(case)
        published = await http.post(
            f"{base}/publications", json={"role": "informant", "card_id": secret["id"]}, headers=operator
        )
        assert published.status_code == 201, published.text

    async with AsyncExitStack() as stack:
        operator_stream = await stack.enter_async_context(open_sse(http, f"{base}/events", headers=operator))
        assert operator_stream.status_code == 200
        early = [
            await stack.enter_async_context(open_sse(http, f"{base}/stage/events", headers=h))
            for h in stages[: SUBSCRIBERS // 2]
        ]
        game = asyncio.create_task(play())
        late: list[SSEStream] = []
        for headers in stages[SUBSCRIBERS // 2 :]:  # the other half joins while the game is being played
            late.append(await stack.enter_async_context(open_sse(http, f"{base}/stage/events", headers=headers)))
        await game
        done = await operator_stream.frames_until(lambda f: f.event == "publication.completed", DEADLINE_S)
        operator_frames = list(operator_stream.frames)
        assert done[-1].event == "publication.completed"
        subscribers = early + late
        assert all(s.status_code == 200 for s in subscribers)
        # Every stage stream replays from the case's start, so each must end with the same last frame.
        last_id = done[-1].id
        for stream in subscribers:
            await stream.frames_until(lambda f: f.id == last_id, DEADLINE_S)

    expected = [
        (f.id, f.event, projected)
        for f in operator_frames
        if (projected := project_event(Audience.STAGE, f.event, f.data)) is not None
    ]
    assert len(expected) >= len(WHISPERS) + 3
    assert "answer.completed" in {f.event for f in operator_frames}  # the operator's, never the stage's
    for stream in subscribers:
        received = [(f.id, f.event, f.data) for f in stream.frames]
        assert received == expected  # nothing lost, nothing twice, same order, the stage projection
        text = stream.text()
        assert "answer.completed" not in text
        assert not any(whisper in text for whisper in WHISPERS)


async def test_a_stream_further_behind_than_the_feed_keeps_still_gets_everything(
    monkeypatch: pytest.MonkeyPatch, services: Services, new_case: NewCase
) -> None:
    """In-process on the session's app, with a feed that keeps only 3 events: a stream from the start
    keeps the feed alive while 12 events go past, then a stage stream from the start (behind the feed: it
    reads the ledger by itself, then joins the feed) and one at the head both get exactly their events."""
    monkeypatch.setattr(events, "FEED_KEEP", 3)
    case_id = (await new_case())["case"]["id"]

    async def never_gone() -> bool:
        return False

    async def collect(ids: list[int], cursor: int, count: int, audience: Audience) -> None:
        stream = event_stream(services.hub, case_id, audience, cursor, DEADLINE_S, never_gone)
        async with asyncio.timeout(DEADLINE_S):
            async for chunk in stream:  # one chunk may carry several frames
                ids += [
                    int(f.split("\n", 1)[0].removeprefix("id: ")) for f in chunk.split("\n\n") if f.startswith("id: ")
                ]
                if len(ids) >= count:
                    break
        await stream.aclose()

    async def whisper(i: int) -> None:
        await services.bureau.whisper_service.whisper(
            case_id, "detective", f"Ledger line {i}: crates at dock {i}.", None
        )

    first: list[int] = []
    keeping = asyncio.create_task(collect(first, 0, 14, Audience.OPERATOR))  # case.created + 13 whispers
    for i in range(12):
        await whisper(i)
    async with asyncio.timeout(DEADLINE_S):
        while len(first) < 13:  # a poll with a deadline: the stream's own progress
            await asyncio.sleep(0.01)
    feed = services.hub.open_feed(case_id)
    assert feed is not None and feed.floor > 0  # the feed has moved on: a stream from 0 is behind it

    behind: list[int] = []
    at_head: list[int] = []
    late = [
        asyncio.create_task(collect(behind, 0, 14, Audience.STAGE)),
        asyncio.create_task(collect(at_head, first[-1], 1, Audience.STAGE)),
    ]
    await whisper(12)
    await asyncio.gather(keeping, *late)
    assert len(first) == 14 and first == sorted(set(first))
    assert behind == first
    assert at_head == first[-1:]
    assert services.hub.open_feed(case_id) is None  # the last stream to leave dropped the feed


async def test_a_failed_feed_read_ends_only_the_stream_that_made_it_and_the_others_read_again(
    monkeypatch: pytest.MonkeyPatch, services: Services, new_case: NewCase
) -> None:
    """Five streams of one case share each read. The first read after a whisper fails (the real ledger,
    made to refuse once): the stream that made it ends with the error, the four that waited on it read
    again themselves and get the whisper, once."""
    case_id = (await new_case())["case"]["id"]
    collected: list[list[int]] = [[] for _ in range(5)]
    live = asyncio.Event()

    async def never_gone() -> bool:
        return False

    async def collect(ids: list[int]) -> None:
        stream = event_stream(services.hub, case_id, Audience.OPERATOR, 0, DEADLINE_S, never_gone)
        try:
            async with asyncio.timeout(DEADLINE_S):
                async for chunk in stream:
                    ids += [int(f.split("\n", 1)[0][4:]) for f in chunk.split("\n\n") if f.startswith("id: ")]
                    if all(collected):
                        live.set()
                    if len(ids) >= 2:  # case.created, then the whisper
                        return
        finally:
            await stream.aclose()

    streams = [asyncio.create_task(collect(ids)) for ids in collected]
    async with asyncio.timeout(DEADLINE_S):
        await live.wait()
    ledger = services.ledger  # the hub's own (api/app.py builds the hub over the runtime's ledger)
    real_read = ledger.events.events_after
    refusals = [LedgerError("OperationalError")]

    async def refuse_once(case: str, after: int, limit: int = 500) -> list[EventRecord]:
        if case == case_id and refusals:
            raise refusals.pop()
        return await real_read(case, after, limit=limit)

    monkeypatch.setattr(ledger.events, "events_after", refuse_once)
    await services.bureau.whisper_service.whisper(case_id, "detective", "Ledger line: crates at dock nine.", None)
    outcomes = await asyncio.gather(*streams, return_exceptions=True)

    assert not refusals  # the refusal was met
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(failed) == 1 and isinstance(failed[0], LedgerError)
    survivors = [ids for ids, o in zip(collected, outcomes, strict=True) if o is None]
    assert len(survivors) == 4
    assert all(len(ids) == 2 and ids == sorted(set(ids)) and ids == survivors[0] for ids in survivors)
