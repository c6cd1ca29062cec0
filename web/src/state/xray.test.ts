import { describe, expect, it } from "vitest";
import { hit, miss, trace } from "../test/fixtures";
import { assignRows, buildXray, clampScore, deriveVerdict, markHasLabel, markNeedsReasonLabel } from "./xray";

describe("buildXray lanes", () => {
  it("makes one lane per searched scope, in search order, even when a lane is empty", () => {
    const xray = buildXray(trace({ misses: [miss("b1", "bulletin_board", 0.1)] }));
    expect(xray.lanes.map((lane) => lane.space)).toEqual(["detective", "bulletin_board"]);
    expect(xray.lanes[0]?.marks).toEqual([]);
    expect(xray.lanes[0]?.rowCount).toBe(1);
    expect(xray.lanes[1]?.marks.map((mark) => mark.cardId)).toEqual(["b1"]);
  });

  it("puts each candidate in its own space's lane with its score as position", () => {
    const xray = buildXray(
      trace({
        role: "informant",
        searched_scopes: ["informant", "bulletin_board"],
        hits: [hit("i1", "informant", 0.82)],
        misses: [miss("i2", "informant", 0.12), miss("b1", "bulletin_board", 0.3, "borderline_rejected")],
      }),
    );
    const [own, board] = xray.lanes;
    expect(own?.marks.map((mark) => [mark.cardId, mark.position, mark.kind, mark.isEvidence])).toEqual([
      ["i1", 0.82, "hit", true],
      ["i2", 0.12, "below_threshold", false],
    ]);
    expect(own?.hitCount).toBe(1);
    expect(board?.marks[0]).toMatchObject({ cardId: "b1", kind: "borderline_rejected", isEvidence: false });
    expect(board?.hitCount).toBe(0);
  });

  it("gives a candidate from an unsearched space its own lane instead of hiding it", () => {
    const xray = buildXray(trace({ misses: [miss("s1", "suspect", 0.2)] }));
    expect(xray.lanes.map((lane) => lane.space)).toEqual(["detective", "bulletin_board", "suspect"]);
  });

  it("carries threshold, floor, latency and responder through", () => {
    const xray = buildXray(trace({ threshold: 0.4, borderline_floor: 0.3, duration_ms: 17, responder: "role_voice", fallback_reason: "llm_timeout" }));
    expect(xray).toMatchObject({ threshold: 0.4, borderlineFloor: 0.3, durationMs: 17, responder: "role_voice", fallbackReason: "llm_timeout" });
  });
});

describe("mark positions", () => {
  it("clamps negative and >1 scores to the axis and flags them", () => {
    expect(clampScore(-0.2)).toEqual({ position: 0, clamped: true });
    expect(clampScore(1.3)).toEqual({ position: 1, clamped: true });
    expect(clampScore(0.5)).toEqual({ position: 0.5, clamped: false });
    expect(clampScore(Number.NaN)).toEqual({ position: 0, clamped: true });
    const mark = buildXray(trace({ misses: [miss("d1", "detective", -0.15)] })).lanes[0]?.marks[0];
    expect(mark).toMatchObject({ position: 0, clamped: true, score: -0.15 });
  });

  it("stacks marks that would overlap into rows and keeps distant ones on the axis", () => {
    const bare = (position: number) => ({ position, span: 0.035 });
    expect(assignRows([0.1, 0.11, 0.12, 0.5].map(bare))).toEqual([0, 1, 2, 0]);
    expect(assignRows([0.5, 0.1, 0.2].map(bare))).toEqual([0, 0, 0]);
    expect(assignRows([0.1, 0.2, 0.21].map(bare))).toEqual([0, 0, 1]);
    expect(assignRows([])).toEqual([]);
  });

  it("keeps room for a mark's label before the next mark in its row", () => {
    expect(assignRows([{ position: 0, span: 0.15 }, { position: 0.08, span: 0.035 }, { position: 0.2, span: 0.035 }])).toEqual([0, 1, 0]);
  });

  it("reports the number of rows a lane needs", () => {
    const lane = buildXray(trace({ misses: [miss("a", "detective", 0.2), miss("b", "detective", 0.205), miss("c", "detective", 0.21)] })).lanes[0];
    expect(lane?.rowCount).toBe(3);
  });
});

describe("classification", () => {
  it("labels borderline, context and filtered marks with their reason but not plain hits and misses", () => {
    expect(markNeedsReasonLabel("hit")).toBe(false);
    expect(markNeedsReasonLabel("below_threshold")).toBe(false);
    expect(markNeedsReasonLabel("borderline_confirmed")).toBe(true);
    expect(markNeedsReasonLabel("borderline_rejected")).toBe(true);
    expect(markNeedsReasonLabel("derived_context")).toBe(true);
    expect(markNeedsReasonLabel("filtered_unsafe")).toBe(true);
  });

  it("labels hits (topic) and clamped scores, not plain misses", () => {
    expect(markHasLabel("hit", false)).toBe(true);
    expect(markHasLabel("below_threshold", false)).toBe(false);
    expect(markHasLabel("below_threshold", true)).toBe(true);
    expect(markHasLabel("derived_context", false)).toBe(true);
  });

  it("treats confirmed borderline hits as evidence", () => {
    const mark = buildXray(trace({ hits: [{ ...hit("d1", "detective", 0.3), status: "borderline_confirmed" }] })).lanes[0]?.marks[0];
    expect(mark).toMatchObject({ kind: "borderline_confirmed", isEvidence: true });
  });
});

describe("deriveVerdict", () => {
  it("says nothing was found above the threshold, naming the scopes and the best miss", () => {
    expect(deriveVerdict(trace({ misses: [miss("a", "detective", 0.21), miss("b", "bulletin_board", 0.05)] }))).toEqual({
      kind: "nothing_found",
      scopes: ["detective", "bulletin_board"],
      bestMissScore: 0.21,
      contextOnlyCount: 0,
    });
  });

  it("counts session records that matched but never quotes them as the best candidate", () => {
    const verdict = deriveVerdict(
      trace({ misses: [miss("ctx", "detective", 0.9, "derived_context"), miss("d1", "detective", 0.21)] }),
    );
    expect(verdict).toMatchObject({ kind: "nothing_found", bestMissScore: 0.21, contextOnlyCount: 1 });
  });

  it("has no best miss when nothing came back at all", () => {
    expect(deriveVerdict(trace())).toMatchObject({ kind: "nothing_found", bestMissScore: null });
  });

  it("names where the evidence was found: own memory, board or both", () => {
    expect(deriveVerdict(trace({ hits: [hit("d1", "detective", 0.8)] }))).toEqual({ kind: "found", sources: ["own_memory"] });
    expect(deriveVerdict(trace({ hits: [hit("b1", "bulletin_board", 0.8)] }))).toEqual({ kind: "found", sources: ["board"] });
    expect(deriveVerdict(trace({ hits: [hit("b1", "bulletin_board", 0.8), hit("d1", "detective", 0.6)] }))).toEqual({
      kind: "found",
      sources: ["own_memory", "board"],
    });
  });
});
