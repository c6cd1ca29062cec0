"""A minimal HTTP/1.1 client for benchmarks that fire many requests at once: one keep-alive connection per
simulated client, a request written as one buffer, a response read by its Content-Length.

Why not httpx: `bench/publish_contention.py --client httpx` measures 7–9 ms of the client process's CPU per
publish with httpx's AsyncClient, more than the four servers spend on it. A hundred concurrent requests from
one process on the same 2 cores then keep a core busy for most of a second, and the benchmark measures the
client. This one costs about 0.1 ms per request (the same column with the default client).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One keep-alive connection to a loopback server, one request at a time. Open it shortly before use:
    uvicorn closes a connection that stayed idle for 5 s."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> Connection:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self

    @property
    def is_open(self) -> bool:
        """Connected, and not closed by the server's `Connection: close` (an idle timeout is the caller's)."""
        return self._reader is not None and not self._reader.at_eof()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    @staticmethod
    def encode(method: str, path: str, host: str, body: Any = None, headers: Mapping[str, str] | None = None) -> bytes:
        """A complete request, encoded once (a benchmark sends the same one many times)."""
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(payload)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        return head.encode() + b"\r\n" + payload

    async def send(self, request: bytes) -> Reply:
        if self._reader is None:
            await self.open()
        assert self._reader is not None and self._writer is not None
        self._writer.write(request)
        await self._writer.drain()
        status_line = await self._reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection without answering")
        return await self._read_rest(status_line)

    async def _read_rest(self, status_line: bytes) -> Reply:
        assert self._reader is not None
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self._reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunks()
        else:
            body = await self._reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Reply(status, headers, body)

    async def _read_chunks(self) -> bytes:
        """A chunked body (a streamed response), to its last chunk and the blank line after it."""
        assert self._reader is not None
        body = b""
        while size := int((await self._reader.readline()).split(b";")[0].strip() or b"0", 16):
            body += (await self._reader.readexactly(size + 2))[:-2]
        while (await self._reader.readline()) not in (b"\r\n", b""):
            pass  # trailers
        return body
