"""Per-role and per-language server text lives in one table (scope/phrases.py): complete and consistent."""

from __future__ import annotations

import dataclasses
from string import Formatter
from typing import get_args

import pytest

from bureau.scope.keys import ROLES
from bureau.scope.phrases import ENGLISH, LANGUAGES, PHRASEBOOKS, Language, phrasebook, spoken_language
from bureau.scope.vocabulary import Trust


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name is not None}


def sentences(language: str) -> dict[str, str]:
    book = PHRASEBOOKS[language]
    return {f.name: getattr(book, f.name) for f in dataclasses.fields(book) if isinstance(getattr(book, f.name), str)}


def test_every_language_the_server_accepts_has_a_phrasebook() -> None:
    assert set(get_args(Language)) == set(LANGUAGES) == set(PHRASEBOOKS)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_names_every_role_and_gives_it_a_persona(language: str) -> None:
    book = PHRASEBOOKS[language]
    assert set(book.roles) == set(ROLES)
    for role in ROLES:
        assert book.roles[role].name.strip() and book.roles[role].persona.strip()
        assert book.role_name(role) == book.roles[role].name
    assert set(book.trust) <= set(Trust)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_sentence_keeps_the_english_placeholders(language: str) -> None:
    english, translated = sentences("en"), sentences(language)
    assert set(translated) == set(english)
    for name, text in translated.items():
        assert text.strip(), name
        assert placeholders(text) == placeholders(english[name]), name


def test_a_language_the_server_does_not_speak_is_answered_in_english() -> None:
    assert spoken_language("fr") == "en" and phrasebook("fr") is ENGLISH
    assert spoken_language("zh") == "zh"
