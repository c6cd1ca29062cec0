"""Findings (docs/findings.md): how knowledge drawn from several private spaces becomes general without
becoming any one role's data in a costume.

evaluate: the operator's claim is checked against every role's private cards with interrogation's own
relevance (`search_and_classify`, the claim as the question, one role's private space at a time); only a
known-grade match supports it. Each match is a contribution, counted only if independent (another role,
another source, no echo, no board copy) — `scope/support.py` — and the claim qualifies only if leave-one-out
still leaves `BUREAU_FINDING_MIN_SUPPORT` independent contributors.

promote: a Saga like publish. The ledger first (the finding row with its mapping, keyed pseudonyms only),
then the board card (text, support figures, scope, review date; its metadata carries the finding id, so a
crashed attempt finds it again), then ready with the case change. The board card names no card, role or
source: nothing a reader can follow home. Erasure (a deleted card, a reset, an erased case) re-runs
leave-one-out from the ledger and withdraws what no longer qualifies (`ledger/finding_rows.py`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from bureau.config import Settings
from bureau.game.compensation import discard_card
from bureau.game.contract import ClaimEvaluation, Finding, FindingEvaluation, FindingList, FindingPromotion
from bureau.game.errors import CaseNotFoundError, FindingNotQualifiedError, FindingPendingError, UnsafeInputError
from bureau.game.inputs import checked_text
from bureau.game.interrogation import search_and_classify
from bureau.game.keys import Keys
from bureau.game.views import card_event_view, card_view
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import (
    CaseMissingError,
    CaseRecord,
    CaseRepository,
    CleanupRepository,
    FindingFigures,
    FindingRecord,
    FindingRepository,
    GenerationMovedError,
    PendingEvent,
    RecordRepository,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, FindingMark, MemoryUnavailableError, StoredCard
from bureau.scope.keys import BOARD, ROLES, Role
from bureau.scope.limits import CLAIM_MAX_CHARS
from bureau.scope.support import Contribution, leave_one_out, matching, source_key
from bureau.scope.vocabulary import (
    ContributionStatus,
    CreatedBy,
    EventType,
    FindingDecision,
    FindingState,
    Kind,
    MemoryType,
    Trust,
)
from bureau.vault import Grant

log = logging.getLogger("bureau.findings")
MAX_PROPOSALS = 6
# Proposals search each card against the other roles: bounded to each role's newest cards, so the route stays
# quick in a case of any size (a claim the operator writes is always judged against every card).
PROPOSAL_CARDS_PER_ROLE = 20
PENDING_WAIT_S = 2.0
PENDING_POLL_S = 0.05
_TRUST_ORDER = [Trust.LOW, Trust.MEDIUM, Trust.HIGH]  # lowest first
UNTOPICAL = frozenset({"whisper", "session", "finding"})


@dataclass(slots=True)
class Assessed:
    """One claim, judged against every role's private cards and the board."""

    claim: str
    proposed: bool
    min_support: int
    contributors: list[dict[str, Any]] = field(default_factory=list)
    eligible: list[Contribution] = field(default_factory=list)
    counted: list[StoredCard] = field(default_factory=list)
    support: int = 0
    leave_one_out: int = 0
    contradictions: int = 0

    @property
    def qualifies(self) -> bool:
        return self.leave_one_out >= self.min_support

    @property
    def trust(self) -> str:
        levels = [Trust(c.trust) if c.trust in Trust._value2member_map_ else Trust.LOW for c in self.counted]
        return min(levels, key=_TRUST_ORDER.index) if levels else Trust.LOW

    def view(self, promoted: FindingRecord | None = None) -> ClaimEvaluation:
        decision = FindingDecision.QUALIFIES if self.qualifies else FindingDecision.NOT_QUALIFIED
        if promoted is not None and promoted.state == FindingState.READY:
            decision = FindingDecision.PROMOTED
        return ClaimEvaluation.model_validate(
            {
                "claim": self.claim,
                "proposed": self.proposed,
                "contributors": self.contributors,
                "support": self.support,
                "leave_one_out": self.leave_one_out,
                "min_support": self.min_support,
                "margin": self.leave_one_out - self.min_support,
                "contradictions": self.contradictions,
                "trust": self.trust,
                "decision": decision,
                "finding_id": promoted.id if promoted is not None else None,
            }
        )


def _status_of(card: StoredCard, matched: list[Contribution], by_card: dict[str, Contribution]) -> str:
    mine = by_card[card.id]
    if any(c.card == card.id for c in matched):
        return ContributionStatus.COUNTED
    if any(c.role == mine.role for c in matched):
        return ContributionStatus.SAME_ROLE
    return ContributionStatus.SHARED_SOURCE


