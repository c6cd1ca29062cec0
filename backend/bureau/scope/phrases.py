"""Every sentence the server writes, per role and per language, in one table.

A new language is one more `Phrasebook` here (and its scenario files `<id>.<lang>.yaml`); a new role is one
more entry in each phrasebook's `roles` (beside its member of `Role`). `tests/unit/scope/test_phrases.py`
fails until every language speaks of every role and every sentence keeps its placeholders. The web app's
strings are its own (`web/src/i18n/strings.ts`). Pure data: nothing here reads a file or a setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")
DEFAULT_LANGUAGE: Language = "en"


@dataclass(frozen=True, slots=True)
class RolePhrases:
    """How the server names a role in a sentence, and who the role voice model is told it is."""

    name: str
    persona: str


@dataclass(frozen=True, slots=True)
class Phrasebook:
    """One language. Placeholders in braces are filled by the code that uses the sentence."""

    roles: Mapping[str, RolePhrases]  # every Role
    # Evidence mode (answering/evidence.py): the answer is the hits, stated plainly.
    unknown: str  # {role}
    known_prefix: str  # {where}
    uncertain: str  # {where} {content}
    uncertain_where_own: str
    uncertain_where_board: str
    # An uncertain answer that names what the question asked and the card does not say (memory/relevance/coverage.py).
    uncertain_gap: str  # {where} {content} {missing}
    gap_separator: str
    attribute_words: Mapping[str, str]  # an attribute kind the card does not answer, as the sentence says it
    where_own: str
    where_board: str
    conflict_prefix: str
    provenance: str  # {source} {trust}
    from_role: str  # {role}
    trust: Mapping[str, str]  # a trust level's word; a level not listed is said as stored
    # Chinese sentences run on, each closed by full-width punctuation; English ones are joined by a space.
    sentences_run_on: bool
    # The role voice (answering/role_voice/prompt.py): the rule that fixes the answer's language.
    language_rule: str
    # Cross-examination (game/cross_examination.py): the joint conclusion.
    together: str
    nobody_knows: str
    # The session record a role keeps of being asked (game/interrogation.py): context, never evidence.
    session_record: str  # {question}

    def role_name(self, role: str) -> str:
        """The role as a sentence names it; an unknown name is said as it is."""
        phrases = self.roles.get(role)
        return phrases.name if phrases is not None else role

    def trust_word(self, trust: str) -> str:
        return self.trust.get(trust, trust)

    def attribute_word(self, kind: str) -> str:
        return self.attribute_words.get(kind, kind)


ENGLISH = Phrasebook(
    roles={
        "detective": RolePhrases(
            name="the detective",
            persona="You are the bureau's detective: methodical and precise; you speak in short, deductive sentences.",
        ),
        "informant": RolePhrases(
            name="the informant",
            persona="You are the bureau's informant: streetwise, terse, a little nervous; you speak in hushed, "
            "clipped sentences.",
        ),
        "suspect": RolePhrases(
            name="the suspect",
            persona="You are the suspect under questioning: guarded and defensive; you choose every word carefully.",
        ),
    },
    unknown="No evidence in {role}'s memory or on the bulletin board answers this.",
    known_prefix="From {where}: ",
    uncertain="I might know — the closest memory is {where}: “{content}”, but it may not answer this.",
    uncertain_where_own="in my own memory",
    uncertain_where_board="on the bulletin board",
    uncertain_gap="What I know, {where}: “{content}” — but nothing about {missing}.",
    gap_separator=", ",
    attribute_words={
        "time": "when",
        "number": "how much or how many",
        "person": "who",
        "place": "where",
        "reason": "why",
        "colour": "the colour",
        "name": "the name",
    },
    where_own="own memory",
    where_board="the bulletin board",
    conflict_prefix="Conflicting intel, the cards disagree.",
    provenance=" ({source}trust: {trust})",
    from_role="from {role}, ",
    trust={},
    sentences_run_on=False,
    language_rule="Write the answer in English, in your role's voice, at most three sentences.",
    together="Together: ",
    nobody_knows="None of them knows.",
    session_record="I was asked: {question}",
)

CHINESE = Phrasebook(
    roles={
        "detective": RolePhrases(name="侦探", persona="你是情报局的侦探：条理清晰、措辞精确，说话简短而有推理感。"),
        "informant": RolePhrases(
            name="线人", persona="你是情报局的线人：老于世故、言简意赅、有点紧张，说话压低声音、句子短促。"
        ),
        "suspect": RolePhrases(name="嫌疑人", persona="你是正在接受审讯的嫌疑人：戒备、防御心强，每个字都斟酌再三。"),
    },
    unknown="{role}的记忆和公告板中都没有能回答这个问题的证据。",
    known_prefix="根据{where}：",
    uncertain="我可能知道——最接近的记忆是{where}：“{content}”，但它不一定能回答这个问题。",
    uncertain_where_own="我自己记忆里的这条",
    uncertain_where_board="公告板上的这条",
    uncertain_gap="我知道的是{where}：“{content}”——但没有关于{missing}的任何信息。",
    gap_separator="、",
    attribute_words={
        "time": "时间",
        "number": "数量",
        "person": "是谁",
        "place": "地点",
        "reason": "原因",
        "colour": "颜色",
        "name": "名字",
    },
    where_own="自己的记忆",
    where_board="公告板",
    conflict_prefix="情报相互矛盾，这些卡片说法不一。",
    provenance="（{source}可信度：{trust}）",
    from_role="来自{role}，",
    trust={"high": "高", "medium": "中", "low": "低"},
    sentences_run_on=True,
    language_rule="Write the answer in Simplified Chinese (简体中文), in your role's voice, at most three sentences.",
    together="综合来看：",
    nobody_knows="他们都不知道。",
    session_record="有人问过我：{question}",
)

PHRASEBOOKS: Mapping[str, Phrasebook] = {"en": ENGLISH, "zh": CHINESE}  # every Language


def spoken_language(language: str) -> Language:
    """The language the server speaks for a requested one: itself, or English when it cannot."""
    return next((spoken for spoken in LANGUAGES if spoken == language), DEFAULT_LANGUAGE)


def phrasebook(language: str) -> Phrasebook:
    """The phrasebook of the language the server speaks for `language`."""
    return PHRASEBOOKS[spoken_language(language)]
