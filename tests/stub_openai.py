"""A tiny OpenAI-compatible chat-completions server for tests (stdlib only, runs in a thread).

Scripted replies come from a queue (one per request, FIFO) or, when the queue is empty, from
`default`. Each reply is a `Reply`; helpers build the common ones:

    stub.push(json_reply({"answer": "...", "certainty": "known", "cited": ["e1"]}))
    stub.push(text_reply("not json at all"))       # model content that is not JSON
    stub.push(sleep_reply(3.0, json_reply({...})))  # answer only after the client gave up
    stub.push(status_reply(500))                    # provider error
    stub.push(raw_reply(b"<html>oops</html>"))      # HTTP 200 whose body is not JSON
    stub.push(tool_call_reply("read_file", {...}))  # the model tries to call a tool

Every request body is recorded (`stub.requests`), so tests can assert what the model was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # assistant message content
    tool_calls: list[dict[str, Any]] | None = None
    raw_body: bytes | None = None  # send these bytes verbatim instead of a completion
    delay_s: float = 0.0


def json_reply(obj: Any) -> Reply:
    return Reply(content=json.dumps(obj, ensure_ascii=False))


def text_reply(text: str) -> Reply:
    return Reply(content=text)


def status_reply(status: int, message: str = "stub failure") -> Reply:
    body = json.dumps({"error": {"message": message, "type": "server_error", "code": status}})
    return Reply(status=status, raw_body=body.encode())


def raw_reply(body: bytes, status: int = 200) -> Reply:
    return Reply(status=status, raw_body=body)


def sleep_reply(delay_s: float, then: Reply | None = None) -> Reply:
    base = then or json_reply({"answer": "late", "certainty": "unknown", "cited": []})
    return Reply(
        status=base.status,
        content=base.content,
        tool_calls=base.tool_calls,
        raw_body=base.raw_body,
        delay_s=delay_s,
    )


def tool_call_reply(name: str, arguments: dict[str, Any]) -> Reply:
    return Reply(
        content="",
        tool_calls=[
            {
                "id": "call_stub_1",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    )


ReplySource = Reply | Callable[[dict[str, Any]], Reply]


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        """Everything the model was sent, as one string (for 'never sent X' assertions)."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class StubOpenAI:
    """Start with `with StubOpenAI() as stub:` (or `start()` / `stop()`); `stub.base_url` ends in /v1."""

    default: ReplySource = field(
        default_factory=lambda: json_reply({"answer": "default", "certainty": "unknown", "cited": []})
    )
    model: str = "stub-model"
    requests: list[RecordedRequest] = field(default_factory=list)
    _queue: deque[ReplySource] = field(default_factory=deque)
    # Set whenever a request has been recorded (cleared by `reset()`): lets a test wait for "the provider
    # has it" instead of sleeping.
    received: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------
    def push(self, *replies: ReplySource) -> None:
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.received.clear()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """The next pushed reply, else the default (the request handler's thread calls it)."""
        with self._lock:
            source = self._queue.popleft() if self._queue else self.default
        return source(body) if callable(source) else source

    def record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        """Keep a request as it arrived, and wake whoever waits for one (the request handler calls it)."""
        with self._lock:
            self.requests.append(RecordedRequest(path=path, headers=headers, body=body))
        self.received.set()

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "stub not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> StubOpenAI:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                stub.record(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                reply = stub.next_reply(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    self._send(reply.status, reply.raw_body)
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                finish = "stop"
                if reply.tool_calls:
                    message["tool_calls"] = reply.tool_calls
                    finish = "tool_calls"
                completion = {
                    "id": f"chatcmpl-stub-{len(stub.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", stub.model),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }
                self._send(reply.status, json.dumps(completion).encode())

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client already gave up
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="stub-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StubOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
