/**
 * The bureau HTTP + SSE contract as the web app uses it. Every shape and enum comes from `schema.ts`, which is
 * generated from the server's OpenAPI document (`make client`; a test fails when it is stale). This file only
 * gives the generated types the names the screens use, and adds small helpers.
 */
import type { components } from "./schema";
import { eventTypeValues, hitStatusValues, missReasonValues, roleValues } from "./schema";
import { DERIVED_MEMORY_TYPES } from "./rules";

type Schemas = components["schemas"];

export type Role = Schemas["Role"];
export const ROLES: readonly Role[] = roleValues;

export type Space = Schemas["Space"];
export const BOARD = "bulletin_board" satisfies Space;

export type CaseLanguage = Schemas["Language"];
export type Audience = Schemas["Audience"];
export type ResponderMode = Schemas["Trace"]["responder"];
export type Certainty = Schemas["Certainty"];
export type MemoryType = Schemas["MemoryType"];
export type EventType = Schemas["EventType"];

export type CardSource = Schemas["CardSource"];
export type Card = Schemas["Card"];
export type ScenarioSummary = Schemas["ScenarioSummary"];
/** Topic → its label per language, from the scenario data (every language file of the scenario). */
export type TopicLabels = Schemas["ScenarioDetail"]["topic_labels"];
export type KeyFact = Schemas["KeyFact"];
export type ScenarioDetail = Schemas["ScenarioDetail"];
export type CaseInfo = Schemas["CaseInfo"];

export type HitStatus = Schemas["HitStatus"];
export type MissReason = Schemas["MissReason"];
export const HIT_STATUSES: readonly HitStatus[] = hitStatusValues;
export const MISS_REASONS: readonly MissReason[] = missReasonValues;
/** The relevance signals measured for one candidate (docs/retrieval.md); `cosine` among them. */
export type Signals = Schemas["TraceHit"]["signals"];

export type MemoryPolicy = Schemas["MemoryPolicyView"];
export type PolicyDecision = Schemas["PolicyDecisionView"];
export type PolicyDecisionPage = Schemas["PolicyDecisionPage"];

export type TraceHit = Schemas["TraceHit"];
export type TraceMiss = Schemas["TraceMiss"];
export type Trace = Schemas["Trace"];
/** The compartments whose keys a request held to read ("keys in this request"), and its purpose. */
export type TraceGrant = Schemas["TraceGrant"];
/** A row of another compartment the presenter act's statement handed back: its space and score, nothing else. */
export type LockedRow = Schemas["LockedRow"];
export type Conflict = Schemas["Conflict"];
export type InterrogationResult = Schemas["Interrogation"];
export type StoredAnswer = Schemas["StoredAnswer"];
/** How a role knows a key fact, as the server keeps it; facts no answer spoke to are absent. */
export type KnownCell = NonNullable<Schemas["Knowledge"]["detective"]>[string];
export type OperatorSnapshot = Schemas["OperatorSnapshot"];
export type PublicationResult = Schemas["PublicationResult"];
export type Health = Schemas["Health"];
export type SessionInfo = Schemas["SessionInfo"];
export type ErrorBody = Schemas["ErrorBody"];

/** Who may encounter an item: "public", "sealed" (nobody), or roles joined by "+" (docs/erasure.md). */
export type Readership = Schemas["RoleResult"]["audience"];
export type ProvenanceItem = Schemas["Provenance"];
export type CrossExaminationResult = Schemas["CrossExaminationResult"];
export type CaseRecordView = Schemas["CaseRecordView"];
/** One page of the case record, newest first, with the cursor of the next (older) page. */
export type CaseRecordPage = Schemas["CaseRecordPage"];
export type InterrogationEntry = Schemas["InterrogationEntry"];
export type CrossExaminationEntry = Schemas["CrossExaminationEntry"];
/** One interrogation or cross-examination of the case record (operator only), discriminated by `kind`. */
export type RecordEntry = CaseRecordView["entries"][number];
export type SubjectAccess = Schemas["SubjectAccess"];

export type ClaimEvaluation = Schemas["ClaimEvaluation"];
export type FindingEvaluation = Schemas["FindingEvaluation"];
export type FindingContributor = Schemas["FindingContributor"];
export type Finding = Schemas["Finding"];
export type FindingPromotion = Schemas["FindingPromotion"];
export type FindingList = Schemas["FindingList"];
export type ContributionStatus = Schemas["ContributionStatus"];

export type StageBoardCard = Schemas["PublicCard"];
export type StageRetrieval = Schemas["StageRetrieval"];
export type StageSnapshot = Schemas["StageSnapshot"];
/** The newest cross-examination as the public sees it: a sealed one is only announced. */
export type StageConclusion = Schemas["StageCrossExamination"];
export type StageRecord = Schemas["StageRecord"];
export type StageRecordEntry = StageRecord["entries"][number];

/** Frames of the two live streams after parsing, one variant per event type (discriminated by `event`). */
export type OperatorFrame = Schemas["OperatorFrame"];
export type StageFrame = Schemas["StageFrame"];

/** One SSE frame after parsing: the id is the resume cursor, data is metadata only (never card content). */
export interface LiveEvent {
  id: number | null;
  type: string;
  data: Record<string, unknown>;
}

/** Every event type the server records: EventSource drops a named event nobody listens for. */
export const LIVE_EVENT_TYPES: readonly EventType[] = eventTypeValues;

export { DERIVED_MEMORY_TYPES };

/** Records the system derives from conversations ("I was asked X"): context, never evidence, never publishable. */
export function isDerivedCard(card: Pick<Card, "memory_type">): boolean {
  return (DERIVED_MEMORY_TYPES as readonly string[]).includes(card.memory_type);
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}