def _figures(f: FindingFigures) -> dict[str, Any]:
    """The figures every view of a finding shows, the margin over the minimum support among them."""
    return {
        "support": f.support,
        "leave_one_out": f.leave_one_out,
        "min_support": f.min_support,
        "margin": f.leave_one_out - f.min_support,
        "contradictions": f.contradictions,
        "trust": f.trust,
    }


def _promoted_view(claim: str, proposed: bool, record: FindingRecord) -> ClaimEvaluation:
    f = record.figures
    return ClaimEvaluation.model_validate(
        {
            "claim": claim,
            "proposed": proposed,
            "contributors": [],
            **_figures(f),
            "decision": FindingDecision.PROMOTED,
            "finding_id": record.id,
        }
    )


def finding_view(record: FindingRecord) -> Finding:
    """A finding as every view shows it: its figures and state, never a contributor."""
    f = record.figures
    return Finding.model_validate(
        {
            "id": record.id,
            "state": record.state,
            "claim": record.claim if record.state != FindingState.WITHDRAWN else None,
            "public_card_id": record.public_card_id if record.state == FindingState.READY else None,
            **_figures(f),
            "review_at": f.review_at.date().isoformat(),
            "scope": "bulletin_board",
            "promoted_at": record.promoted_at.isoformat() if record.promoted_at else None,
            "withdrawn_at": record.withdrawn_at.isoformat() if record.withdrawn_at else None,
        }
    )


