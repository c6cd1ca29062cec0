import type { RecordEntry } from "../api/types";
import type { Certainty, Role, Trace } from "../api/types";

/** The operator console's copy of the case record: every interrogation and cross-examination, as the server
 * keeps it (so a reload or a second console sees the same timeline), and the entry whose X-ray is open. */
export interface RecordState {
  /** Oldest first, as the server sends them. */
  entries: RecordEntry[];
  /** The case version the entries were fetched for; -1 before the first fetch. */
  version: number;
  /** The entry shown again (its X-ray), if any. */
  openId: number | null;
}

export type RecordAction =
  | { type: "record-loaded"; version: number; entries: RecordEntry[] }
  | { type: "entry-opened"; id: number }
  | { type: "entry-closed" };

export const initialRecordState: RecordState = { entries: [], version: -1, openId: null };

export function recordReducer(state: RecordState, action: RecordAction): RecordState {
  switch (action.type) {
    case "record-loaded": {
      // Versions only grow: a fetch that was overtaken by a newer one must not bring back an older record.
      if (action.version < state.version) return state;
      // A reset or an erase removes entries; an open entry that is gone closes with it.
      const stillThere = action.entries.some((entry) => entry.id === state.openId);
      return { entries: action.entries, version: action.version, openId: stillThere ? state.openId : null };
    }
    case "entry-opened":
      return state.entries.some((entry) => entry.id === action.id) ? { ...state, openId: action.id } : state;
    case "entry-closed":
      return { ...state, openId: null };
  }
}

/** One line of the timeline. `number` counts from the first question of the case (1 = the oldest). */
export interface TimelineRow {
  entry: RecordEntry;
  number: number;
  certainty: Certainty;
  sealed: boolean;
}

/** Newest first, as a bureau chief scans a log: the last question on top, each numbered in the order asked. */
export function timelineRows(entries: readonly RecordEntry[]): TimelineRow[] {
  return entries
    .map((entry, index) => ({
      entry,
      number: index + 1,
      certainty: entry.kind === "interrogation" ? entry.certainty : entry.conclusion.certainty,
      sealed: entry.sealed,
    }))
    .reverse();
}

export function openRow(state: RecordState): TimelineRow | null {
  return timelineRows(state.entries).find((row) => row.entry.id === state.openId) ?? null;
}

/** The retrieval(s) an entry's X-ray shows: one for an interrogation, one per role for a cross-examination. */
export function entryTraces(entry: RecordEntry): { role: Role; trace: Trace; answer: string | null }[] {
  if (entry.kind === "interrogation") return [{ role: entry.trace.role, trace: entry.trace, answer: entry.answer }];
  return entry.results.map((result) => ({ role: result.role, trace: result.trace, answer: result.answer }));
}
