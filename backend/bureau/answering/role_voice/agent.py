"""Agent hardening: a DeepAgents agent per role that has no tools, no subagents and no filesystem.

How the agent is kept tool-less (deepagents 0.7.32): `create_deep_agent` always installs its
`FilesystemMiddleware` (which insists on at least `read_file`) and, by default, a general-purpose subagent
behind a `task` tool. We therefore

1. give the chat model a private provider name (`bureau_role_voice`, via `_get_ls_params`) and register a
   `HarnessProfile` under it that disables the general-purpose subagent (so no `SubAgentMiddleware` and no
   `task` tool exist), excludes every built-in tool name (`_ToolExclusionMiddleware` strips them from every
   model request and rejects any call naming them), and drops the summarization middleware;
2. pass `tools=[]`, no subagents, and a replacement `FilesystemMiddleware(tools=["read_file"])` (the minimum
   it accepts) with a deny-all `FilesystemPermission` on an in-state backend that holds no files;
3. add our own `ToolLessMiddleware` (outermost `wrap_model_call`): it sends every model request with
   `tools=[]` and aborts the run if the model answers with a tool call anyway, before any tool node runs; the
   answer then falls back with `malformed_output`. A small `recursion_limit` backs this up.

`tests/unit/answering/test_role_voice.py` proves the requests reaching the provider carry no `tools`, and that
a rogue tool call costs exactly one model request and executes nothing.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
from langgraph.errors import GraphRecursionError

from bureau.answering.role_voice.prompt import system_prompt
from bureau.answering.role_voice.reply import REPLY_SCHEMA, MalformedOutputError
from bureau.config import Settings
from bureau.scope.vocabulary import FallbackReason

PROVIDER_KEY = "bureau_role_voice"
BUILTIN_TOOL_NAMES: frozenset[str] = frozenset(
    {"ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "execute", "task", "write_todos"}
)
# Backstop only (ToolLessMiddleware already stops a tool round-trip); one answer needs a handful of steps.
RECURSION_LIMIT = 8

_profile_lock = threading.Lock()
_profile_registered = False


def _ensure_harness_profile() -> None:
    global _profile_registered
    with _profile_lock:
        if _profile_registered:
            return
        from deepagents.profiles import (
            GeneralPurposeSubagentProfile,
            HarnessProfile,
            register_harness_profile,
        )

        register_harness_profile(
            PROVIDER_KEY,
            HarnessProfile(
                excluded_tools=BUILTIN_TOOL_NAMES,
                general_purpose_subagent=GeneralPurposeSubagentProfile(enabled=False),
                excluded_middleware=frozenset({"SummarizationMiddleware"}),
            ),
        )
        _profile_registered = True


# How the reply's schema is asked for, in order; a provider that refuses one (400/422) is asked the next way,
# once, and that way is kept. llama.cpp's servers (llama-server, llama-cpp-python) take `json_object` with a
# `schema` (a grammar: the reply cannot be anything else); OpenAI takes `json_schema`; None is the plain
# request, answered through the strict parse alone.
REPLY_FORMATS: tuple[dict[str, Any] | None, ...] = (
    {"type": "json_object", "schema": REPLY_SCHEMA},
    {"type": "json_schema", "json_schema": {"name": "role_voice_reply", "schema": REPLY_SCHEMA}},
    None,
)


def build_chat_model(settings: Settings, reply_format: dict[str, Any] | None = None) -> Any:
    from langchain_openai import ChatOpenAI

    class RoleVoiceChatOpenAI(ChatOpenAI):
        """ChatOpenAI under a private provider name, so only our harness profile applies to it."""

        def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
            params = super()._get_ls_params(stop=stop, **kwargs)
            params["ls_provider"] = PROVIDER_KEY
            return params

    # Only when set: at temperature 0 with a seed the local model's answers are reproducible.
    sampling: dict[str, Any] = {}
    if settings.llm_temperature is not None:
        sampling["temperature"] = settings.llm_temperature
    if settings.llm_seed is not None:
        sampling["seed"] = settings.llm_seed
    return RoleVoiceChatOpenAI(
        base_url=settings.llm_base_url,
        # Local OpenAI-compatible servers (vLLM, Ollama) accept any key; the client refuses an empty one.
        api_key=settings.llm_api_key.get_secret_value() or "not-needed",
        model=settings.llm_model,
        timeout=settings.llm_timeout_s,
        max_retries=0,
        use_responses_api=False,
        # Streamed where the provider is llama.cpp's server: closing a stream cancels the generation there, so
        # a call stopped at the timeout frees its slot at once instead of running on (a plain request runs on).
        streaming=settings.llm_stream,
        # langchain-openai sends the cap as `max_completion_tokens`, which llama.cpp's servers ignore: send
        # `max_tokens` too, so every OpenAI-compatible server stops generating at the cap.
        max_tokens=settings.llm_max_tokens,
        extra_body={"max_tokens": settings.llm_max_tokens},
        model_kwargs={"response_format": reply_format} if reply_format else {},
        **sampling,
    )


def refused_format(exc: BaseException) -> bool:
    """The provider rejected the request itself (400/422), as a server does for a `response_format` it
    does not know; worth asking once more the next way, not a reason to give up on the model."""
    import openai

    return isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError)


class ToolCallAttemptError(RuntimeError):
    """The model asked for a tool although none was offered."""


def _tool_less_middleware() -> Any:
    from langchain.agents.middleware import AgentMiddleware

    def check(response: Any) -> Any:
        messages = getattr(response, "result", None)
        if messages is None:
            inner = getattr(response, "model_response", None)
            messages = getattr(inner, "result", None) if inner is not None else [response]
        if any(getattr(m, "tool_calls", None) for m in messages or ()):
            raise ToolCallAttemptError("tool call from a tool-less role")
        return response

    class ToolLessMiddleware(AgentMiddleware):
        """Every model request goes out with no tools; a tool call in the reply aborts the run."""

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return check(handler(request.override(tools=[])))

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            return check(await handler(request.override(tools=[])))

    return ToolLessMiddleware()


def build_role_agent(model: Any, role: str, language: str) -> Any:
    """A DeepAgents agent with no tools, no subagents and no filesystem access."""
    from deepagents import create_deep_agent
    from deepagents.backends import StateBackend
    from deepagents.middleware.filesystem import FilesystemMiddleware, FilesystemPermission

    _ensure_harness_profile()
    deny_all = [FilesystemPermission(operations=["read", "write"], paths=["/**"], mode="deny")]
    backend = StateBackend()
    return create_deep_agent(
        model=model,
        tools=[],
        subagents=[],
        system_prompt=system_prompt(role, language),
        backend=backend,
        permissions=deny_all,
        middleware=[
            FilesystemMiddleware(backend=backend, tools=["read_file"], permissions=deny_all),
            _tool_less_middleware(),
        ],
        name=f"role_voice_{role}_{language}",
    )


def last_ai_content(result: Any) -> Any:
    messages = result.get("messages", []) if isinstance(result, dict) else []
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai":
            if getattr(message, "tool_calls", None):
                raise MalformedOutputError("tool call")
            return message.content
    raise MalformedOutputError("no model message")


def classify_error(exc: BaseException) -> FallbackReason:
    import openai

    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return FallbackReason.PROVIDER_TIMEOUT
    if isinstance(exc, ToolCallAttemptError):
        return FallbackReason.MALFORMED_OUTPUT
    if isinstance(exc, httpx.TimeoutException):
        return FallbackReason.PROVIDER_TIMEOUT
    if isinstance(exc, GraphRecursionError):  # the model tried to use a tool
        return FallbackReason.MALFORMED_OUTPUT
    return FallbackReason.PROVIDER_ERROR
