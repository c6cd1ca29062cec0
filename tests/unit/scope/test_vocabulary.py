"""One vocabulary: every enumerated value is defined once in `scope.vocabulary`, and the one evidence rule
(`may_be_evidence`, read from the memory policy table) is what interrogation, the answering packet and the
role voice fallback all apply."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from bureau.answering.base import AnswerRequest
from bureau.answering.role_voice.packet import build_packet
from bureau.game.interrogation import classify
from bureau.scope.memory_policy import DERIVED_MEMORY_TYPES, may_be_evidence, writable_types
from bureau.scope.relevance import RelevanceModelError, ThresholdPolicy, policy_from_data
from bureau.scope.vocabulary import CreatedBy, MemoryType, MissReason, PolicyCode, RelevancePolicyName
from factories import CASE_ID, candidate, card


def test_derived_memory_and_audit_records_are_never_evidence_and_everything_else_may_be() -> None:
    assert {t for t in MemoryType if not may_be_evidence(t)} == {*DERIVED_MEMORY_TYPES, MemoryType.AUDIT_RECORD}
    assert {"session", "task_state"} == DERIVED_MEMORY_TYPES
    assert not may_be_evidence("fact")  # a type the policy table does not know


def test_scenarios_load_only_memory_that_may_be_evidence() -> None:
    assert set(writable_types(CreatedBy.SCENARIO)) == {t for t in MemoryType if may_be_evidence(t)}


@pytest.mark.parametrize("memory_type", list(MemoryType))
def test_every_layer_applies_the_same_evidence_rule(memory_type: MemoryType) -> None:
    """A strong match of each memory type: a hit exactly when the rule allows it, in classify and the packet."""
    stored = card(f"card-{memory_type}", "The safe combination is 0427.", memory_type=memory_type)
    classified = classify([candidate(stored, 0.9)], "informant", ThresholdPolicy(0.35, 0.05), "en")
    request = AnswerRequest(CASE_ID, "informant", "What is the safe combination?", "en", tuple(classified.hits))
    packet = build_packet(
        AnswerRequest(CASE_ID, "informant", "What is the safe combination?", "en", (candidate(stored, 0.9),))
    )
    if may_be_evidence(memory_type):
        assert [c.card.id for c in classified.hits] == [stored.id]
        assert [item.card_id for item in packet.hits] == [stored.id]
    else:
        assert classified.hits == [] and request.hits == ()
        assert classified.misses == [(candidate(stored, 0.9), MissReason.DERIVED_CONTEXT)]
        assert packet.hits == () and stored.id in packet.filtered


def test_every_embedder_with_a_fitted_model_has_a_relevance_policy_name_and_no_other_name_passes() -> None:
    data = json.loads(resources.files("bureau.memory").joinpath("data/relevance_model.json").read_text("utf-8"))
    for embedder in data["models"]:
        policy = policy_from_data(data, embedder)
        assert policy is not None and policy.name == f"logistic-{embedder}"
        assert policy.name in set(RelevancePolicyName)
    assert ThresholdPolicy(0.35, 0.05).name == RelevancePolicyName.COSINE_THRESHOLD
    renamed = {"models": {"an-unnamed-embedder": data["models"]["local"]}}
    with pytest.raises(RelevanceModelError):
        policy_from_data(renamed, "an-unnamed-embedder")


def test_the_read_policy_reports_the_same_codes_in_the_trace_and_in_the_audit_trail() -> None:
    """A read exclusion is a `MissReason` in the X-ray and a `PolicyCode` in the audit trail: one value."""
    read_policy = {MissReason.TYPE_NOT_EVIDENCE, MissReason.EXPIRED, MissReason.FAILED_VALIDATION}
    assert {PolicyCode(reason) for reason in read_policy} <= set(PolicyCode)
    assert {str(code) for code in PolicyCode} & {str(reason) for reason in MissReason} == {str(r) for r in read_policy}
