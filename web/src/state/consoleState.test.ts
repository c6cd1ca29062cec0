import { describe, expect, it } from "vitest";
import type { InterrogationResult, LiveEvent } from "../api/types";
import { card, hit, miss, snapshot, trace } from "../test/fixtures";
import { answerFromTrace, boardCopiesBySource, citedCardIds, consoleReducer, initialConsoleState, type ConsoleState } from "./consoleState";

const event = (type: string, data: Record<string, unknown> = {}, id: number | null = 1): LiveEvent => ({ id, type, data });

function answered(evidence: string[]): InterrogationResult {
  return {
    answer: evidence.length ? "0427" : "I don't know.",
    certainty: evidence.length ? "known" : "unknown",
    evidence,
    responder: "evidence",
    fallback_reason: null,
    trace: trace({ role: "informant", searched_scopes: ["informant", "bulletin_board"], hits: evidence.map((id) => hit(id, "informant", 0.8)) }),
  };
}

describe("consoleReducer", () => {
  it("loads a snapshot and seeds the X-ray and the role's answer from last_trace", () => {
    const lastTrace = trace({ hits: [hit("b1", "bulletin_board", 0.7)], misses: [miss("d1", "detective", 0.1)] });
    const state = consoleReducer(initialConsoleState, { type: "snapshot-loaded", snapshot: snapshot({ last_trace: lastTrace }) });
    expect(state.trace).toBe(lastTrace);
    expect(state.answerLog.detective?.at(-1)).toMatchObject({ certainty: "known", evidence: ["b1"] });
    expect(state.tracedCards).toEqual({
      b1: { space: "bulletin_board", topic: "safe_combination" },
      d1: { space: "detective", topic: "weather" },
    });
  });

  it("keeps the shown trace when a later snapshot has none, and never adds a seed to a role that already has answers", () => {
    const withAnswer = consoleReducer(initialConsoleState, { type: "answer-received", role: "detective", question: "What is the safe combination?", result: { ...answered([]), trace: trace() } });
    const state = consoleReducer(withAnswer, { type: "snapshot-loaded", snapshot: snapshot({ last_trace: trace({ hits: [hit("x", "detective", 0.9)] }) }) });
    expect(state.answerLog.detective?.at(-1)).toMatchObject({ certainty: "unknown", evidence: [] });
    const noTrace = consoleReducer(withAnswer, { type: "snapshot-loaded", snapshot: snapshot() });
    expect(noTrace.trace).toBe(withAnswer.trace);
  });

  it("ignores a snapshot older than the one shown (a fetch that started before a reset or an answer)", () => {
    const atVersion = (version: number) => snapshot({ case: { ...snapshot().case, version } });
    const newer = consoleReducer(initialConsoleState, { type: "snapshot-loaded", snapshot: atVersion(5) });
    expect(consoleReducer(newer, { type: "snapshot-loaded", snapshot: atVersion(4) })).toBe(newer);
    expect(consoleReducer(newer, { type: "snapshot-loaded", snapshot: atVersion(6) }).snapshot?.case.version).toBe(6);
  });

  it("records an interrogation: answer, trace and the role's evidence", () => {
    const result = answered(["i1"]);
    const state = consoleReducer(initialConsoleState, { type: "answer-received", role: "informant", question: "What is the safe combination?", result });
    expect(state.answer).toEqual({ ...result, role: "informant", seq: 1 });
    expect(state.trace).toBe(result.trace);
    expect(state.answerLog.informant?.at(-1)).toMatchObject({ certainty: "known", evidence: ["i1"] });
    expect(citedCardIds(state.answer)).toEqual(new Set(["i1"]));
  });

  it("applies answer.completed from another console to the role's answer", () => {
    const state = consoleReducer(initialConsoleState, {
      type: "live-event",
      event: event("answer.completed", { case_id: "case-1", role: "suspect", certainty: "unknown", evidence: [], responder: "evidence" }, 9),
    });
    expect(state.answerLog.suspect?.at(-1)).toMatchObject({ certainty: "unknown", evidence: [] });
    expect(state.lastEvent).toEqual({ id: 9, type: "answer.completed" });
    expect(state.activity).toBe(1);
  });

  it("ignores malformed answer.completed payloads but still counts the event", () => {
    const state = consoleReducer(initialConsoleState, { type: "live-event", event: event("answer.completed", { role: "bulletin_board", certainty: "known" }) });
    expect(state.answerLog).toEqual({});
    expect(state.activity).toBe(1);
  });

  it("filters non-string evidence ids", () => {
    const state = consoleReducer(initialConsoleState, {
      type: "live-event",
      event: event("answer.completed", { role: "detective", certainty: "known", evidence: ["b1", 3, null] }),
    });
    expect(state.answerLog.detective?.at(-1)?.evidence).toEqual(["b1"]);
  });

  it("clears answers and the X-ray on case.reset, from the stream or from the reset response", () => {
    const asked: ConsoleState = consoleReducer(initialConsoleState, { type: "answer-received", role: "informant", question: "What is the safe combination?", result: answered(["i1"]) });
    const viaEvent = consoleReducer(asked, { type: "live-event", event: event("case.reset") });
    expect(viaEvent.answer).toBeNull();
    expect(viaEvent.trace).toBeNull();
    expect(viaEvent.answerLog).toEqual({});
    const viaResponse = consoleReducer(asked, { type: "case-reset", snapshot: snapshot() });
    expect(viaResponse.answer).toBeNull();
    expect(viaResponse.trace).toBeNull();
    expect(viaResponse.snapshot?.case.id).toBe("case-1");
  });

  it("marks the case erased on case.erased", () => {
    expect(consoleReducer(initialConsoleState, { type: "live-event", event: event("case.erased") }).erased).toBe(true);
  });

  it("treats every other event as activity only", () => {
    const state = consoleReducer(initialConsoleState, { type: "live-event", event: event("memory.written", { card: { id: "x" } }) });
    expect({ ...state, activity: 0, lastEvent: null }).toEqual(initialConsoleState);
  });
});

describe("answerFromTrace", () => {
  it("counts confirmed borderline hits as evidence and misses never", () => {
    const t = trace({ hits: [{ ...hit("a", "detective", 0.3), status: "borderline_confirmed" }], misses: [miss("c", "detective", 0.9, "derived_context")] });
    expect(answerFromTrace(t)).toEqual({ certainty: "known", evidence: ["a"] });
    expect(answerFromTrace(trace({ misses: [miss("c", "detective", 0.9, "derived_context")] }))).toEqual({ certainty: "unknown", evidence: [] });
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
