"""A workshop room (issue 36), played from a process of its own against one `bureau serve`.

N players, each with their own passcode session and their own case of safe-combination (en), each with a
console stream and a stage stream open; each whispers once, then asks a preset question every `interval`
seconds, and every `publish_every`-th question is followed, half an interval later, by a publish of a
private card of the role just asked. A presenter's console stays open on the first player's case.

Open loop: every action is sent at its time in a schedule drawn in advance from a seed (each player's phase
in the interval, and a jitter on each question), whether or not the player's previous answer has come; an
answer later than the interval is recorded as late, one not in by the deadline as missing. The same seed
gives every checkout the same schedule.

The screens behave as the web app's do (web/src/live/useLiveSnapshot.ts, useCaseRecord.ts): each loads its
snapshot when it opens and again 120 ms after the last of a burst of live events; the console then reads the
record's newest entries. `refetch=False` keeps only the streams. A stream the server ends or breaks is
reopened after 2 s from the last event id it received (as an EventSource does), and the drop is recorded.

Requests go through the lean HTTP/1.1 client of bench/http1.py (a few keep-alive connections per player), or
httpx's AsyncClient (`client="httpx"`, which costs this process several ms of CPU per request); streams are
read by bench/screens.py's reader, which keeps the kernel's arrival time of every frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from harness import own_cpu_ms, percentile, progress, session_headers
from http1 import Connection
from screens import open_stream, stream_frames

ROLES = ("detective", "informant", "suspect")
WHISPER = {"role": "suspect", "text": "A grey van waited by the garden gate at eleven.", "source": "the night porter"}
REFETCH_DEBOUNCE_S = 0.12  # the web app's REFETCH_DEBOUNCE_MS
RECORD_PAGE, RECORD_PAGE_MAX = 50, 200  # the web app's first page and largest page of the record
RECONNECT_S = 2.0  # an EventSource's retry (the server sends `retry: 2000`)
KEEP_ALIVE_S = 4.0  # uvicorn closes a connection idle for 5 s: the lean client never reuses one idle this long
SETUP_AT_ONCE = 4  # players setting up at the same time (a room fills over a minute, not in one instant)
QUIET_S, QUIET_DEADLINE_S = 1.5, 20.0  # after the last answer: streams close once this long without a frame
PROGRESS_EVERY_S = 10.0


@dataclass(frozen=True)
class Plan:
    """Everything the room needs to know; sent to the room's process."""

    port: int
    players: int
    passcode: str
    interval_s: float = 3.0
    jitter_s: float = 0.3
    warmup_s: float = 15.0
    window_s: float = 60.0
    publish_every: int = 10
    refetch: bool = True
    client: str = "lean"
    seed: int = 36
    answer_deadline_s: float = 60.0

    @property
    def play_s(self) -> float:
        """Warm-up, the measured window, and one interval more, so the window's last questions meet the same
        load as its first."""
        return self.warmup_s + self.window_s + self.interval_s


@dataclass(frozen=True)
class Action:
    """One player's n-th question, or the publish after it, `at` seconds after play starts."""

    player: int
    kind: str  # "question" | "publish"
    n: int
    at: float


def schedule(plan: Plan) -> list[Action]:
    """Every action of the room in time order: the same for the same plan (seeded)."""
    rng = random.Random(plan.seed)
    actions: list[Action] = []
    for player in range(plan.players):
        phase = rng.uniform(0, plan.interval_s)
        n = 0
        while (at := max(0.0, phase + n * plan.interval_s + rng.uniform(-plan.jitter_s, plan.jitter_s))) < plan.play_s:
            actions.append(Action(player, "question", n, at))
            if plan.publish_every and n % plan.publish_every == plan.publish_every - 1:
                actions.append(Action(player, "publish", n, at + plan.interval_s / 2))
            n += 1
    return sorted(actions, key=lambda action: action.at)


def question(player: int, n: int, presets: list[str]) -> tuple[str, str]:
    """The role and preset question of a player's n-th question: players start at different pairs, and
    each goes through every (role, question) pair (3 roles × 4 presets, coprime) before repeating one."""
    pair = player + n
    return ROLES[pair % len(ROLES)], presets[pair % len(presets)]


@dataclass
class Outcome:
    """One request: when it was due and sent, when its answer came (0: never), its status (-1: a transport
    error, 0: no answer by the deadline)."""

    player: int  # -1: the presenter
    kind: str  # question, publish, console snapshot, console record, stage snapshot, or a setup step
    due: float  # wall clock
    sent: float
    done: float = 0.0
    status: int = 0
    error: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def ms(self) -> float:
        """From when it was due to its answer (what the player waited)."""
        return (self.done - self.due) * 1000


