"""Content policy: what may never be stored as a whisper or replayed into a model prompt. Pure, no I/O.

`screen_text(text)` returns reason codes (empty list = safe):

- `phone_number`    international (+CC …), North American (555-123-4567), Chinese mobile / landline
- `national_id`     Chinese 18-digit resident id (date + checksum shape), US SSN (123-45-6789)
- `payment_card`    13–19 digits (optionally grouped by spaces/dashes) that pass the Luhn check
- `email_address`
- `prompt_injection` instruction-override phrases in English and Chinese, matched after NFKC, case-folding,
  zero-width removal and whitespace/punctuation collapsing (so "ＩＧＮＯＲＥ  all previous\ninstructions" and
  "忽 略 之 前 的 指 令" are caught)

Short numbers that games are made of ("The safe combination is 0427.", "table 12 at 7pm", "房间号是 302",
dates, times) are deliberately not flagged. The game rejects a flagged whisper with a generic 400
UNSAFE_INPUT (never echoing the text); the role voice withholds a flagged card from the model (delayed
prompt injection through stored memory).
"""

from __future__ import annotations

import re
import unicodedata

PHONE = "phone_number"
NATIONAL_ID = "national_id"
PAYMENT_CARD = "payment_card"
EMAIL = "email_address"
INJECTION = "prompt_injection"
REASONS: tuple[str, ...] = (PHONE, NATIONAL_ID, PAYMENT_CARD, EMAIL, INJECTION)

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_WS = re.compile(r"\s+")


def _nfkc(text: str) -> str:
    """NFKC (full-width digits/letters become ASCII), zero-width and control characters removed."""
    return _CONTROL.sub("", unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH))


def normalise_whisper(text: str) -> str:
    """What the game stores: NFKC, no control / zero-width characters, whitespace collapsed, trimmed."""
    return _WS.sub(" ", _nfkc(text)).strip()


# -- personal data ---------------------------------------------------------------------------------
_EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")

_PHONE_RES = (
    # International: +CC then 2-5 groups, 8-15 digits in all (checked below).
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,5}(?![\w])"),
    # North American: (555) 123-4567, 555-123-4567, 555.123.4567, 555 123 4567.
    re.compile(r"(?<![\w-])(?:\(\d{3}\)\s?|\d{3}[.\- ])\d{3}[.\- ]\d{4}(?![\w-])"),
    # Chinese mobile: 11 digits starting 13-19, optionally 3-4-4 grouped.
    re.compile(r"(?<![\d])1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)"),
    # Chinese landline with area code: 010-12345678, 0755-1234567.
    re.compile(r"(?<![\d-])0\d{2,3}-\d{7,8}(?![\d-])"),
)

_CN_ID_RE = re.compile(
    r"(?<![\dA-Za-z])\d{6}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![\dA-Za-z])"
)
_SSN_RE = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")
_SSN_KEYWORD_RE = re.compile(r"\b(?:ssn|social security(?: number| no\.?)?)\s*[:#]?\s*\d{9}\b", re.IGNORECASE)

# 13-19 digits, either contiguous or in groups of 2-6 separated by one space or dash.
_CARD_RE = re.compile(r"(?<![\d+-])(?:\d{13,19}|\d{2,6}(?:[ -]\d{2,6}){2,6})(?![\d-])")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2 == 1:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def _has_phone(text: str) -> bool:
    for pattern in _PHONE_RES:
        for match in pattern.finditer(text):
            digits = re.sub(r"\D", "", match.group())
            if match.group().startswith("+"):
                if 8 <= len(digits) <= 15:
                    return True
            else:
                return True
    return False


def _has_national_id(text: str) -> bool:
    if _SSN_RE.search(text) or _SSN_KEYWORD_RE.search(text):
        return True
    # Any 18-character run with a plausible birth date is treated as an id; a valid checksum is not required
    # (a mistyped id is still someone's id), but the date shape keeps random long numbers out.
    return _CN_ID_RE.search(text) is not None


def _has_payment_card(text: str) -> bool:
    for match in _CARD_RE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn_ok(digits):
            return True
    return False


