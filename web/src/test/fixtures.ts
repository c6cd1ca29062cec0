import type { CrossExaminationEntry, InterrogationEntry } from "../api/types";
import type { Card, OperatorSnapshot, Space, Trace, TraceHit, TraceMiss } from "../api/types";

export function card(overrides: Partial<Card> & Pick<Card, "id" | "space">): Card {
  return {
    content: `content of ${overrides.id}`,
    topic: "safe_combination",
    kind: "fact",
    visibility: overrides.space === "bulletin_board" ? "public" : "private",
    memory_type: "long_term_knowledge",
    key: null,
    trust: "high",
    created_by: "scenario",
    created_at: "2026-11-29T12:00:00Z",
    source: null,
    ...overrides,
  };
}

export function hit(card_id: string, space: Space, score: number, topic = "safe_combination"): TraceHit {
  return { card_id, space, score, cosine: score, signals: { cosine: score }, topic, memory_type: "long_term_knowledge", status: "hit" };
}

export function miss(card_id: string, space: Space, score: number, reason: TraceMiss["reason"] = "below_threshold", topic = "weather"): TraceMiss {
  return { card_id, space, score, cosine: score, signals: { cosine: score }, topic, memory_type: "long_term_knowledge", reason };
}

export function trace(overrides: Partial<Trace> = {}): Trace {
  return {
    role: "detective",
    searched_scopes: ["detective", "bulletin_board"],
    hits: [],
    misses: [],
    threshold: 0.35,
    borderline_floor: 0.25,
    duration_ms: 42,
    relevance_policy: "logistic-local",
    question_language: "en",
    certainty: "unknown",
    evidence: [],
    conflicts: [],
    responder: "evidence",
    fallback_reason: null,
    ...overrides,
  };
}

export function snapshot(overrides: Partial<OperatorSnapshot> = {}): OperatorSnapshot {
  return {
    case: { id: "case-1", scenario_id: "safe-combination", language: "en", version: 1, status: "active", created_at: "2026-11-29T12:00:00Z" },
    mode: { mode: "evidence", reason: "no_model" },
    scenario: {
      id: "safe-combination",
      title: "The safe combination",
      description: "Only the informant knows.",
      preset_questions: ["What is the safe combination?"],
      claims: [],
      key_facts: [
        { id: "combination", label: "Safe combination", topic: "safe_combination", question: "What is the safe combination?", labels: { en: "Safe combination" } },
        { id: "alibi", label: "Alibi", topic: "alibi", question: "What is your alibi?", labels: { en: "Alibi" } },
      ],
      topic_labels: {},
    },
    spaces: {
      detective: [card({ id: "d1", space: "detective", topic: "case_notes" })],
      informant: [card({ id: "i1", space: "informant", topic: "safe_combination", content: "The combination is 0427" })],
      suspect: [card({ id: "s1", space: "suspect", topic: "alibi" })],
      bulletin_board: [],
    },
    last_trace: null,
    answers: {},
    knowledge: {},
    ...overrides,
  };
}

/** A case-record entry of one interrogation (`id` 1..9: its time is that many seconds past noon). */
export function interrogation(id: number, role: InterrogationEntry["roles"][number] = "informant", certainty: InterrogationEntry["certainty"] = "known"): InterrogationEntry {
  return {
    id,
    kind: "interrogation",
    roles: [role],
    audience: role,
    sealed: false,
    question: `question ${id}`,
    provenance: [],
    erased_ingredients: [],
    created_at: `2026-12-01T12:00:0${id}Z`,
    answer: `answer ${id}`,
    certainty,
    trace: trace({ role, searched_scopes: [role, "bulletin_board"], hits: [hit(`card-${id}`, role, 0.9)] }),
  };
}

/** A cross-examination of the informant and the suspect whose conclusion mixes both: sealed. */
export function sealedCrossExamination(id: number): CrossExaminationEntry {
  return {
    id,
    kind: "cross_examination",
    roles: ["informant", "suspect"],
    audience: "sealed",
    sealed: true,
    question: "Who opened the safe?",
    provenance: [
      { card_id: "i1", space: "informant" },
      { card_id: "s1", space: "suspect" },
    ],
    erased_ingredients: [],
    created_at: "2026-12-01T12:00:09Z",
    results: [
      { role: "informant", certainty: "known", audience: "informant", answer: "a", trace: trace({ role: "informant", searched_scopes: ["informant", "bulletin_board"] }) },
      { role: "suspect", certainty: "known", audience: "suspect", answer: "b", trace: trace({ role: "suspect", searched_scopes: ["suspect", "bulletin_board"] }) },
    ],
    conclusion: { certainty: "known", audience: "sealed", sealed: true, text: "joint" },
  };
}
