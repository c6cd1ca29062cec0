import { describe, expect, it } from "vitest";
import type { InterrogationResult, LiveEvent, StoredAnswer } from "../api/types";
import { card, hit, snapshot, trace } from "../test/fixtures";
import { boardCopiesBySource, citedCardIds, consoleReducer, initialConsoleState } from "./consoleState";

const event = (type: string, data: Record<string, unknown> = {}, id: number | null = 1): LiveEvent => ({ id, type, data });

function answered(evidence: string[], duration_ms = 12): InterrogationResult {
  return {
    answer: evidence.length ? "0427" : "I don't know.",
    certainty: evidence.length ? "known" : "unknown",
    evidence,
    responder: "evidence",
    fallback_reason: null,
    conflicts: [],
    trace: trace({ role: "informant", searched_scopes: ["informant", "bulletin_board"], hits: evidence.map((id) => hit(id, "informant", 0.8)), duration_ms }),
  };
}

const stored = (result: InterrogationResult, asked_at = "2026-12-01T09:00:00Z"): StoredAnswer => ({ ...result, asked_at });

describe("consoleReducer", () => {
  it("shows each role's answer as kept with the case, so a reload sees what was asked", () => {
    const informant = stored(answered(["i1"]));
    const state = consoleReducer(initialConsoleState, { type: "snapshot-loaded", snapshot: snapshot({ answers: { informant } }) });
    expect(state.answers.informant).toMatchObject({ answer: "0427", role: "informant", key: informant.asked_at });
    expect(state.answers.detective).toBeUndefined();
  });

  it("records an answer per role and keeps its key when the snapshot brings the same answer back", () => {
    const result = answered(["i1"]);
    const asked = consoleReducer(initialConsoleState, { type: "answer-received", role: "informant", result });
    expect(asked.answers.informant).toEqual({ ...result, role: "informant", key: "local-1" });
    expect(citedCardIds(asked.answers.informant)).toEqual(new Set(["i1"]));
    const reloaded = consoleReducer(asked, { type: "snapshot-loaded", snapshot: snapshot({ answers: { informant: stored(result) } }) });
    expect(reloaded.answers.informant?.key).toBe("local-1"); // not announced twice
    const again = consoleReducer(reloaded, { type: "answer-received", role: "informant", result });
    expect(again.answers.informant?.key).toBe("local-2"); // the same answer twice is a new answer
  });

  it("ignores a snapshot older than the one shown (a fetch that started before a reset or an answer)", () => {
    const atVersion = (version: number) => snapshot({ case: { ...snapshot().case, version } });
    const newer = consoleReducer(initialConsoleState, { type: "snapshot-loaded", snapshot: atVersion(5) });
    expect(consoleReducer(newer, { type: "snapshot-loaded", snapshot: atVersion(4) })).toBe(newer);
    expect(consoleReducer(newer, { type: "snapshot-loaded", snapshot: atVersion(6) }).snapshot?.case.version).toBe(6);
  });

  it("takes another console's answer from the next snapshot", () => {
    const mine = consoleReducer(initialConsoleState, { type: "answer-received", role: "informant", result: answered(["i1"]) });
    const theirs = stored(answered([], 99), "2026-12-01T09:05:00Z");
    const state = consoleReducer(mine, { type: "snapshot-loaded", snapshot: snapshot({ answers: { informant: theirs } }) });
    expect(state.answers.informant).toMatchObject({ certainty: "unknown", key: theirs.asked_at });
  });

  it("clears the answers on case.reset, from the stream or from the reset response", () => {
    const asked = consoleReducer(initialConsoleState, { type: "answer-received", role: "informant", result: answered(["i1"]) });
    expect(consoleReducer(asked, { type: "live-event", event: event("case.reset") }).answers).toEqual({});
    const viaResponse = consoleReducer(asked, { type: "case-reset", snapshot: snapshot() });
    expect(viaResponse.answers).toEqual({});
    expect(viaResponse.snapshot?.case.id).toBe("case-1");
  });

  it("marks the case erased on case.erased and ignores every other event", () => {
    expect(consoleReducer(initialConsoleState, { type: "live-event", event: event("case.erased") }).erased).toBe(true);
    expect(consoleReducer(initialConsoleState, { type: "live-event", event: event("memory.written", { card: { id: "x" } }) })).toBe(initialConsoleState);
  });
});

describe("boardCopiesBySource", () => {
  it("maps each private source card to its board copy", () => {
    const snap = snapshot();
    snap.spaces.bulletin_board = [
      card({ id: "b1", space: "bulletin_board", source: { role: "informant", card_id: "i1" } }),
      card({ id: "b2", space: "bulletin_board" }),
    ];
    expect(boardCopiesBySource(snap)).toEqual(new Map([["i1", "b1"]]));
  });
});