class Findings:
    def __init__(
        self,
        settings: Settings,
        gateway: MemoryGateway,
        keys: Keys,
        *,
        cases: CaseRepository,
        record: RecordRepository,
        findings: FindingRepository,
        cleanups: CleanupRepository,
    ) -> None:
        """`record`: what an evaluation reads; `findings`: the Saga's rows; `cleanups`: a board card left."""
        self.settings = settings
        self.gateway = gateway
        self.cases, self.record, self.findings, self.cleanups = cases, record, findings, cleanups
        self.keys = keys
        self.lease_s = settings.publication_lease_s
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        # Test seam, as the publisher's: a hook that may raise at a named step of the Saga.
        self.fault: Callable[[str], None] = lambda step: None

    @property
    def min_support(self) -> int:
        return self.settings.finding_min_support

    # ----- evaluate ------------------------------------------------------------------------------------

    def screened(self, claim: str) -> str:
        """The claim is the operator's text, screened like a whisper, one sentence (no line breaks)."""
        if "\n" in claim.strip() or "\r" in claim.strip():
            raise UnsafeInputError(["not_one_sentence"])
        return checked_text(claim, CLAIM_MAX_CHARS, screening=self.gateway.screening)

    async def evaluate(self, case: CaseRecord, claim: str | None) -> FindingEvaluation:
        """Under the findings grant: every role's cards, the board and the record are read for the findings
        purpose only; nothing read under it reaches a role, a prompt or the stage."""
        async with self.keys.findings(case) as grant:
            return await self._evaluate(case, grant, claim)

    async def _evaluate(self, case: CaseRecord, grant: Grant, claim: str | None) -> FindingEvaluation:
        case_id = case.id
        record = await self.record.case_record(case_id, grant)
        if claim is not None:
            claims = [(self.screened(claim), False)]
        else:
            claims = [(text, True) for text in await self.proposals(case, grant)]
        results = []
        for text, proposed in claims:
            promoted = await self.findings.finding_for_claim(case_id, text, grant)
            if promoted is not None and promoted.state == FindingState.READY:
                # After promotion no view shows which cards supported it: the figures, never the contributors.
                results.append(_promoted_view(text, proposed, promoted))
                continue
            assessed = await self.assess(case, grant, text, record, proposed=proposed)
            results.append(assessed.view(promoted))
        return FindingEvaluation(min_support=self.min_support, claims=results)

    async def assess(
        self, case: CaseRecord, grant: Grant, claim: str, record: Sequence[RecordEntry], *, proposed: bool = False
    ) -> Assessed:
        """Every role's private cards judged against the claim, exactly as interrogation judges a role's
        cards against a question (one role's space at a time: its part of the grant); the board's matches are
        listed too (never contributors)."""
        case_id = case.id
        result = Assessed(claim, proposed, self.min_support)
        on_board_at = await self.findings.claim_first_promoted(case_id, claim, grant)
        known: list[tuple[Role, StoredCard, float]] = []
        close: list[tuple[Role, StoredCard, float]] = []
        for role in ROLES:
            classified = (
                await search_and_classify(self.gateway, self.settings, _reading(grant, role), role, claim, claim=True)
            ).classified
            known += [(role, c.card, classified.judgements[c.card.id].score) for c in classified.hits]
            close += [(role, c.card, classified.judgements[c.card.id].score) for c in classified.borderline]
        board_hits = await self._board_matches(grant, claim)
        asked_at = await self._asked_at(case_id, claim, record)
        if board_hits:
            first = min(card.created_at for card, _ in board_hits)
            on_board_at = min(on_board_at, first) if on_board_at else first
        by_card: dict[str, Contribution] = {}
        statuses: dict[str, str] = {}
        for role, card, _ in known:
            if on_board_at is not None and card.created_at > on_board_at:
                statuses[card.id] = ContributionStatus.ECHO_BOARD
            elif asked_at.get(role) is not None and card.created_at > asked_at[role]:
                statuses[card.id] = ContributionStatus.ECHO_QUESTION
            else:
                by_card[card.id] = Contribution(card.id, role, source_key(card.told_by, card.created_by, card.id))
        result.eligible = list(by_card.values())
        matched = matching(result.eligible)
        for _, card, _ in known:
            if card.id in by_card:
                statuses[card.id] = _status_of(card, matched, by_card)
        counted_ids = {c.card for c in matched}
        result.counted = [card for _, card, _ in known if card.id in counted_ids]
        result.support = len(matched)
        result.leave_one_out = leave_one_out(result.eligible)
        result.contradictions = _contradictions(result.counted, [card for _, card, _ in close])
        rows: list[tuple[Role | None, StoredCard, float, str]] = [
            (role, card, score, statuses[card.id]) for role, card, score in known
        ]
        rows += [(role, card, score, ContributionStatus.UNCERTAIN) for role, card, score in close]
        rows += [(None, card, score, ContributionStatus.BOARD_COPY) for card, score in board_hits]
        result.contributors = [
            {
                "card_id": card.id,
                "role": role,
                "source": card.told_by,
                "status": status,
                "score": round(score, 4),
                "created_at": card.created_at.isoformat(),
                "content": card.content,
            }
            for role, card, score, status in sorted(rows, key=lambda r: (r[3] != ContributionStatus.COUNTED, -r[2]))
        ]
        return result

    async def _board_matches(self, grant: Grant, claim: str) -> list[tuple[StoredCard, float]]:
        searched = await search_and_classify(
            self.gateway, self.settings, _reading(grant, BOARD), ROLES[0], claim, claim=True
        )
        return [(c.card, searched.classified.judgements[c.card.id].score) for c in searched.classified.hits]

    async def _asked_at(self, case_id: str, claim: str, record: Sequence[RecordEntry]) -> dict[str, datetime]:
        """When each role was first asked a question about the claim: the questions of the case record (the
        body, sealed at rest) compared with the claim by sentence similarity at the configured cut. A card
        written to that role afterwards may be the bureau's own voice coming back."""
        asked = [(entry, str(entry.body.get("question", ""))) for entry in record if entry.body.get("question")]
        if not asked:
            return {}
        scores = await self.gateway.sentence_similarities(case_id, claim, [q for _, q in asked])
        first: dict[str, datetime] = {}
        for (entry, _), score in zip(asked, scores, strict=True):
            if score < self.settings.effective_threshold:
                continue
            for role in entry.roles:
                if role not in first or entry.created_at < first[role]:
                    first[role] = entry.created_at
        return first

    async def proposals(self, case: CaseRecord, grant: Grant) -> list[str]:
        """Claims worth evaluating: cards of different roles where one card, taken as a claim, finds the other at
        known grade, grouped; each group's shortest text is offered as a draft the operator rewrites in their own
        words. One way is enough: under the coverage rule a card with one word more ("午夜时分" for "午夜") is
        not covered by the shorter one. A draft qualifies for nothing by itself: its own evaluation decides."""
        listed = await self.gateway.list_spaces(grant.narrowed(reads=ROLES, writes=(), record=False))
        cards = {role: [c for c in listed[role] if c.may_be_evidence] for role in ROLES}
        hits: dict[str, set[str]] = {}
        for role, own in cards.items():
            for card in own:
                found: set[str] = set()
                for other in ROLES:
                    if other == role or not cards[other]:
                        continue
                    searched = await search_and_classify(
                        self.gateway, self.settings, _reading(grant, other), other, card.content, claim=True
                    )
                    found |= {c.card.id for c in searched.classified.hits}
                hits[card.id] = found
        parent = {card_id: card_id for card_id in hits}

        def root(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, found in hits.items():
            for b in found:
                if b in hits:
                    parent[root(a)] = root(b)
        groups: dict[str, list[StoredCard]] = {}
        every = {card.id: card for own in cards.values() for card in own}
        for card_id in hits:
            groups.setdefault(root(card_id), []).append(every[card_id])
        drafts = [
            min((c.content for c in group), key=lambda t: (len(t), t))
            for group in groups.values()
            if len({c.space for c in group}) >= 2
        ]
        return sorted(set(drafts))[:MAX_PROPOSALS]

    # ----- promote -------------------------------------------------------------------------------------

    async def promote(self, case: CaseRecord, claim: str) -> FindingPromotion:
        """The finding with its board card (`idempotent`: promoted before). The same claim promoted twice is
        one card."""
        case_id = case.id
        text = self.screened(claim)
        key = (case_id, " ".join(text.casefold().split()))
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock, self.keys.findings(case) as grant:
                return await self._settle(case, grant, text)
        except CaseMissingError as exc:
            raise CaseNotFoundError(case_id) from exc
        finally:
            if not lock.locked():
                self._locks.pop(key, None)

    async def _settle(self, case: CaseRecord, grant: Grant, claim: str) -> FindingPromotion:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PENDING_WAIT_S
        case_id = case.id
        while True:
            existing = await self.findings.finding_for_claim(case_id, claim, grant)
            if existing is not None and existing.state == FindingState.READY and existing.public_card_id:
                card = await self.gateway.get(_reading(grant, BOARD), existing.public_card_id)
                if card is not None:
                    return FindingPromotion(finding=finding_view(existing), card=card_view(card), idempotent=True)
            if existing is not None and existing.state == FindingState.PENDING:
                if existing.lease_live():
                    if loop.time() >= deadline:
                        raise FindingPendingError(max(1, round(self.lease_s / 2)))
                    await asyncio.sleep(PENDING_POLL_S)
                    continue
                owner = secrets.token_hex(8)
                if await self.findings.take_over_finding(case_id, existing.id, owner, self.lease_s):
                    return await self._run_owned(grant, existing, owner)
                continue
            assessed = await self.assess(case, grant, claim, await self.record.case_record(case_id, grant))
            if not assessed.qualifies:
                await self._unless_reset(case)
                raise FindingNotQualifiedError("not qualified")
            owner = secrets.token_hex(8)
            figures = FindingFigures(
                support=assessed.support,
                leave_one_out=assessed.leave_one_out,
                min_support=self.min_support,
                contradictions=assessed.contradictions,
                trust=assessed.trust,
                review_at=datetime.now(UTC) + timedelta(days=self.settings.finding_review_days),
            )
            reserved, record = await self.findings.reserve_finding(
                case_id, secrets.token_hex(12), claim, owner, self.lease_s, figures, assessed.eligible, grant
            )
            if reserved and not await self._contributors_still_there(grant, assessed.eligible):
                # A card it rests on was erased between the assessment and the reservation, before any erasure
                # could see this finding's mapping: free the claim and assess again.
                await self._release_quietly(record, owner)
                continue
            if reserved:
                return await self._run_owned(grant, record, owner)
            if loop.time() >= deadline:
                raise FindingPendingError(max(1, round(self.lease_s / 2)))

    async def _unless_reset(self, case: CaseRecord) -> None:
        """A claim judged on the cards of a generation a reset has replaced since (they are being deleted) says
        nothing about the case: the promotion runs again in the new generation (GenerationMovedError)."""
        now = await self.cases.get_case(case.id)
        if now is not None and now.generation != case.generation:
            raise GenerationMovedError(case.id)

    async def _contributors_still_there(self, grant: Grant, contributions: Sequence[Contribution]) -> bool:
        """Every card a reserved finding rests on is still its role's. From the reservation on, an erasure sees
        the finding's mapping and withdraws it itself (ledger/finding_rows.py: withdraw_unsupported), so this
        check, made after the reservation, closes the window between the assessment and it."""
        for contribution in contributions:
            role = cast(Role, contribution.role)
            if await self.gateway.get(_reading(grant, role), contribution.card) is None:
                return False
        return True

    async def _run_owned(self, grant: Grant, record: FindingRecord, owner: str) -> FindingPromotion:
        card: StoredCard | None = None
        try:
            self.fault("after_reserve")
            card = await self._find_or_write_card(grant, record)
            self.fault("after_board_write")
            f = record.figures
            done = await self.findings.complete_finding(
                record.case_id,
                record.id,
                owner,
                card.id,
                [
                    PendingEvent(EventType.MEMORY_WRITTEN, {"card": card_event_view(card)}),
                    PendingEvent(
                        EventType.FINDING_PROMOTED,
                        {
                            "finding_id": record.id,
                            "public_card_id": card.id,
                            "support": f.support,
                            "leave_one_out": f.leave_one_out,
                            "contradictions": f.contradictions,
                        },
                    ),
                ],
                generation=grant.generation,
            )
            if done is None:
                raise FindingNotQualifiedError("withdrawn or taken over while promoting")
        except Exception:
            if card is not None:
                await discard_card(self.gateway, self.cleanups, grant, BOARD, card.id, "finding_compensation")
            await self._release_quietly(record, owner)
            raise
        promoted = await self.findings.finding(record.case_id, record.id, grant)
        return FindingPromotion(finding=finding_view(promoted or record), card=card_view(card), idempotent=False)

    async def _find_or_write_card(self, grant: Grant, record: FindingRecord) -> StoredCard:
        """Reconcile first: a crashed attempt may already have written the card (found by its finding id)."""
        existing = await self.gateway.find_finding(grant, record.id)
        if existing:
            for extra in existing[1:]:
                await discard_card(self.gateway, self.cleanups, grant, BOARD, extra.id, "finding_compensation")
            found = await self.gateway.get(_reading(grant, BOARD), existing[0].id)
            if found is not None:
                return found
        f = record.figures
        draft = CardDraft(
            content=record.claim,
            topic="finding",
            kind=Kind.FINDING,
            memory_type=MemoryType.LONG_TERM_KNOWLEDGE,  # knowledge, never an instruction or a preference
            trust=f.trust,
            created_by=CreatedBy.SYSTEM,
            finding=FindingMark(
                finding_id=record.id,
                support=f.support,
                leave_one_out=f.leave_one_out,
                contradictions=f.contradictions,
                review_at=f.review_at.date().isoformat(),
            ),
        )
        return await self.gateway.write(grant, draft)

    async def _release_quietly(self, record: FindingRecord, owner: str) -> None:
        try:
            await self.findings.release_finding(record.case_id, record.id, owner)
        except Exception:
            log.warning("could not release a finding reservation; its lease will expire")

    async def roll_back_abandoned(self) -> int:
        """Undo promotions whose process died between reserving and `ready` and that nobody retried: their
        board card (found by its finding id) goes and the claim is free again. Only leases that ran out a
        whole lease ago, taken over first, so a live owner or a retry is never undercut. Returns how many."""
        undone = 0
        for record in await self.findings.abandoned_findings(older_than_s=self.lease_s):
            owner = secrets.token_hex(8)
            if not await self.findings.take_over_finding(record.case_id, record.id, owner, self.lease_s):
                continue  # a retry got there first: it reconciles
            await self._discard_cards(record.case_id, record.id, "finding_compensation")
            await self.findings.release_finding(record.case_id, record.id, owner)
            undone += 1
        if undone:
            log.warning("rolled back %d finding promotion(s) abandoned by a crashed process", undone)
        return undone

    # ----- list and withdraw ---------------------------------------------------------------------------

    async def list(self, case: CaseRecord) -> FindingList:
        async with self.keys.operator(case) as grant:
            return FindingList(findings=[finding_view(r) for r in await self.findings.findings(case.id, grant)])

    async def remove_withdrawn(self, case_id: str, withdrawn: Sequence[FindingRecord]) -> None:
        """After the ledger withdrew them (their named board cards are the erasure's own cleanup tasks): a stray
        card a stalled promotion wrote goes too."""
        for finding in withdrawn:
            try:
                await self._discard_cards(case_id, finding.id, "finding_withdrawn")
            except MemoryUnavailableError:
                log.warning("could not look for a withdrawn finding's stray card; a retry of it removes its own")

    async def _discard_cards(self, case_id: str, finding_id: str, reason: str) -> None:
        """Every board card of a finding, in any generation (ids only, their keys first)."""
        try:
            async with self.keys.lifecycle(case_id) as grant:
                for card in await self.gateway.find_finding(grant, finding_id):
                    await discard_card(self.gateway, self.cleanups, grant, BOARD, card.id, reason)
        except CaseNotFoundError:
            return  # the case's keys are gone: erased, its cards with it


def _contradictions(counted: Sequence[StoredCard], close: Sequence[StoredCard]) -> int:
    """Cards that are close to the claim (uncertain grade) on the same topic as a counted contributor: they
    say something about the same thing that is not the claim. Shown as a contradiction, kept apart from
    support."""
    topics = {c.topic for c in counted if c.topic not in UNTOPICAL}
    return sum(1 for card in close if card.topic in topics)


def _reading(grant: Grant, space: str) -> Grant:
    """The part of a findings grant that reads one space."""
    return grant.narrowed(reads=[space], writes=(), record=False)
