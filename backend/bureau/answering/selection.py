"""Which responder the game uses, and what /api/health may say about the model (never the key)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from bureau.answering.base import Responder, ResponderName
from bureau.answering.evidence import EvidenceResponder
from bureau.config import Settings
from bureau.scope.phrases import spoken_language
from bureau.scope.vocabulary import ModeReason

if TYPE_CHECKING:
    from bureau.answering.role_voice.budget import SharedBudget

LlmStatus = Literal["disabled", "configured", "degraded"]


def build_responder(settings: Settings, shared_budget: SharedBudget | None = None) -> Responder:
    """Evidence mode when no model is configured; otherwise the role voice (which falls back internally).

    Build it once per process: the role voice holds the request budget, the concurrency slots, the health
    record and the cached agents. With `shared_budget` (the ledger) the request budget is deployment-wide.
    """
    if not settings.llm_configured:
        return EvidenceResponder()
    from bureau.answering.role_voice import RoleVoiceResponder

    return RoleVoiceResponder(settings, shared_budget=shared_budget)


def effective_mode(settings: Settings, responder: Responder | None) -> ResponderName:
    if responder is not None and responder.name == "role_voice" and settings.llm_configured:
        return "role_voice"
    return "evidence"


def case_mode(settings: Settings, responder: Responder | None, language: str) -> tuple[ResponderName, ModeReason]:
    """A case's mode and why: the role voice only where a model is configured and speaks the case's language
    (`BUREAU_LLM_LANGUAGES`); the packaged local model is English only, so Chinese cases stay in evidence mode."""
    if effective_mode(settings, responder) != "role_voice":
        return "evidence", ModeReason.NO_MODEL
    if spoken_language(language) not in settings.llm_language_set:
        return "evidence", ModeReason.LANGUAGE_NOT_SPOKEN
    return "role_voice", ModeReason.MODEL_SPEAKS_LANGUAGE


def _host_only(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def llm_status(settings: Settings, responder: Responder | None = None) -> dict[str, Any]:
    """`{"status", "model", "base_url_host"}` for /api/health. Host name only: no scheme, port, path,
    userinfo or query (a key could hide in any of them), and never `llm_api_key`."""
    if not settings.llm_configured:
        return {"status": "disabled", "model": None, "base_url_host": None}
    status: LlmStatus = "configured"
    if responder is not None and responder.degraded:
        status = "degraded"
    return {"status": status, "model": settings.llm_model, "base_url_host": _host_only(settings.llm_base_url)}
