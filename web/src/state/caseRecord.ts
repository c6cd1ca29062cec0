import type { CaseRecordPage, RecordEntry } from "../api/types";
import type { Certainty, Role, Trace } from "../api/types";

/** The operator console's copy of the case record, as the server keeps it (so a reload or a second console sees
 * the same timeline), read a page at a time: the newest entries first, older pages as the operator scrolls, and
 * only the newest page again when the game moves on. Plus the entry whose X-ray is open. */
export interface RecordState {
  /** Newest first, as the server pages them: always the newest entries, without a gap. */
  entries: RecordEntry[];
  /** The cursor of the next older page; null once the oldest entry is here. */
  next: number | null;
  /** How many entries the whole record held at the last newest-page read (rows are numbered from it). */
  total: number;
  /** The case version the newest page was fetched for; -1 before the first fetch. */
  version: number;
  /** An older page is on its way. */
  loadingOlder: boolean;
  /** The entry shown again (its X-ray), if any. */
  openId: number | null;
}

export type RecordAction =
  | { type: "head-loaded"; version: number; page: CaseRecordPage }
  | { type: "record-reloaded"; version: number; page: CaseRecordPage }
  | { type: "older-requested" }
  | { type: "older-loaded"; after: number; page: CaseRecordPage }
  | { type: "older-failed" }
  | { type: "entry-opened"; id: number }
  | { type: "entry-closed" };

export const initialRecordState: RecordState = { entries: [], next: null, total: 0, version: -1, loadingOlder: false, openId: null };

function keepOpen(state: RecordState, entries: RecordEntry[]): number | null {
  return entries.some((entry) => entry.id === state.openId) ? state.openId : null;
}

/** The newest page, fetched again after the game moved on: new entries go on top, and the page's copies replace
 * the ones held (an erased card may have taken their text). When the page does not reach the newest entry held
 * (more new entries than a page, or a reset that removed them all) it is the record from now on. */
function mergeHead(state: RecordState, version: number, page: CaseRecordPage): RecordState {
  const oldestOnPage = page.entries.at(-1)?.id;
  const newestHeld = state.entries[0]?.id;
  const reaches = oldestOnPage !== undefined && newestHeld !== undefined && oldestOnPage <= newestHeld;
  if (page.next === null || !reaches) {
    return { ...state, entries: page.entries, next: page.next, total: page.total, version, openId: keepOpen(state, page.entries) };
  }
  const older = state.entries.filter((entry) => entry.id < oldestOnPage);
  // Held entries all on this page: the page's cursor is the way on.
  const next = older.length > 0 ? state.next : page.next;
  const entries = [...page.entries, ...older];
  return { ...state, entries, next, total: page.total, version, openId: keepOpen(state, entries) };
}

export function recordReducer(state: RecordState, action: RecordAction): RecordState {
  switch (action.type) {
    case "head-loaded":
      // Versions only grow: a fetch that was overtaken by a newer one must not bring back an older record.
      if (action.version < state.version) return state;
      return mergeHead(state, action.version, action.page);
    case "record-reloaded":
      // From the first page again (a card erasure can change entries of any page).
      if (action.version < state.version) return state;
      return { ...state, entries: action.page.entries, next: action.page.next, total: action.page.total, version: action.version, loadingOlder: false, openId: keepOpen(state, action.page.entries) };
    case "older-requested":
      return state.next === null || state.loadingOlder ? state : { ...state, loadingOlder: true };
    case "older-loaded": {
      // A page asked for before the record was read again (a reset, an erasure) belongs to another list.
      if (action.after !== state.next) return { ...state, loadingOlder: false };
      const oldestHeld = state.entries.at(-1)?.id ?? Number.POSITIVE_INFINITY;
      const older = action.page.entries.filter((entry) => entry.id < oldestHeld);
      return { ...state, entries: [...state.entries, ...older], next: action.page.next, loadingOlder: false };
    }
    case "older-failed":
      return { ...state, loadingOlder: false };
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

/** Newest first, as a bureau chief scans a log: the last question on top, each numbered in the order asked
 * (`total`: how many entries the whole record holds, so the newest is number `total`). */
export function timelineRows(entries: readonly RecordEntry[], total: number = entries.length): TimelineRow[] {
  return entries.map((entry, index) => ({
    entry,
    number: total - index,
    certainty: entry.kind === "interrogation" ? entry.certainty : entry.conclusion.certainty,
    sealed: entry.sealed,
  }));
}

export function recordRows(state: RecordState): TimelineRow[] {
  return timelineRows(state.entries, state.total);
}

export function openRow(state: RecordState): TimelineRow | null {
  return recordRows(state).find((row) => row.entry.id === state.openId) ?? null;
}

/** The retrieval(s) an entry's X-ray shows: one for an interrogation, one per role for a cross-examination. */
export function entryTraces(entry: RecordEntry): { role: Role; trace: Trace; answer: string | null }[] {
  if (entry.kind === "interrogation") return [{ role: entry.trace.role, trace: entry.trace, answer: entry.answer }];
  return entry.results.map((result) => ({ role: result.role, trace: result.trace, answer: result.answer }));
}
