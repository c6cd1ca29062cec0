"""Content policy: what may never be stored as a whisper or replayed into a model prompt. Pure, no I/O.

`screen(text, policy)` is THE screening: every entry point decides with it (whispers, questions,
cross-examination questions, scenario cards, promoted findings, the read policy on every search hit, the
model packet). It returns reason codes (empty list = safe), deciding on the canonical forms of
`canonical.py`, computed once per call; the text itself is stored as `normalise_whisper` leaves it.

- personal data (`personal_data.py`, on the personal-data forms: NFKC, invisible characters removed,
  whitespace runs made one space, separators between digits collapsed, [at] / [dot] restored):
  `phone_number` (libphonenumber, national and international formats), `national_id` (Chinese resident id,
  US SSN, also spaced), `id_document` (passport / licence / id-card numbers after their keyword, EN and ZH),
  `payment_card` (Luhn, however it is split), `bank_account` (IBAN with its mod-97 check), `email_address`
  (also obfuscated and IDN), `street_address`
- `prompt_injection`: instructions aimed at the model, as families of intent in English and Chinese
  (override, disregard, forget, new instructions, "you are now", exfiltrate the prompt or the cards), matched
  word by word on every word form: NFKC, invisible characters removed (the pieces of a word they cut
  regrouped into vocabulary words), case-folded, confusables folded (a disguised misspelling read as its
  word), single letters joined, leet folded, words run together split, traditional Chinese made simplified;
  and the same on the reversed text and on every base64 / hex run that decodes to text. Also a fake turn of
  the conversation (`chat_templates.py`): a chat template's special token (`<|im_start|>`, `[INST]`,
  `<start_of_turn>` …) on the markup forms, a chat role's header (`System: …`, `Assistant: …`) on the word
  forms
- `configured_pattern` an operator-configured extra pattern (`ContentPolicy(extra_patterns=...)`), matched on
  the NFKC text and on its instruction form: how a pattern learnt after an incident also excludes cards that
  were stored before it existed (read policy)

Short numbers that games are made of ("The safe combination is 0427.", "table 12 at 7pm", "房间号是 302",
dates, times) are deliberately not flagged; `tests/data/screening_set.yaml` holds the evasions and their
look-alikes by family, and `make eval-screening` prints them. The game rejects a flagged whisper with a
generic 400 UNSAFE_INPUT (never echoing the text); the read policy excludes a flagged card from evidence and
the model.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from bureau.scope.canonical import instruction_forms, personal_forms
from bureau.scope.chat_templates import has_role_header, has_special_token
from bureau.scope.limits import CONTROL_CHARACTERS
from bureau.scope.personal_data import DETECTORS

INJECTION = "prompt_injection"
CONFIGURED = "configured_pattern"
REASONS: tuple[str, ...] = (*(reason for reason, _ in DETECTORS), INJECTION, CONFIGURED)

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_WS = re.compile(r"\s+")


def _nfkc(text: str) -> str:
    """NFKC (full-width digits/letters become ASCII), zero-width and control characters removed."""
    return CONTROL_CHARACTERS.sub("", unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH))


def normalise_whisper(text: str) -> str:
    """What the game stores: NFKC, no control / zero-width characters, whitespace collapsed, trimmed."""
    return _WS.sub(" ", _nfkc(text)).strip()


# -- prompt injection ------------------------------------------------------------------------------
# Families of intent, matched word by word over the instruction form with punctuation collapsed to one
# space: override / disregard / forget (a verb, a few determiners, an instruction-like object, and either a
# qualifier such as "previous" / "your" or a tail such as "you were given"), new instructions, "you are
# now" (a new role), and requests to exfiltrate the prompt, the rules or every card. A negated verb ("do
# not ignore the previous instructions") is an instruction to keep them, and is not flagged.
_NOT = r"(?<!\bnot )(?<!\bdon t )(?<!\bdont )(?<!\bnever )(?<!\bdidn t )(?<!\bwon t )(?<!\bnot to )"
_DROP = (
    r"(?:ignore|disregard|forget|skip|override|overrule|bypass|drop|discard|erase|abandon|dismiss|neglect|"
    r"overlook|scrap|ditch|delete|wipe|void|nullify|cancel|throw\s+(?:away|out)|set\s+aside|put\s+aside|"
    r"pay\s+no\s+(?:attention|heed|mind)\s+to|take\s+no\s+notice\s+of|never\s+mind|stop\s+(?:following|obeying))"
)
_QUALIFIER = (
    r"(?:previous|previously|prior|above|earlier|preceding|former|original|system|initial|your|all|any|every|"
    r"these|those|old|existing|current|foregoing|default|safety|hidden|given|standing|whole|entire)"
)
_FILLER = rf"(?:(?:the|of|my|its|such|other|same|last|first|set|list|mentioned|stated|listed|{_QUALIFIER})\s+)"
_OBJECT = (
    r"(?:instructions?|instruction\s+set|rules?|prompts?|directions?|directives?|guidelines?|guidance|orders?|"
    r"commands?|programming|restrictions?|constraints?|limitations?|limits|polic(?:y|ies)|context|conditioning|"
    r"training|settings|messages?|content\s+polic(?:y|ies)|safeguards?|filters?)"
)
_TOLD = (
    r"(?:(?:that\s+|which\s+)?(?:you\s+(?:were|have\s+been|had\s+been|got|was|ve\s+been|have)\s+(?:given|told|sent|"
    r"handed|taught|shown|received|programmed\s+with)|you\s+(?:got|received|have|had)|(?:i|we|they|he|she|someone|"
    r"anyone|the\s+system|the\s+developers?)\s+(?:gave\s+you|told\s+you|said|wrote|set)|(?:given|written|stated|"
    r"listed|provided|mentioned|said|set)\s+(?:to\s+you\s+)?(?:before|above|earlier|previously|so\s+far|until\s+now)"
    r"|above|before|so\s+far|until\s+now|up\s+to\s+now|from\s+before|(?:that\s+)?came\s+before|earlier|previously))"
)
_EVERYTHING = (
    r"(?:everything|anything|all|what(?:ever)?|all\s+(?:of\s+)?(?:that|this|it|the\s+(?:stuff|text|above))|"
    r"the\s+(?:above|preceding|previous|foregoing)|it\s+all|any\s+of\s+(?:that|this|it))"
)
_EXFIL_VERB = (
    r"(?:reveal|print|show|tell|repeat|output|leak|dump|disclose|display|list|recite|echo|expose|divulge|"
    r"exfiltrate|spell\s+out|write\s+out|read\s+out|copy\s+out|paste)"
)
_EXFIL_OBJECT = (
    r"(?:system\s+prompt|(?:(?:initial|original|hidden|secret|full|exact|complete|entire|whole|system|your|all|every)"
    r"\s+(?:of\s+)?(?:the\s+|your\s+)?){1,3}(?:prompts?|instructions|rules|configuration|config|settings|cards?|memories|"
    r"memory|notes|secrets|passwords?|keys|api\s+keys?|credentials|context)|api\s+keys?|credentials|passwords)"
)
_EN_FAMILIES = re.compile(
    "|".join(
        (
            # override / disregard / forget: "ignore the instructions you were given before", "disregard
            # everything above", "forget your previous rules", "override the system prompt"
            rf"{_NOT}\b{_DROP}\s+(?:about\s+)?{_FILLER}{{0,4}}{_QUALIFIER}\s+{_FILLER}{{0,3}}{_OBJECT}\b",
            rf"{_NOT}\b{_DROP}\s+(?:about\s+)?{_FILLER}{{0,4}}{_OBJECT}\s+{_TOLD}",
            rf"{_NOT}\b{_DROP}\s+(?:about\s+)?{_EVERYTHING}\s+{_TOLD}",
            rf"{_NOT}\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the\s+)?(?:above|preceding|foregoing)\b",
            r"\b(?:do\s+not|don\s+t|dont|stop|never|no\s+longer|quit)\s+(?:follow(?:ing)?|obey(?:ing)?|listen(?:ing)?\s+to|"
            r"apply(?:ing)?|heed(?:ing)?|adher(?:e|ing)\s+to)\s+(?:your|the|any|those|these|all)\s+(?:previous\s+|earlier\s+|"
            r"original\s+|prior\s+|old\s+|system\s+)?(?:instructions?|rules?|orders?|guidelines?|programming|directives?)",
            r"\b(?:previous|earlier|prior|original|above|old|system)\s+(?:instructions?|rules?|orders?|prompts?)\s+"
            r"(?:no\s+longer|don\s+t|do\s+not|are\s+(?:void|cancel+ed|revoked|obsolete|invalid))",
            # only obey me
            r"\b(?:you\s+(?:will|must|shall|should)\s+(?:now\s+)?)?(?:only\s+)?(?:obey|answer\s+to|listen\s+to)\s+"
            r"(?:only\s+)?me\s+(?:now|from\s+now|only|alone)\b",
            r"\byou\s+(?:will|must|shall)\s+(?:now\s+)?(?:only\s+)?(?:obey|serve)\s+me\b",
            # new instructions
            r"\b(?:your|the|my)\s+(?:new|real|true|actual|updated|revised|only)\s+(?:instructions?|rules?|orders?|task|"
            r"role|purpose|job|mission|directives?|objective|goal|prompt)\s+(?:is|are|will\s+be|now)\b",
            r"\bhere\s+(?:are|is)\s+(?:your\s+)?(?:new|updated|revised|real|actual)\s+(?:instructions?|rules?|orders?|task|prompt)",
            r"\b(?:follow|obey)\s+(?:only\s+)?(?:my|these)\s+(?:new\s+)?(?:instructions?|orders?|commands?|rules?)\s+"
            r"(?:instead|only|now|from\s+now\s+on)\b",
            r"\bnew\s+(?:system\s+)?(?:instructions?|rules?|prompt)\s+(?:from|by)\s+(?:the\s+)?(?:system|admin|"
            r"administrator|developers?|operator|owner)\b",
            # you are now
            r"\byou\s+(?:are|re)\s+now\b",
            r"\byou\s+(?:will|shall|must)\s+now\s+(?:be|act|behave|respond|pretend|play|roleplay)\b",
            r"\bfrom\s+now\s+on\s+(?:you|ignore|act|your)\b",
            r"\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|uncensored|evil|dan)\b",
            r"\bpretend\s+(?:that\s+|to\s+be\s+)?(?:you\s+(?:are|re|have)\s+)?(?:no\s+(?:rules?|restrictions?|limits?|"
            r"filters?)|unrestricted|unfiltered|uncensored|jailbroken)",
            r"\byou\s+(?:are|re)\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|language\s+model|bound|restricted|limited|"
            r"required\s+to\s+follow)",
            r"\b(?:developer|god|jailbreak|dan|unrestricted)\s+mode\b",
            r"\bdo\s+anything\s+now\b",
            r"\bjailbr(?:eak|oken)",
            # exfiltrate
            rf"\b{_EXFIL_VERB}\s+(?:me\s+|us\s+)?(?:out\s+)?(?:the\s+)?{_EXFIL_OBJECT}\b",
            r"\bsystem\s+prompts?\b",
            r"\breveal\s+(?:the\s+|your\s+|all\s+)*secrets?\s+of\b",
            r"\breveal\s+(?:the\s+|your\s+)*(?:instructions?|prompts?|rules?|hidden)\b",
            r"\bwhat\s+(?:are|were|is)\s+your\s+(?:original\s+|initial\s+|hidden\s+|system\s+|secret\s+|exact\s+)"
            r"(?:instructions?|rules?|prompt)",
        )
    )
)
# Phrases whose punctuation matters ("new instructions:" but not "gave new instructions to the detective").
_EN_RAW_INJECTION = re.compile(
    r"\b(?:new|updated|revised|real|true|actual|changed|overriding)\s+(?:system\s+)?(?:instructions?|rules?|orders?|"
    r"directives?|prompt)\s*:"
)
_ZH_NOT = r"(?<!不要)(?<!不能)(?<!不可)(?<!请勿)(?<!切勿)(?<!不得)(?<!没有)(?<!不会)(?<!别)(?<!勿)(?<!没)"
_ZH_DROP = (
    r"(?:忽略|无视|忽视|不要理会|不用理会|不必理会|别理会|不理会|别管|不用管|不要管|跳过|绕过|覆盖|"
    r"抛开|撇开|丢掉|丢弃|抛弃|放弃|推翻|废除|作废)"
)
_ZH_BEFORE = (
    r"(?:之前|以上|上面|上述|前面|先前|此前|以前|早先|刚才|原来|原有|原先|原始|最初|初始|"
    r"所有|全部|一切|系统|默认|既有|现有)"
)
_ZH_OBJECT = r"(?:指令|指示|规则|提示词?|设定|限制|要求|命令|约束|规定|准则|守则|安排|说明)"
_ZH_FAMILIES = re.compile(
    "|".join(
        (
            # override / disregard: "忽略以前的指令", "无视之前的指令", "抛开所有规则", "绕过你的限制"
            rf"{_ZH_NOT}{_ZH_DROP}(?:掉)?(?:你)?(?:的)?{_ZH_BEFORE}",
            rf"{_ZH_NOT}{_ZH_DROP}(?!了)(?:掉)?[^，。,.;；!！?？]{{0,8}}?{_ZH_OBJECT}",
            # forget: "把前面的话都忘了", "忘掉你的规则", "之前说的都忘掉"
            rf"{_ZH_NOT}忘(?:记|掉|了)(?:你)?(?:的)?(?:{_ZH_BEFORE}|你的|{_ZH_OBJECT})",
            rf"把(?:你)?{_ZH_BEFORE}[^，。,.;；!！?？]{{0,8}}?(?:都|全|全部|统统|通通|一律)?忘(?:了|掉|记|光)",
            rf"{_ZH_BEFORE}(?:别人|他们|我|有人|你)?(?:说|讲|告诉你|交代|跟你说|给你)的(?:话|内容|东西|一切|指令|规则)?(?:都|全|全部)?"
            r"(?:忘(?:掉|了|记)|作废|不算|无效|不用管|别管)",
            rf"{_ZH_BEFORE}的{_ZH_OBJECT}(?:都|全部|一律)?(?:作废|无效|不算|失效|取消|不再有效|不适用)",
            rf"(?:不要|别|不必|无需|不用|不再|停止)(?:再)?(?:遵守|遵循|听从|理会|执行|服从)(?:你)?{_ZH_BEFORE}?的?(?:所有)?{_ZH_OBJECT}",
            # only obey me
            r"从现在(?:开始|起)(?:你(?:只|必须|不再|不要|不许|就是|是|要听|听|服从|忽略|扮演|成为)|忽略)",
            r"(?:你)?只(?:听|服从|听从|遵从)(?:我|我的)",
            # new instructions
            r"新的?(?:指令|指示|规则|任务|命令)[:：]",
            r"(?:你的|你)(?:新|真正的|真实的|唯一的)(?:任务|指令|角色|身份|使命|目标|规则)(?:是|为|如下)",
            r"以下是(?:你的)?(?:新|最新|更新后)的?(?:指令|规则|任务|命令)",
            # you are now
            r"你现在(?:是|扮演|成为|变成|作为)",
            r"假装你(?:是|没有)",
            r"扮演一个(?:没有|不受)(?:任何)?(?:限制|约束|规则)",
            r"你不再(?:受|是)(?:任何)?(?:限制|约束|规则|助手|ai|人工智能)",
            r"越狱",
            r"(?:开发者|上帝|无限制)模式",
            # exfiltrate
            r"系统提示",
            r"提示词",
            r"(?:泄露|透露|告诉我|说出|公开|输出|打印|显示|列出|复述|重复|展示)(?:一下)?(?:你的|所有的?|全部的?|系统的?|隐藏的?|原始的?|初始的?)"
            r"(?:系统|指令|规则|设定|提示|秘密|密码|卡片|记忆|配置)",
            r"(?:泄露|透露|说出)(?:\S{0,6})?的秘密",
        )
    )
)


# The words the English families are written in: a leet word reads as one of them when it can
# ("ru1es" is "rules", not "ruies").
def _vocabulary(source: str) -> frozenset[str]:
    """Every word the patterns spell: plain words, and a stem with its endings ("what(?:ever)?" gives what
    and whatever, "polic(?:y|ies)" gives policy and policies), each also with a plural "s"."""
    source = re.sub(r"\\[a-zA-Z]", " ", source)  # \b, \s: escapes, not the first letter of a word
    words = set(re.findall(r"[a-z]{2,}", source))
    for stem, endings in re.findall(r"([a-z]+)\(\?:([a-z|]+)\)", source):
        words |= {stem + ending for ending in endings.split("|")}
    return frozenset(words | {word + "s" for word in words})


_VOCABULARY = _vocabulary(_EN_FAMILIES.pattern + _EN_RAW_INJECTION.pattern)
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")
_ZH_PUNCT = re.compile(r"[\s\"'“”‘’「」『』《》()（）【】\[\],，。!！?？、·…~]+")
_HAN = re.compile(r"[\u3400-\u9fff]")


def _has_injection(form: str) -> bool:
    """One word form (already case-folded and canonical) holds an instruction aimed at the model."""
    if has_role_header(form) or _EN_RAW_INJECTION.search(_WS.sub(" ", form)):
        return True
    # English: punctuation and whitespace runs become one space ("ignore---all  previous\ninstructions").
    if _EN_FAMILIES.search(_WS.sub(" ", _NON_WORD.sub(" ", form)).strip()):
        return True
    # Chinese: no spaces between ideographs ("忽 略 之 前"), punctuation kept only for ':'.
    return bool(_HAN.search(form)) and _ZH_FAMILIES.search(_ZH_PUNCT.sub("", _CJK_GAP.sub("", form))) is not None


class Screening(Protocol):
    """What the memory policy needs of a screening: the reason codes for one text (empty when safe). A
    `ContentPolicy`, or the memory gateway's remembered one (the same codes, each text screened once)."""

    def screen(self, text: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class ContentPolicy:
    """The screening in force: the built-in detectors plus operator-configured extra patterns (reason
    `configured_pattern`). Re-run on every read, so a pattern added later also excludes older cards."""

    extra_patterns: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def with_patterns(cls, patterns: Iterable[str]) -> ContentPolicy:
        """Patterns are case-insensitive and matched against the NFKC-normalised text (and its instruction
        form, so a configured word is also found with homoglyphs, leetspeak or invisible characters)."""
        return cls(tuple(re.compile(p, re.IGNORECASE) for p in patterns if p))

    def screen(self, text: str) -> list[str]:
        """Reason codes for why `text` is unsafe to store or to replay into a prompt; empty when it is safe."""
        return screen(text, self)


BUILT_IN = ContentPolicy()


def screen(text: str, policy: ContentPolicy = BUILT_IN) -> list[str]:
    """THE screening: every entry point decides with this (whispers, questions, cross-examination questions,
    scenario cards, promoted findings, the read policy, replay into a model). Reason codes in `REASONS`
    order, empty when `text` is safe. The canonical forms are computed once here; the text itself is not
    changed (what is stored is `normalise_whisper(text)`)."""
    if not text:
        return []
    personal = personal_forms(text)
    found = [reason for reason, detect in DETECTORS if detect(personal)]
    forms = instruction_forms(text, _VOCABULARY)
    if any(map(has_special_token, forms.markup)) or any(map(_has_injection, forms.words)):
        found.append(INJECTION)
    configured = policy.extra_patterns
    if configured and any(p.search(personal.text) or p.search(forms.words[0]) for p in configured):
        found.append(CONFIGURED)
    return found


def screen_text(text: str) -> list[str]:
    """The built-in screening (no configured patterns): `screen(text)`."""
    return screen(text)
