import { describe, expect, it } from "vitest";
import type { CaseRecordPage, RecordEntry } from "../api/types";
import { interrogation, sealedCrossExamination } from "../test/fixtures";
import { entryTraces, initialRecordState, openRow, recordReducer, recordRows, timelineRows, type RecordState } from "./caseRecord";

/** Interrogations with these ids, newest first (as the server pages them). */
const entries = (...ids: number[]): RecordEntry[] => ids.map((id) => interrogation(id));
const page = (items: RecordEntry[], next: number | null, total: number): CaseRecordPage => ({ case_id: "case-1", entries: items, next, total });
const head = (state: RecordState, version: number, items: RecordEntry[], next: number | null, total: number) =>
  recordReducer(state, { type: "head-loaded", version, page: page(items, next, total) });
const ids = (state: RecordState) => state.entries.map((entry) => entry.id);

describe("case record state", () => {
  it("lists the newest entry first, numbered in the order asked from the record's total", () => {
    const rows = timelineRows([sealedCrossExamination(30), interrogation(20), interrogation(10, "detective", "unknown")], 12);
    expect(rows.map((row) => [row.entry.id, row.number])).toEqual([
      [30, 12],
      [20, 11],
      [10, 10],
    ]);
    expect(rows.map((row) => row.certainty)).toEqual(["known", "known", "unknown"]);
    expect(rows.map((row) => row.sealed)).toEqual([true, false, false]);
  });

  it("pages older entries onto the end until there are none, each entry once, and refuses a second request in flight", () => {
    let state = head(initialRecordState, 9, entries(9, 8, 7), 7, 9);
    expect([ids(state), state.next, state.total]).toEqual([[9, 8, 7], 7, 9]);
    state = recordReducer(state, { type: "older-requested" });
    expect(state.loadingOlder).toBe(true);
    expect(recordReducer(state, { type: "older-requested" })).toBe(state);
    state = recordReducer(state, { type: "older-loaded", after: 7, page: page(entries(6, 5, 4), 4, 9) });
    state = recordReducer(state, { type: "older-requested" });
    state = recordReducer(state, { type: "older-loaded", after: 4, page: page(entries(3, 2, 1), null, 9) });
    expect([ids(state), state.next, state.loadingOlder]).toEqual([[9, 8, 7, 6, 5, 4, 3, 2, 1], null, false]);
    expect(recordRows(state).map((row) => row.number)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(recordReducer(state, { type: "older-requested" })).toBe(state); // nothing older
  });

  it("puts new entries on top from a small newest page, keeps the older pages held, and takes the page's copies", () => {
    let state = head(initialRecordState, 9, entries(9, 8, 7), 7, 9);
    state = recordReducer(state, { type: "older-loaded", after: 7, page: page(entries(6, 5, 4), 4, 9) });
    const redacted = { ...interrogation(9), question: null, answer: null, erased_ingredients: ["card-9"] };
    state = head(state, 11, [interrogation(12), interrogation(11), redacted], 9, 11);
    expect([ids(state), state.next, state.total, state.version]).toEqual([[12, 11, 9, 8, 7, 6, 5, 4], 4, 11, 11]);
    expect(state.entries[2]?.question).toBeNull();
    expect(recordRows(state).map((row) => row.number)).toEqual([11, 10, 9, 8, 7, 6, 5, 4]);
  });

  it("starts again from the newest page when it does not reach what is held (a reset, or more new than a page)", () => {
    const held = head(initialRecordState, 9, entries(9, 8, 7), 7, 9);
    const reset = head(held, 10, [], null, 0);
    expect([ids(reset), reset.next, reset.total]).toEqual([[], null, 0]);
    const askedAfterReset = head(held, 11, entries(40), null, 1);
    expect(ids(askedAfterReset)).toEqual([40]);
    const gap = head(held, 80, entries(90, 89, 88), 88, 80);
    expect([ids(gap), gap.next]).toEqual([[90, 89, 88], 88]);
  });

  it("never lets a fetch for an older case version replace a newer record, nor a stale older page join it", () => {
    const newer = head(initialRecordState, 5, entries(2, 1), null, 2);
    expect(head(newer, 4, entries(1), null, 1)).toBe(newer);
    const paging = recordReducer(head(initialRecordState, 9, entries(9, 8), 8, 9), { type: "older-requested" });
    const reloaded = recordReducer(paging, { type: "record-reloaded", version: 10, page: page(entries(9), null, 1) });
    const late = recordReducer(reloaded, { type: "older-loaded", after: 8, page: page(entries(7, 6), 6, 9) });
    expect([ids(late), late.next, late.loadingOlder]).toEqual([[9], null, false]);
  });

  it("opens an entry that exists, keeps it open across refreshes, and closes it when a reset removes it", () => {
    let state = head(initialRecordState, 3, entries(2, 1), null, 2);
    expect(recordReducer(state, { type: "entry-opened", id: 99 }).openId).toBeNull();
    state = recordReducer(state, { type: "entry-opened", id: 1 });
    expect(openRow(state)?.number).toBe(1);
    state = head(state, 4, entries(3, 2, 1), null, 3);
    expect(openRow(state)?.entry.id).toBe(1);
    state = head(state, 5, [], null, 0); // case.reset forgets the record
    expect(state.openId).toBeNull();
    expect(openRow(state)).toBeNull();
    expect(recordReducer(head(state, 6, entries(1), null, 1), { type: "entry-opened", id: 1 }).openId).toBe(1);
    expect(recordReducer({ ...state, openId: 1 }, { type: "entry-closed" }).openId).toBeNull();
  });

  it("gives one X-ray per retrieval: one for an interrogation, one per role for a cross-examination", () => {
    expect(entryTraces(interrogation(1)).map((item) => [item.role, item.trace.hits[0]?.card_id, item.answer])).toEqual([["informant", "card-1", "answer 1"]]);
    expect(entryTraces(sealedCrossExamination(2)).map((item) => [item.role, item.trace.role])).toEqual([
      ["informant", "informant"],
      ["suspect", "suspect"],
    ]);
  });
});
