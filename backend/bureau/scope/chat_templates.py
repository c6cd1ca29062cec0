"""The role and turn markers of chat templates, and role headers: text that dresses a card up as a turn of
the conversation the role voice model reads (a system message, the assistant's own answer). Pure, no I/O.

Two shapes, both flagged as `prompt_injection` by `content_policy.screen`:

- **Special tokens** of the common open-model templates, read on the markup form (`canonical.py`: case- and
  confusable-folded, punctuation kept): ChatML and Qwen (`<|im_start|>`, `<|im_end|>`), Llama 3
  (`<|start_header_id|>`, `<|eot_id|>`), Phi and Zephyr (`<|system|>`, `<|user|>`, `<|end|>`), Command R
  (`<|START_OF_TURN_TOKEN|>`), DeepSeek (`<｜User｜>`, full-width bars NFKC makes ASCII) — every `<|…|>`
  token, whichever model it belongs to; Llama 2 (`[INST]`, `<<SYS>>`), Mistral (`[SYSTEM_PROMPT]`,
  `[TOOL_CALLS]`), Gemma (`<start_of_turn>`, `<end_of_turn>`), and tag-like `<system>`, `<assistant>`.
- **Role headers**, read on the word forms: a chat role's name (system, assistant, user, human; 系统, 助手,
  用户) opening a line or a sentence and followed by a colon (`System: …`, `Assistant: Sure!`), or
  alone on a Markdown header or in brackets (`### System`, `[assistant]`), and the instruction-tuning
  headers (`### Instruction:`, `### Response:`). A sentence counts as a line because the game stores a
  whisper with its line breaks collapsed. The game's own roles (`Suspect: seen at the docks`), and nouns
  that a chat template also uses as a role but a note uses as a heading (`Model: grey Ford`,
  `Tool: a crowbar`), are ordinary notes; so is a role word inside a phrase (`Alarm system: armed`,
  `Lab assistant: Dr. Hale`).
"""

from __future__ import annotations

import re

_SPECIAL_TOKENS = re.compile(
    "|".join(
        (
            r"<\s*\|[^|<>\n]{1,40}\|\s*>",  # <|im_start|>, <|eot_id|>, <|system|>, <|START_OF_TURN_TOKEN|>, <|user|>
            r"<\s*/?\s*(?:system|assistant|user|human|im_start|im_end|start_of_turn|end_of_turn|bos|eos)\s*>",
            r"<<\s*/?\s*sys\s*>>",  # Llama 2
            r"\[\s*/?\s*(?:inst|sys|system_prompt|available_tools|tool_calls|tool_results|tool_content)\s*\]",
        )
    )
)

_CHAT_ROLE = r"(?:system|assistant|user|human|系统|助手|用户)"
_LINE_OR_SENTENCE = r"(?:^|(?<=[.!?;。！？；])|\n)[ \t]*"
_DECORATION = r"[>*_#\[(\-\s]*"
_ROLE_HEADERS = re.compile(
    "|".join(
        (
            # System: …   **Assistant:** …   > User: …   (the colon after the role word, decorations allowed)
            rf"{_LINE_OR_SENTENCE}{_DECORATION}{_CHAT_ROLE}[*_\])]*\s*:",
            # ### System   # User   [assistant]   (the role alone, as a Markdown heading or in brackets; not #user)
            rf"{_LINE_OR_SENTENCE}(?:(?:#{{2,6}}[ \t]*|#[ \t]+){_CHAT_ROLE}\b|\[\s*{_CHAT_ROLE}\s*\])",
            # ### Instruction:   ## Response   (instruction-tuning templates)
            rf"{_LINE_OR_SENTENCE}#{{2,6}}[ \t]*(?:instructions?|response)\b",
        )
    ),
    re.MULTILINE,
)


def has_special_token(markup: str) -> bool:
    """A chat template's special token in one markup form (case-folded, confusables folded)."""
    return _SPECIAL_TOKENS.search(markup) is not None


# A quick first look: most texts hold none of the words a header needs.
_ROLE_WORD = re.compile(r"system|assistant|user|human|instruction|response|系统|助手|用户")


def has_role_header(form: str) -> bool:
    """A chat role's header opening a line or a sentence of one word form (case-folded, canonical)."""
    return _ROLE_WORD.search(form) is not None and _ROLE_HEADERS.search(form) is not None
