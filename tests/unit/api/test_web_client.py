"""The web client is generated from the app's OpenAPI document: the committed document and rules must be
what the app produces now (`make client` regenerates them; web/src/api/schema.test.ts checks the types)."""

from __future__ import annotations

import importlib.util
import json
import re
from types import ModuleType

from live_server import REPO


def _export_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("export_openapi", REPO / "scripts" / "export_openapi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_openapi_document_and_rules_are_current() -> None:
    stale = [
        str(path.relative_to(REPO))
        for path, text in _export_script().generated_files().items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    assert stale == [], f"stale generated files {stale}: run `make client` and commit the result"


def test_the_web_limits_are_the_games_own() -> None:
    """The one vocabulary of limits (`scope/limits.py`), as the schema states them and the web reads them."""
    from bureau.api.security import PASSCODE_MAX_CHARS
    from bureau.scope.limits import CLAIM_MAX_CHARS, MAX_CARD_CHARS, QUESTION_MAX_CHARS, SOURCE_MAX_CHARS
    from bureau.scope.memory_policy import DERIVED_MEMORY_TYPES, PREFERENCE_KEYS

    rules = (REPO / "web/src/api/rules.ts").read_text(encoding="utf-8")
    limits = re.search(r"export const LIMITS = (\{.*?\}) as const;", rules)
    derived = re.search(r"export const DERIVED_MEMORY_TYPES = (\[.*?\]) as const;", rules)
    preferences = re.search(r"export const PREFERENCE_LIMITS = (\{.*?\}) as const;", rules)
    assert limits is not None and derived is not None and preferences is not None
    assert json.loads(limits.group(1)) == {
        "whisperText": MAX_CARD_CHARS,
        "whisperSource": SOURCE_MAX_CHARS,
        "claim": CLAIM_MAX_CHARS,
        "question": QUESTION_MAX_CHARS,
        "crossExaminationQuestion": QUESTION_MAX_CHARS,
        "passcode": PASSCODE_MAX_CHARS,
    }
    assert set(json.loads(derived.group(1))) == DERIVED_MEMORY_TYPES
    assert json.loads(preferences.group(1)) == {str(key): rule.max_chars for key, rule in PREFERENCE_KEYS.items()}


def test_no_web_source_copies_a_limit() -> None:
    """The limits live in rules.ts; a number copied into a component or a state module would drift."""
    generated = {REPO / "web/src/api/schema.ts", REPO / "web/src/api/rules.ts"}
    sources = [*(REPO / "web/src").rglob("*.tsx"), *(REPO / "web/src").rglob("*.ts")]
    copied = [
        str(path.relative_to(REPO))
        for path in sources
        if path not in generated
        and ".test." not in path.name
        and re.search(r"maxLength=\{\d+\}|MAX_CHARS = \d+|\b(280|500|256)\b", path.read_text(encoding="utf-8"))
    ]
    assert copied == []
