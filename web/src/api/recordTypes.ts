import type { Certainty, ProvenanceItem, Readership, Role, Trace } from "./types";

/* The case record as `GET /api/cases/{id}/record` sends it (operator only). Hand-written until the client
 * generated from the OpenAPI document covers the record route; then these become aliases of its types. */

interface RecordEntryBase {
  /** Ascending in the order the record was written. */
  id: number;
  roles: Role[];
  audience: Readership;
  sealed: boolean;
  /** null once the text is gone: an ingredient was erased, or the case key is. */
  question: string | null;
  provenance: ProvenanceItem[];
  /** Card ids used by this entry that were erased since. */
  erased_ingredients: string[];
  created_at: string;
}

export interface InterrogationEntry extends RecordEntryBase {
  kind: "interrogation";
  answer: string | null;
  certainty: Certainty;
  trace: Trace;
}

export interface CrossExaminationEntry extends RecordEntryBase {
  kind: "cross_examination";
  results: { role: Role; certainty: Certainty; audience: Readership; trace: Trace; answer: string | null }[];
  conclusion: { certainty: Certainty; audience: Readership; sealed: boolean; text: string | null };
}

export type RecordEntry = InterrogationEntry | CrossExaminationEntry;

export interface CaseRecordView {
  case_id: string;
  entries: RecordEntry[];
}
