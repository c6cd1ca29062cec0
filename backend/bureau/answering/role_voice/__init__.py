"""Role voice: a tool-less DeepAgents agent per role phrases the evidence the memory layer already chose.

The model never chooses scopes and never sees anything outside the evidence packet. The server decides
certainty, evidence and citations before the model is called (`plan_answer`); the model writes only the
in-character sentence, which is validated server-side (grounding, and that it states what was decided);
anything wrong, slow or failing falls back to the evidence responder with a specific `fallback_reason`.
`answer()` never raises.

Modules: `prompt` (persona, language rule, rules, rendered question), `packet` (the evidence packet),
`reply` (parsing and validating the model's reply), `agent` (the tool-less agent and its hardening),
`budget` (request budget, concurrency, degraded state), `responder` (`RoleVoiceResponder`).
"""

from bureau.answering.role_voice.agent import BUILTIN_TOOL_NAMES, PROVIDER_KEY, build_chat_model, build_role_agent
from bureau.answering.role_voice.packet import DERIVED_MEMORY, UNSAFE_CONTENT, EvidencePacket, build_packet
from bureau.answering.role_voice.prompt import render_prompt, system_prompt
from bureau.answering.role_voice.reply import MalformedOutputError, ModelReply, parse_reply, validate_reply
from bureau.answering.role_voice.responder import RoleVoiceResponder

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "DERIVED_MEMORY",
    "PROVIDER_KEY",
    "UNSAFE_CONTENT",
    "EvidencePacket",
    "MalformedOutputError",
    "ModelReply",
    "RoleVoiceResponder",
    "build_chat_model",
    "build_packet",
    "build_role_agent",
    "parse_reply",
    "render_prompt",
    "system_prompt",
    "validate_reply",
]
