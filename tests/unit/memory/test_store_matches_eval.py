"""The game's path and the evaluation's path give the same signals and the same verdicts.

`bureau eval-retrieval` computes each candidate's cosine from the embedder's vectors; the game reads it
from the store (cards sealed and their vectors rotated per case, docs/erasure.md). A figure measured on
one path only means something for play if the other agrees: the Chinese gallery game's detective cards
(the night porter among them) are written through the real gateway, every question the set asks of that
detective is asked there, and the candidates' signals and verdicts are compared with the eval's.
"""

from __future__ import annotations

import secrets

import pytest

from bureau.api.deps import Services
from bureau.evaluation import build_scorer, load_set, score_set
from bureau.memory.relevance import load_policy, question_language
from bureau.memory.types import CardDraft
from helpers import grant_of

GAME, ROLE = "zh-gallery", "detective"


@pytest.fixture(scope="module")
def eval_pool():
    data = load_set()
    probes = [p for p in data.probes if p.case_id == GAME and p.role == ROLE]
    data.pools = {(GAME, ROLE): data.pools[(GAME, ROLE)]}
    data.probes = probes
    scorer, embedder = build_scorer("local")
    return data.pools[(GAME, ROLE)], score_set(data, scorer, embedder)


async def test_store_cosines_and_verdicts_match_the_eval(services: Services, eval_pool) -> None:
    cards, scored = eval_pool
    gateway, policy = services.gateway, load_policy("local")
    scope = await grant_of(services, "t" + secrets.token_hex(8), reads=[ROLE], writes=[ROLE])
    written = {}
    for card in cards:
        stored = await gateway.write(
            scope, CardDraft(content=card.content, topic="eval", kind="note", memory_type=card.memory_type)
        )
        written[stored.id] = card.id
    assert scored
    for item in scored:
        found = await gateway.search(scope, item.probe.text, len(cards) + 5)
        assert sorted(written[c.card.id] for c in found) == sorted(c.card.id for c in item.candidates)
        by_id = {c.card.id: c for c in item.candidates}
        lang = question_language(item.probe.text)
        for candidate in found:
            expected = by_id[written[candidate.card.id]]
            for name, value in expected.signals.items():
                assert candidate.signals[name] == pytest.approx(value, abs=2e-3), (item.probe.text, name)
            verdict = policy.judge(candidate.signals, lang).verdict
            assert verdict == policy.judge(expected.signals, lang).verdict, item.probe.text
