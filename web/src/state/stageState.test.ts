import { describe, expect, it } from "vitest";
import type { StageRetrieval, StageSnapshot } from "../api/types";
import { describeRetrieval, initialStageState, lockedBySpace, stageReducer } from "./stageState";

const retrieval = (overrides: Partial<StageRetrieval> = {}): StageRetrieval => ({
  role: "detective",
  searched_scopes: ["detective", "bulletin_board"],
  public_hits: [],
  private_hit_count: 0,
  verdict: "unknown",
  conflicting: false,
  duration_ms: 30,
  ...overrides,
});

describe("describeRetrieval", () => {
  it("reads 'searched its own memory + the board → nothing found'", () => {
    expect(describeRetrieval(retrieval())).toEqual({ role: "detective", searchedOwnMemory: true, searchedBoard: true, outcome: "nothing" });
  });

  it("distinguishes own memory, board and both", () => {
    expect(describeRetrieval(retrieval({ private_hit_count: 1, verdict: "known" })).outcome).toBe("own_memory");
    expect(describeRetrieval(retrieval({ public_hits: [{ card_id: "b1", score: 0.7 }], verdict: "known" })).outcome).toBe("board");
    expect(describeRetrieval(retrieval({ public_hits: [{ card_id: "b1", score: 0.7 }], private_hit_count: 2 })).outcome).toBe("own_memory_and_board");
  });
});

describe("stageReducer", () => {
  const snapshot: StageSnapshot = {
    case: { id: "c1", version: 3, status: "active", language: "zh" },
    counts: { detective: 1, informant: 2, suspect: 1 },
    bulletin_board: [],
    last_retrieval: null,
    last_conclusion: null,
  };

  it("stores snapshots and counts events for the animations", () => {
    let state = stageReducer(initialStageState, { type: "snapshot-loaded", snapshot });
    state = stageReducer(state, { type: "live-event", event: { id: 4, type: "memory.written", data: { space: "informant" } } });
    expect(state).toEqual({ snapshot, erased: false, activity: 1, findingWithdrawn: false });
  });

  it("says a finding was withdrawn until another is promoted or the case is reset", () => {
    const event = (id: number, type: string) => ({ type: "live-event" as const, event: { id, type, data: {} } });
    let state = stageReducer(initialStageState, event(6, "finding.withdrawn"));
    expect(state.findingWithdrawn).toBe(true);
    state = stageReducer(state, event(7, "retrieval.completed"));
    expect(state.findingWithdrawn).toBe(true);
    expect(stageReducer(state, event(8, "finding.promoted")).findingWithdrawn).toBe(false);
    expect(stageReducer(state, event(8, "case.reset")).findingWithdrawn).toBe(false);
  });

  it("ends the show on case.erased", () => {
    expect(stageReducer(initialStageState, { type: "live-event", event: { id: 5, type: "case.erased", data: {} } }).erased).toBe(true);
  });
});

describe("conflicting intel on the stage", () => {
  it("says 'found conflicting intel on the board' only when the server marks board cards as disagreeing", () => {
    const hits = [
      { card_id: "b1", score: 0.7 },
      { card_id: "b2", score: 0.6 },
    ];
    expect(describeRetrieval(retrieval({ public_hits: hits, conflicting: true, verdict: "known" })).outcome).toBe("conflicting");
    expect(describeRetrieval(retrieval({ public_hits: hits, conflicting: false, verdict: "known" })).outcome).toBe("board");
  });
});

describe("an uncertain retrieval on the stage", () => {
  it("says it found something close, not certain, when nothing counted as a hit", () => {
    expect(describeRetrieval(retrieval({ verdict: "uncertain" })).outcome).toBe("uncertain");
  });
});

describe("lockedBySpace", () => {
  it("groups the presenter act's locked rows by space, roles first, scores highest first", () => {
    const act = retrieval({
      unfiltered: true,
      locked: [
        { space: "suspect", score: 0.01 },
        { space: "informant", score: 0.02 },
        { space: "suspect", score: 0.05 },
      ],
    });
    expect(lockedBySpace(act)).toEqual([
      { space: "informant", scores: [0.02] },
      { space: "suspect", scores: [0.05, 0.01] },
    ]);
  });

  it("is empty for an ordinary retrieval", () => {
    expect(lockedBySpace(retrieval())).toEqual([]);
    expect(lockedBySpace(retrieval({ unfiltered: true, locked: [] }))).toEqual([]);
  });
});