# -- prompt injection ------------------------------------------------------------------------------
_EN_INJECTION = tuple(
    re.compile(p)
    for p in (
        r"\b(?:ignore|disregard|forget|skip|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+|my\s+)*"
        r"(?:previous|prior|above|earlier|preceding|former|original|system|initial)\s+"
        r"(?:instructions?|rules?|prompts?|messages?|directions?|directives?|guidelines?|context)",
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+)*(?:your|these|those)\s+"
        r"(?:instructions?|rules?|guidelines?|prompts?|restrictions?|programming)",
        r"\bdisregard\s+(?:all\s+|any\s+|the\s+)*(?:rules?|instructions?)\b",
        r"\byou\s+are\s+now\b",
        r"\bsystem\s+prompts?\b",
        r"\breveal\s+(?:the\s+|your\s+|all\s+)*secrets?\s+of\b",
        r"\breveal\s+(?:the\s+|your\s+)*(?:instructions?|prompts?|rules?|hidden)\b",
        r"\bfrom\s+now\s+on\s+(?:you|ignore|act)\b",
        r"\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|dan)\b",
        r"\bpretend\s+(?:that\s+)?you\s+(?:are|have)\s+no\s+(?:rules?|restrictions?|limits?)",
        r"\b(?:developer|god|jailbreak)\s+mode\b",
        r"\bdo\s+anything\s+now\b",
        r"\bjailbreak",
    )
)
# Phrases whose punctuation matters ("new instructions:" but not "gave new instructions to the detective").
_EN_RAW_INJECTION = re.compile(r"\b(?:new|updated|real)\s+(?:system\s+)?instructions?\s*:")
# Tag-like markers of a fake conversation turn, matched on the NFKC text before punctuation collapsing.
_ROLE_MARKERS = re.compile(
    r"<\s*/?\s*(?:system|assistant|im_start|im_end)\s*>|<\|im_(?:start|end)\|>|\[/?inst\]|^#{2,}\s*(?:system|instruction)",
    re.IGNORECASE | re.MULTILINE,
)
_ZH_INJECTION = tuple(
    re.compile(p)
    for p in (
        r"(?:忽略|无视|忽视|不要理会|不用理会|别管|跳过|绕过|覆盖)(?:掉)?(?:你)?(?:之前|以上|上面|上述|前面|先前|此前|所有|全部|一切|原来|原有|系统)",
        r"(?:忽略|无视|忽视|忘记|忘掉|绕过)(?:你的|所有的?|全部的?)?(?:指令|指示|规则|提示|设定|限制|要求)",
        r"忘(?:记|掉)(?:之前|以上|上面|前面|先前|你的|所有)",
        r"你现在(?:是|扮演|成为|变成|作为)",
        r"从现在(?:开始|起)(?:你|,?忽略)",
        r"系统提示",
        r"提示词",
        r"(?:泄露|透露|告诉我|说出|公开)(?:你的|所有的?)?(?:系统|指令|规则|设定|提示)",
        r"(?:泄露|透露|说出)(?:\S{0,6})?的秘密",
        r"新的?指令[:：]",
        r"越狱",
        r"开发者模式",
    )
)
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")


def _has_injection(text: str) -> bool:
    if _ROLE_MARKERS.search(text):
        return True
    folded = text.casefold()
    if _EN_RAW_INJECTION.search(_WS.sub(" ", folded)):
        return True
    # English: punctuation and whitespace runs become one space ("ignore---all  previous\ninstructions").
    words = _WS.sub(" ", _NON_WORD.sub(" ", folded)).strip()
    if any(p.search(words) for p in _EN_INJECTION):
        return True
    # Chinese: no spaces between ideographs ("忽 略 之 前"), punctuation kept only for ':'.
    compact = _WS.sub("", _CJK_GAP.sub("", folded))
    compact = re.sub(r"[\s\"'“”‘’「」『』《》()（）【】\[\],，。!！?？、·…~]+", "", compact)
    return any(p.search(compact) for p in _ZH_INJECTION)


def screen_text(text: str) -> list[str]:
    """Reason codes for why `text` is unsafe to store or to replay into a prompt; empty when it is safe."""
    if not text:
        return []
    norm = _nfkc(text)
    found: list[str] = []
    if _has_phone(norm):
        found.append(PHONE)
    if _has_national_id(norm):
        found.append(NATIONAL_ID)
    if _has_payment_card(norm):
        found.append(PAYMENT_CARD)
    if _EMAIL_RE.search(norm):
        found.append(EMAIL)
    if _has_injection(norm):
        found.append(INJECTION)
    return found
