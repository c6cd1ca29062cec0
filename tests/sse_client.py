"""A small Server-Sent Events reader over httpx streaming, for tests against a live server.

A background task reads the response and parses it (`id:`, `event:`, `data:`, `retry:` and `:` comments)
into a queue; tests wait on that queue with deadlines, never with sleeps. Everything received is also kept
raw, so a test can scan every byte that left the server.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Frame:
    """One dispatched SSE event."""

    id: int | None
    event: str
    data: Any  # parsed JSON (the raw text if it is not JSON)
    raw: str
    received_at: float


@dataclass(frozen=True, slots=True)
class Comment:
    text: str
    received_at: float


class StreamClosed(Exception):
    """The server ended the stream."""


_EOF = object()


@dataclass
class SSEStream:
    """An open SSE response. Use `async with open_sse(...) as stream:`."""

    response: httpx.Response
    frames: list[Frame] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    retry_ms: list[int] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    closed_at: float | None = None
    error: BaseException | None = None
    _queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    _task: asyncio.Task[None] | None = None

    @property
    def status_code(self) -> int:
        return self.response.status_code

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    def start(self) -> None:
        self._task = asyncio.create_task(self._read(), name="sse-reader")

    async def _read(self) -> None:
        buffer = ""
        event_id: str | None = None
        event_type = ""
        data_lines: list[str] = []
        try:
            async for chunk in self.response.aiter_text():
                self.raw.append(chunk)
                buffer += chunk.replace("\r\n", "\n").replace("\r", "\n")
                while "\n" in buffer:
                    line, buffer = buffer.split("\n", 1)
                    now = time.monotonic()
                    if line == "":
                        if data_lines or event_type:
                            text = "\n".join(data_lines)
                            try:
                                data: Any = json.loads(text)
                            except ValueError:
                                data = text
                            frame = Frame(
                                int(event_id) if event_id and event_id.isdigit() else None,
                                event_type or "message",
                                data,
                                text,
                                now,
                            )
                            self.frames.append(frame)
                            self._queue.put_nowait(frame)
                        event_type, data_lines = "", []
                        continue
                    if line.startswith(":"):
                        comment = Comment(line[1:].strip(), now)
                        self.comments.append(comment)
                        self._queue.put_nowait(comment)
                        continue
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "id":
                        event_id = value
                    elif name == "event":
                        event_type = value
                    elif name == "data":
                        data_lines.append(value)
                    elif name == "retry" and value.isdigit():
                        self.retry_ms.append(int(value))
        except (httpx.HTTPError, asyncio.CancelledError) as exc:
            self.error = exc
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.closed_at = time.monotonic()
            self._queue.put_nowait(_EOF)

    async def next_item(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> Frame | Comment:
        """The next frame or comment; raises StreamClosed at the end, TimeoutError after the deadline."""
        item = await asyncio.wait_for(self._queue.get(), timeout_s)
        if item is _EOF:
            self._queue.put_nowait(_EOF)  # stay closed for later readers
            raise StreamClosed
        return item

    async def next_frame(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> Frame:
        deadline = time.monotonic() + timeout_s
        while True:
            item = await self.next_item(max(0.0, deadline - time.monotonic()))
            if isinstance(item, Frame):
                return item

    async def frames_until(self, stop: Callable[[Frame], bool], timeout_s: float = DEFAULT_TIMEOUT_S) -> list[Frame]:
        """Frames received (from now on) up to and including the first one matching `stop`."""
        deadline = time.monotonic() + timeout_s
        got: list[Frame] = []
        while True:
            frame = await self.next_frame(max(0.0, deadline - time.monotonic()))
            got.append(frame)
            if stop(frame):
                return got

    async def next_comment(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> Comment:
        deadline = time.monotonic() + timeout_s
        while True:
            item = await self.next_item(max(0.0, deadline - time.monotonic()))
            if isinstance(item, Comment):
                return item

    async def frames_until_idle(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[Frame]:
        """Frames up to the next heartbeat comment. The server only sends a heartbeat when it has nothing
        left to send, so on a stream opened after the events were committed this is "everything pending"."""
        deadline = time.monotonic() + timeout_s
        got: list[Frame] = []
        while True:
            item = await self.next_item(max(0.0, deadline - time.monotonic()))
            if isinstance(item, Comment):
                return got
            got.append(item)

    async def wait_closed(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[Frame]:
        """Drain until the server closes the stream; returns the frames read meanwhile."""
        deadline = time.monotonic() + timeout_s
        got: list[Frame] = []
        while True:
            try:
                item = await self.next_item(max(0.0, deadline - time.monotonic()))
            except StreamClosed:
                return got
            if isinstance(item, Frame):
                got.append(item)

    def text(self) -> str:
        return "".join(self.raw)

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.response.aclose()


class open_sse:
    """Open `GET url` as an SSE stream; on a non-200 status the body is read and no reader starts."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        read_timeout_s: float = 15.0,
    ) -> None:
        self.client, self.url, self.headers, self.params = client, url, headers or {}, params
        self.timeout = httpx.Timeout(10.0, read=read_timeout_s)
        self._cm: Any = None
        self.stream: SSEStream | None = None

    async def __aenter__(self) -> SSEStream:
        request = self.client.build_request(
            "GET",
            self.url,
            headers={"Accept": "text/event-stream", **self.headers},
            params=self.params,
            timeout=self.timeout,
        )
        response = await self.client.send(request, stream=True)
        self.stream = SSEStream(response)
        if response.status_code == 200:
            self.stream.start()
        else:
            await response.aread()
        return self.stream

    async def __aexit__(self, *exc: object) -> None:
        if self.stream is not None:
            await self.stream.aclose()
