import { describe, expect, it } from "vitest";
import type { RecordEntry } from "../api/types";
import { interrogation, sealedCrossExamination } from "../test/fixtures";
import { entryTraces, initialRecordState, openRow, recordReducer, timelineRows, type RecordState } from "./caseRecord";

const loaded = (state: RecordState, version: number, entries: RecordEntry[]) => recordReducer(state, { type: "record-loaded", version, entries });

describe("case record state", () => {
  it("lists the newest entry first, numbered in the order asked", () => {
    const rows = timelineRows([interrogation(1, "detective", "unknown"), interrogation(2), sealedCrossExamination(3)]);
    expect(rows.map((row) => [row.entry.id, row.number])).toEqual([
      [3, 3],
      [2, 2],
      [1, 1],
    ]);
    expect(rows.map((row) => row.certainty)).toEqual(["known", "known", "unknown"]);
    expect(rows.map((row) => row.sealed)).toEqual([true, false, false]);
  });

  it("never lets a fetch for an older case version replace a newer record", () => {
    const newer = loaded(initialRecordState, 5, [interrogation(1), interrogation(2)]);
    const late = loaded(newer, 4, [interrogation(1)]);
    expect(late).toBe(newer);
    // The same version fetched again (a reconnect) is the server's word and replaces it.
    expect(loaded(newer, 5, [interrogation(1), interrogation(2), interrogation(3)]).entries).toHaveLength(3);
  });

  it("opens an entry that exists, keeps it open across refreshes, and closes it when a reset removes it", () => {
    let state = loaded(initialRecordState, 3, [interrogation(1), interrogation(2)]);
    expect(recordReducer(state, { type: "entry-opened", id: 99 }).openId).toBeNull();
    state = recordReducer(state, { type: "entry-opened", id: 1 });
    expect(openRow(state)?.number).toBe(1);
    state = loaded(state, 4, [interrogation(1), interrogation(2), interrogation(3)]);
    expect(openRow(state)?.entry.id).toBe(1);
    state = loaded(state, 5, []); // case.reset forgets the record
    expect(state.openId).toBeNull();
    expect(openRow(state)).toBeNull();
    expect(recordReducer(loaded(state, 6, [interrogation(1)]), { type: "entry-opened", id: 1 }).openId).toBe(1);
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
