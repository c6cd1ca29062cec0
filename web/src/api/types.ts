/** Types for the bureau HTTP + SSE contract (see docs/DESIGN.md, "HTTP contract"). */

export const ROLES = ["detective", "informant", "suspect"] as const;
export type Role = (typeof ROLES)[number];

export const BOARD = "bulletin_board";
export type Space = Role | typeof BOARD;

export type CaseLanguage = "en" | "zh";
export type Audience = "operator" | "stage";
export type ResponderMode = "evidence" | "role_voice";
export type Certainty = "known" | "uncertain" | "unknown";

export interface CardSource {
  role: Role;
  card_id: string;
}

export interface Card {
  id: string;
  space: Space;
  content: string;
  topic: string;
  kind: string;
  visibility: "private" | "public";
  memory_type: string;
  /** The preference key of a `user_preference` card, else null. */
  key: string | null;
  trust: string | number;
  created_by: string;
  created_at: string;
  source: CardSource | null;
}

export interface ScenarioSummary {
  id: string;
  title: string;
  language: CaseLanguage;
  description: string;
}

/** Topic → its label per language, from the scenario data (both language files of the scenario). */
export type TopicLabels = Record<string, Partial<Record<CaseLanguage, string>>>;

export interface KeyFact {
  id: string;
  label: string;
  /** The label in every language the scenario ships in. */
  labels?: Partial<Record<CaseLanguage, string>>;
  topic: string;
  /** The preset question that tests this fact: only an answer to it can show a role does not know it. */
  question?: string | null;
}

export interface ScenarioDetail {
  id: string;
  title: string;
  description: string;
  preset_questions: string[];
  key_facts: KeyFact[];
  topic_labels?: TopicLabels;
}

export interface CaseInfo {
  id: string;
  scenario_id: string;
  language: CaseLanguage;
  version: number;
  status: string;
  created_at: string;
}

export type HitStatus = "hit" | "borderline_confirmed";
export type MissReason =
  | "below_threshold"
  | "uncertain"
  | "borderline_rejected"
  | "derived_context"
  | "duplicate"
  | "filtered_unsafe"
  // the read policy (docs/memory-policy.md)
  | "type_not_evidence"
  | "expired"
  | "failed_validation";

/** The relevance signals measured for one candidate (docs/retrieval.md); `cosine` among them. */
export type Signals = Record<string, number>;

/** What the operator may whisper (GET /api/memory-policy). */
export interface MemoryPolicy {
  writable_types: string[];
  default_type: string;
  preference_keys: string[];
}

/** One row of the policy audit trail (operator only): codes and counts, never content. */
export interface PolicyDecision {
  id: number;
  created_at: string;
  action: "write_accepted" | "write_rejected" | "read_filtered" | "retention_purged";
  code: string;
  detail: string;
  memory_type: string;
  creator: string;
  space: string;
  count: number;
}

export interface PolicyDecisionPage {
  decisions: PolicyDecision[];
  next_after: number | null;
}

export interface TraceHit {
  card_id: string;
  space: Space;
  score: number;
  topic: string;
  memory_type: string;
  status: HitStatus;
  signals?: Signals;
}

export interface TraceMiss {
  card_id: string;
  space: Space;
  score: number;
  topic: string;
  memory_type: string;
  reason: MissReason;
  signals?: Signals;
}

export interface Trace {
  role: Role;
  searched_scopes: Space[];
  hits: TraceHit[];
  misses: TraceMiss[];
  threshold: number;
  borderline_floor: number;
  duration_ms: number;
  conflicts?: Conflict[];
  certainty?: Certainty;
  responder: ResponderMode;
  fallback_reason: string | null;
}

/** A role's latest answer as kept with the case (the interrogation result plus when it was asked). */
export interface StoredAnswer extends InterrogationResult {
  asked_at: string;
}

/** How a role knows a key fact, as the server keeps it; facts no answer spoke to are absent. */
export type KnownCell = "own_memory" | "board" | "conflicting" | "uncertain" | "unknown";

export interface OperatorSnapshot {
  case: CaseInfo;
  scenario: ScenarioDetail;
  spaces: Record<Space, Card[]>;
  last_trace: Trace | null;
  answers?: Partial<Record<Role, StoredAnswer>>;
  knowledge?: Partial<Record<Role, Record<string, KnownCell>>>;
}

/** Two or more evidence cards on one topic that disagree (the mole's two tips). */
export interface Conflict {
  topic: string;
  card_ids: string[];
}

export interface InterrogationResult {
  answer: string;
  certainty: Certainty;
  evidence: string[];
  conflicts?: Conflict[];
  responder: ResponderMode;
  fallback_reason: string | null;
  trace: Trace;
}

export interface PublicationResult {
  public_card: Card;
  idempotent: boolean;
}

export interface Health {
  status: string;
  memory: { status: string; backend: string; embedder?: string };
  llm: { status: string };
  mode: ResponderMode;
}

export interface SessionInfo {
  audience: Audience | null;
  csrf_token: string | null;
  passcodes_enabled: boolean;
}

export interface StageBoardCard {
  id: string;
  content: string;
  topic: string;
  kind: string;
  source_role: Role | null;
  created_at: string;
}

export interface StageRetrieval {
  role: Role;
  searched_scopes: Space[];
  public_hits: { card_id: string; score: number }[];
  private_hit_count: number;
  verdict: Certainty;
  /** Board cards in the evidence disagree (never set for a conflict that involves a private card). */
  conflicting?: boolean;
  duration_ms: number;
}

export interface StageSnapshot {
  case: { id: string; version: number; status: string; language: CaseLanguage };
  counts: Record<Role, number>;
  bulletin_board: StageBoardCard[];
  last_retrieval: StageRetrieval | null;
  /** The newest cross-examination as the public sees it: a sealed one is only announced. */
  last_conclusion: StageConclusion | null;
}

/** Who may encounter an item: "public", "sealed" (nobody), or roles joined by "+" (docs/erasure.md). */
export type Readership = string;

export interface ProvenanceItem {
  card_id: string;
  space: Space;
}

export interface CrossExaminationResult {
  roles: Role[];
  results: { role: Role; answer: string; certainty: Certainty; audience: Readership; trace: Trace }[];
  conclusion: {
    text: string;
    certainty: Certainty | "uncertain";
    audience: Readership;
    sealed: boolean;
    provenance: ProvenanceItem[];
  };
}

export interface StageConclusion {
  id: number;
  kind: "cross_examination";
  created_at: string;
  sealed: boolean;
  roles?: Role[];
  retrievals?: (StageRetrieval | null)[];
}

/** One SSE frame after parsing: the id is the resume cursor, data is metadata only (never card content). */
export interface LiveEvent {
  id: number | null;
  type: string;
  data: Record<string, unknown>;
}

export const LIVE_EVENT_TYPES = [
  "case.created",
  "case.reset",
  "case.erased",
  "memory.written",
  "retrieval.completed",
  "answer.completed",
  "publication.started",
  "publication.completed",
  "cross_examination.completed",
  "card.erased",
] as const;

/** Records the system derives from conversations ("I was asked X"): context, never evidence, never publishable. */
export const DERIVED_MEMORY_TYPES: readonly string[] = ["session", "task_state"];

export function isDerivedCard(card: Pick<Card, "memory_type">): boolean {
  return DERIVED_MEMORY_TYPES.includes(card.memory_type);
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}