@dataclass
class ScreenLog:
    """What one live stream received: (event id, read at, arrived in its socket at) per frame."""

    player: int  # -1: the presenter
    audience: str  # console | stage
    case_id: str
    frames: list[tuple[int, float, float]] = field(default_factory=list)
    opened: float = 0.0
    closed: float = 0.0
    drops: list[tuple[float, str]] = field(default_factory=list)  # (when, why) the stream ended before the room


@dataclass
class RoomLog:
    """The room's whole record, sent back to the benchmark."""

    start: float  # wall clock of the schedule's 0
    window: tuple[float, float]
    outcomes: list[Outcome]
    screens: list[ScreenLog]
    case_ids: list[str]
    setup_s: float
    window_cpu_ms: float  # this process's CPU time during the window: what the players cost


class Http(Protocol):
    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]: ...


class LeanHttp:
    """One player's requests over bench/http1.py: an idle keep-alive connection if there is one, else a new
    one, so requests in flight at once each have their own."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.port, self.headers = port, headers
        self.host = f"127.0.0.1:{port}"
        self._idle: list[tuple[Connection, float]] = []

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        connection = None
        while self._idle:
            candidate, since = self._idle.pop()
            if candidate.is_open and time.monotonic() - since < KEEP_ALIVE_S:
                connection = candidate
                break
            candidate.close()
        connection = connection or Connection("127.0.0.1", self.port)
        try:
            reply = await connection.send(Connection.encode(method, path, self.host, body, self.headers))
        except BaseException:
            connection.close()  # an answer cut off or abandoned: the connection's state is unknown
            raise
        if connection.is_open:
            self._idle.append((connection, time.monotonic()))
        return reply.status, reply.body

    def close(self) -> None:
        for connection, _ in self._idle:
            connection.close()
        self._idle.clear()


class HttpxHttp:
    """One player's requests through a shared httpx AsyncClient, naming the player's session in each."""

    def __init__(self, client: httpx.AsyncClient, headers: dict[str, str]) -> None:
        self.client, self.headers = client, headers

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        response = await self.client.request(method, path, json=body, headers=self.headers)
        return response.status_code, response.content

    def close(self) -> None:
        """The shared client is closed by the room."""


TRANSPORT_ERRORS = (OSError, ConnectionError, asyncio.IncompleteReadError, httpx.HTTPError, ValueError)


class Debounced:
    """Runs `action` once `delay_s` after the last `poke` (the web app's useDebounced)."""

    def __init__(self, action: Callable[[], Coroutine[Any, Any, None]], tasks: set[asyncio.Task[Any]]) -> None:
        self.action, self.tasks = action, tasks
        self._timer: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(REFETCH_DEBOUNCE_S, self._fire)

    def _fire(self) -> None:
        task = asyncio.create_task(self.action())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


@dataclass
class Player:
    """A player (or the presenter) signed in: its session, its client, its case and its private cards."""

    number: int
    headers: dict[str, str]
    http: LeanHttp | HttpxHttp
    case_id: str = ""
    presets: list[str] = field(default_factory=list)
    cards: dict[str, list[str]] = field(default_factory=dict)  # role → private card ids, in publish order
    record_version: int = -1  # the newest case version whose record entries its console holds

    @property
    def path(self) -> str:
        return f"/api/cases/{self.case_id}"


class Room:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.outcomes: list[Outcome] = []
        self.screens: list[ScreenLog] = []
        self.players: list[Player] = []
        self.tasks: set[asyncio.Task[Any]] = set()  # requests and refetches in flight
        self.watchers: list[asyncio.Task[None]] = []
        self.debouncers: list[Debounced] = []
        self.stopping = asyncio.Event()
        self.last_frame = 0.0
        url = f"http://127.0.0.1:{plan.port}"
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        self.httpx = httpx.AsyncClient(base_url=url, timeout=plan.answer_deadline_s, limits=limits)
        # Sign-ins have a client of their own: the cookies they set never reach the players' requests.
        self.signing = httpx.AsyncClient(base_url=url, timeout=plan.answer_deadline_s)

    def client(self, headers: dict[str, str]) -> LeanHttp | HttpxHttp:
        if self.plan.client == "httpx":
            return HttpxHttp(self.httpx, headers)
        return LeanHttp(self.plan.port, headers)

    async def request(
        self, who: Player, kind: str, method: str, path: str, body: Any = None, due: float | None = None
    ) -> tuple[Outcome, bytes]:
        """One request, recorded whatever happens to it."""
        sent = time.time()
        outcome = Outcome(who.number, kind, due or sent, sent)
        self.outcomes.append(outcome)
        content = b""
        try:
            async with asyncio.timeout(self.plan.answer_deadline_s):
                outcome.status, content = await who.http.call(method, path, body)
            outcome.done = time.time()
        except TimeoutError:
            outcome.status, outcome.error = 0, "no answer by the deadline"
        except TRANSPORT_ERRORS as exc:
            outcome.status, outcome.error = -1, type(exc).__name__
        return outcome, content

    # ----- the screens -----------------------------------------------------------------------------------------

    async def watch(self, who: Player, audience: str, refetch: Debounced | None, live: asyncio.Event) -> None:
        """Keep one stream open until the room stops: every frame recorded, each a poke of the refetch."""
        suffix = "/events" if audience == "console" else "/stage/events"
        log = ScreenLog(who.number, audience, who.case_id, opened=time.time())
        self.screens.append(log)
        cookie = who.headers["Cookie"]
        try:
            while not self.stopping.is_set():
                after = f"?after={log.frames[-1][0]}" if log.frames else ""
                try:
                    reader, writer, sock = await open_stream(self.plan.port, who.path + suffix + after, cookie)
                except (RuntimeError, *TRANSPORT_ERRORS) as exc:
                    log.drops.append((time.time(), f"not opened: {exc}"))
                    await asyncio.sleep(RECONNECT_S)
                    continue
                try:
                    async for frame in stream_frames(reader, sock):
                        log.frames.append(frame)
                        self.last_frame = frame[1]
                        live.set()
                        if refetch is not None:
                            refetch.poke()
                    log.drops.append((time.time(), "ended by the server"))
                except TRANSPORT_ERRORS as exc:
                    log.drops.append((time.time(), type(exc).__name__))
                finally:
                    writer.close()
                await asyncio.sleep(RECONNECT_S)
        finally:
            log.closed = time.time()

    async def console_refetch(self, who: Player) -> None:
        """The console's snapshot, then the record entries that can be new (useCaseRecord.ts)."""
        outcome, body = await self.request(who, "console snapshot", "GET", who.path)
        if not outcome.ok:
            return
        version = json.loads(body)["case"]["version"]
        if version == who.record_version:
            return
        held, who.record_version = who.record_version, version
        limit = RECORD_PAGE if held < 0 else min(RECORD_PAGE_MAX, max(1, version - held + 1))
        await self.request(who, "console record", "GET", f"{who.path}/record?limit={limit}")

    async def stage_refetch(self, who: Player) -> None:
        await self.request(who, "stage snapshot", "GET", f"{who.path}/stage")

    async def open_screens(self, who: Player, audiences: tuple[str, ...]) -> None:
        """Open the screens and wait until each stream is live (it has replayed the case's first event)."""
        lives = []
        for audience in audiences:
            refetch = None
            if self.plan.refetch:
                load = self.console_refetch if audience == "console" else self.stage_refetch
                refetch = Debounced(functools.partial(load, who), self.tasks)
                self.debouncers.append(refetch)
            live = asyncio.Event()
            lives.append(live)
            self.watchers.append(asyncio.create_task(self.watch(who, audience, refetch, live)))
        async with asyncio.timeout(self.plan.answer_deadline_s):
            await asyncio.gather(*(live.wait() for live in lives))

    # ----- setting up --------------------------------------------------------------------------------------------

    async def sign_in(self, number: int) -> Player:
        headers = await session_headers(self.signing, self.plan.passcode)
        return Player(number, headers, self.client(headers))

    async def set_up(self, number: int, gate: asyncio.Semaphore) -> Player | None:
        """Sign in, create the case, open both screens, whisper once. None (recorded) if a step failed."""
        async with gate:
            try:
                who = await self.sign_in(number)
            except TRANSPORT_ERRORS as exc:
                self.outcomes.append(Outcome(number, "setup: sign in", time.time(), time.time(), 0, -1, repr(exc)))
                return None
            created, body = await self.request(
                who, "setup: case", "POST", "/api/cases", {"scenario_id": "safe-combination", "language": "en"}
            )
            if not created.ok:
                return None
            snapshot = json.loads(body)
            who.case_id = snapshot["case"]["id"]
            who.presets = list(snapshot["scenario"]["preset_questions"])
            who.cards = {role: [card["id"] for card in snapshot["spaces"][role]] for role in ROLES}
            try:
                await self.open_screens(who, ("console", "stage"))
            except TimeoutError:
                self.outcomes.append(Outcome(number, "setup: streams", time.time(), time.time(), 0, 0, "not live"))
                return None
            whispered, body = await self.request(who, "setup: whisper", "POST", f"{who.path}/whispers", WHISPER)
            if not whispered.ok:
                return None
            who.cards[WHISPER["role"]].append(json.loads(body)["card"]["id"])
            return who

    # ----- playing ----------------------------------------------------------------------------------------------

    async def act(self, action: Action, due: float) -> None:
        who = self.players[action.player]
        role, text = question(action.player, action.n, who.presets)
        if action.kind == "question":
            body = {"role": role, "question": text}
            await self.request(who, "question", "POST", f"{who.path}/interrogations", body, due)
            return
        cards = who.cards[role]
        card_id = cards[(action.n // self.plan.publish_every) % len(cards)]
        body = {"role": role, "card_id": card_id}
        await self.request(who, "publish", "POST", f"{who.path}/publications", body, due)

    async def report(self, start: float) -> None:
        window = (start + self.plan.warmup_s, start + self.plan.warmup_s + self.plan.window_s)
        while True:
            await asyncio.sleep(PROGRESS_EVERY_S)
            now = time.time()
            recent = [o for o in self.outcomes if o.kind == "question" and o.done and now - o.done < PROGRESS_EVERY_S]
            answered = [o.ms for o in recent if o.ok]
            phase = "warm-up" if now < window[0] else "window" if now < window[1] else "tail"
            median = f", answer p50 {percentile(answered, 0.5):.0f} ms" if answered else ""
            waiting = sum(1 for o in self.outcomes if o.kind == "question" and not o.done and not o.error)
            progress(
                f"{self.plan.players} players, {now - start:.0f}/{self.plan.play_s:.0f} s ({phase}): "
                f"{len(recent)} answers in the last {PROGRESS_EVERY_S:.0f} s{median}, {waiting} waiting"
            )

    async def play(self, on_window: Callable[[float, float], None]) -> RoomLog:
        plan = self.plan
        setup_started = time.time()
        presenter = await self.sign_in(-1)
        gate = asyncio.Semaphore(SETUP_AT_ONCE)
        players = await asyncio.gather(*(self.set_up(n, gate) for n in range(plan.players)))
        self.players = [p for p in players if p is not None]
        if len(self.players) < plan.players:
            raise RuntimeError(f"{plan.players - len(self.players)} of {plan.players} players could not set up")
        presenter.case_id = self.players[0].case_id
        await self.open_screens(presenter, ("console",))
        setup_s = time.time() - setup_started
        progress(f"{plan.players} players set up in {setup_s:.1f} s; the presenter watches the first case")

        start = time.time() + 1.0
        window = (start + plan.warmup_s, start + plan.warmup_s + plan.window_s)
        on_window(*window)
        reporter = asyncio.create_task(self.report(start))
        cpu_at: dict[str, float] = {}

        async def note_cpu() -> None:
            for name, at in zip(("start", "end"), window, strict=True):
                await asyncio.sleep(max(0.0, at - time.time()))
                cpu_at[name] = own_cpu_ms()

        cpu_task = asyncio.create_task(note_cpu())
        for action in schedule(plan):
            due = start + action.at
            await asyncio.sleep(max(0.0, due - time.time()))
            task = asyncio.create_task(self.act(action, due))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        await cpu_task
        while self.tasks:  # the answers still coming, and the refetches they cause
            await asyncio.wait(set(self.tasks))
        deadline = time.time() + QUIET_DEADLINE_S
        while time.time() < deadline and time.time() - self.last_frame < QUIET_S:
            await asyncio.sleep(0.1)
        self.stopping.set()
        for debounced in self.debouncers:
            debounced.cancel()
        for watcher in self.watchers:
            watcher.cancel()
        await asyncio.gather(*self.watchers, return_exceptions=True)
        reporter.cancel()
        while self.tasks:
            await asyncio.wait(set(self.tasks))
        for who in [presenter, *self.players]:
            who.http.close()
        await self.httpx.aclose()
        await self.signing.aclose()
        return RoomLog(
            start=start,
            window=window,
            outcomes=self.outcomes,
            screens=self.screens,
            case_ids=[p.case_id for p in self.players],
            setup_s=setup_s,
            window_cpu_ms=cpu_at["end"] - cpu_at["start"],
        )


def play_room(plan: Plan, queue: Any) -> None:
    """The room's process: ("window", start, end) once play is about to start, then ("log", RoomLog), or
    ("failed", why)."""

    async def run() -> RoomLog:
        return await Room(plan).play(lambda start, end: queue.put(("window", start, end)))

    try:
        queue.put(("log", asyncio.run(run())))
    except Exception as exc:  # reported to the benchmark, which stops
        with contextlib.suppress(Exception):
            queue.put(("failed", f"{type(exc).__name__}: {exc}"))
