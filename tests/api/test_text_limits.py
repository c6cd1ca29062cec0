"""How long a text may be, and which characters it may hold: one rule (`scope/limits.py`), stated by the
request schema and checked again by the game. A limit counts the code points of the text as sent (an emoji
is one, as JSON Schema's `maxLength` counts it, though it is two UTF-16 units); a text at the limit is taken,
one more is a 422 naming the field. NFKC may lengthen what the game stores, never what it counts."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from bureau.api.deps import Services
from bureau.game.errors import UnsafeInputError
from bureau.scope.limits import CLAIM_MAX_CHARS, MAX_CARD_CHARS, NFKC_MAX_GROWTH, QUESTION_MAX_CHARS, SOURCE_MAX_CHARS
from bureau.scope.memory_policy import PREFERENCE_KEYS
from bureau.scope.vocabulary import PreferenceKey
from helpers import NewCase, cards, snapshot

DIET = PREFERENCE_KEYS[PreferenceKey.DIETARY_PREFERENCE].max_chars
PREFERENCE = {"role": "informant", "memory_type": "user_preference", "key": "dietary_preference"}
CARD = ["body", "other_types"]
# (route, the rest of the body, the text field, its limit, what a text at the limit gets, the 422's path)
FIELDS: list[tuple[str, dict[str, Any], str, int, int, list[str]]] = [
    ("/whispers", {"role": "informant"}, "text", MAX_CARD_CHARS, 201, [*CARD, "text"]),
    ("/whispers", {"role": "informant", "text": "A van came."}, "source", SOURCE_MAX_CHARS, 201, [*CARD, "source"]),
    ("/whispers", PREFERENCE, "text", DIET, 201, ["body", "user_preference", "dietary_preference", "text"]),
    ("/interrogations", {"role": "informant"}, "question", QUESTION_MAX_CHARS, 200, ["body", "question"]),
    (
        "/cross-examinations",
        {"roles": ["detective", "suspect"]},
        "question",
        QUESTION_MAX_CHARS,
        200,
        ["body", "question"],
    ),
    ("/findings/evaluate", {}, "claim", CLAIM_MAX_CHARS, 200, ["body", "claim"]),
    ("/findings", {}, "claim", CLAIM_MAX_CHARS, 409, ["body", "claim"]),  # taken, and judged: nobody supports it
]


def text_of(length: int) -> str:
    """A harmless text of exactly `length` code points, the first an emoji (two UTF-16 units, one code point)."""
    return ("\U0001f600 " + "the grey van waited by the quay " * 20)[:length]


async def version_of(client: httpx.AsyncClient, case_id: str) -> int:
    return int((await snapshot(client, case_id))["case"]["version"])


@pytest.mark.parametrize(("route", "body", "field", "limit", "taken", "path"), FIELDS, ids=lambda v: str(v)[:24])
async def test_a_text_at_its_limit_is_taken_and_one_more_is_a_422_naming_the_field(
    route: str,
    body: dict[str, Any],
    field: str,
    limit: int,
    taken: int,
    path: list[str],
    client: httpx.AsyncClient,
    new_case: NewCase,
) -> None:
    case_id = (await new_case("night-ferry", "en"))["case"]["id"]
    at_limit = await client.post(f"/api/cases/{case_id}{route}", json={**body, field: text_of(limit)})
    assert at_limit.status_code == taken, at_limit.text
    version = await version_of(client, case_id)
    over = await client.post(f"/api/cases/{case_id}{route}", json={**body, field: text_of(limit + 1)})
    assert over.status_code == 422, over.text
    assert over.json()["detail"]["fields"] == [{"loc": path, "type": "string_too_long"}]
    assert await version_of(client, case_id) == version  # nothing written


async def test_the_document_states_each_limit_as_the_game_counts_it(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    stated = {
        "card": schemas["CardWhisper"]["properties"]["text"]["maxLength"],
        "preference": schemas["DietaryPreferenceWhisper"]["properties"]["text"]["maxLength"],
        "question": schemas["InterrogationBody"]["properties"]["question"]["maxLength"],
        "claim": schemas["FindingClaimBody"]["properties"]["claim"]["maxLength"],
    }
    assert stated == {
        "card": MAX_CARD_CHARS,
        "preference": DIET,
        "question": QUESTION_MAX_CHARS,
        "claim": CLAIM_MAX_CHARS,
    }


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("㍿" * MAX_CARD_CHARS, "株式会社" * MAX_CARD_CHARS),  # 280 code points sent, 1 120 stored
        ("\ufdfa" + "x" * (MAX_CARD_CHARS - 1), "صلى الله عليه وسلم" + "x" * (MAX_CARD_CHARS - 1)),  # ﷺ: 18
    ],
    ids=["square-kabushiki-kaisha", "arabic-ligature-sallallahou"],
)
async def test_a_text_nfkc_lengthens_is_counted_as_sent_and_stored_normalised(
    written: str, stored: str, client: httpx.AsyncClient, new_case: NewCase
) -> None:
    """Documented in docs/api.md: the limit is on the text as sent; the stored form is NFKC's, which writes out
    compatibility characters and so may be longer, at most NFKC_MAX_GROWTH times the limit."""
    case_id = (await new_case())["case"]["id"]
    response = await client.post(f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": written})
    assert response.status_code == 201, response.text
    [card] = [
        c for c in cards(await snapshot(client, case_id), "detective") if c["id"] == response.json()["card"]["id"]
    ]
    assert card["content"] == stored
    assert MAX_CARD_CHARS < len(card["content"]) <= NFKC_MAX_GROWTH * MAX_CARD_CHARS
    over = await client.post(f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": written + "x"})
    assert over.status_code == 422


# ----- the game checks the same rule for a text that does not come through HTTP ----------------------------


async def test_the_game_counts_as_the_schema_does(new_case: NewCase, services: Services) -> None:
    whispers, questions = services.bureau.whisper_service, services.bureau.question_service
    case_id = (await new_case("night-ferry", "en"))["case"]["id"]
    at_limit = await whispers.whisper(case_id, "informant", text_of(MAX_CARD_CHARS))
    assert at_limit.card.content == text_of(MAX_CARD_CHARS).strip()
    lengthened = await whispers.whisper(case_id, "informant", "㍿" * MAX_CARD_CHARS)
    assert len(lengthened.card.content) == 4 * MAX_CARD_CHARS
    refusals = [
        whispers.whisper(case_id, "informant", text_of(MAX_CARD_CHARS + 1)),
        whispers.whisper(case_id, "informant", "A van came.", source=text_of(SOURCE_MAX_CHARS + 1)),
        questions.interrogate(case_id, "informant", text_of(QUESTION_MAX_CHARS + 1)),
        questions.cross_examine(case_id, ["detective", "suspect"], text_of(QUESTION_MAX_CHARS + 1)),
        services.bureau.finding_service.promote(case_id, text_of(CLAIM_MAX_CHARS + 1)),
        whispers.whisper(case_id, "informant", "\u200b\u2800\u3164"),  # draws nothing
    ]
    for refusal in refusals:
        with pytest.raises(UnsafeInputError) as refused:
            await refusal
        assert refused.value.reasons == ["length"]


async def test_the_game_drops_a_control_character_the_schema_refuses(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    """Over HTTP a control character is a 422; another way in, the game drops it (defence in depth)."""
    case_id = (await new_case())["case"]["id"]
    bell = "A bell\x07 rang twice."
    refused = await client.post(f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": bell})
    assert refused.json()["detail"]["fields"] == [{"loc": [*CARD, "text"], "type": "string_pattern_mismatch"}]
    written = await services.bureau.whisper_service.whisper(case_id, "detective", bell)
    assert written.card.content == "A bell rang twice."
