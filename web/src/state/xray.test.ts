import { describe, expect, it } from "vitest";
import { hit, miss, trace } from "../test/fixtures";
import { assignRows, buildLockedLane, buildXray, clampScore, deriveVerdict, formatScore, legendEntries, markHasLabel, type SearchedLane, type XrayLane } from "./xray";

const searched = (lane: XrayLane | undefined): SearchedLane => {
  if (!lane?.searched) throw new Error(`lane ${lane?.space} is not searched`);
  return lane;
};

describe("buildXray lanes", () => {
  it("draws every space of the case: searched ones first, in search order, then the others greyed with a count", () => {
    const xray = buildXray(trace({ misses: [miss("b1", "bulletin_board", 0.1)] }), { informant: 2, suspect: 3 });
    expect(xray.lanes.map((lane) => [lane.space, lane.searched])).toEqual([
      ["detective", true],
      ["bulletin_board", true],
      ["informant", false],
      ["suspect", false],
    ]);
    expect(searched(xray.lanes[0]).marks).toEqual([]);
    expect(searched(xray.lanes[0]).rowCount).toBe(1);
    expect(searched(xray.lanes[1]).marks.map((mark) => mark.cardId)).toEqual(["b1"]);
    // Only a count: an unsearched lane has no marks, no scores, no content.
    expect(xray.lanes[2]).toEqual({ space: "informant", searched: false, cardCount: 2 });
    expect(xray.lanes[3]).toEqual({ space: "suspect", searched: false, cardCount: 3 });
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
    const [own, board] = [searched(xray.lanes[0]), searched(xray.lanes[1])];
    expect(own.marks.map((mark) => [mark.cardId, mark.position, mark.kind, mark.isEvidence])).toEqual([
      ["i1", 0.82, "hit", true],
      ["i2", 0.12, "below_threshold", false],
    ]);
    expect(own.hitCount).toBe(1);
    expect(board.marks[0]).toMatchObject({ cardId: "b1", kind: "borderline_rejected", isEvidence: false });
    expect(xray.lanes.map((lane) => lane.space)).toEqual(["informant", "bulletin_board", "detective", "suspect"]);
  });

  it("folds every session record into one context group instead of marks on the score axis", () => {
    const misses = [0.66, 0.72, 0.8, 0.85, 0.88].map((score, i) => miss(`ctx${i}`, "detective", score, "derived_context"));
    const xray = buildXray(trace({ misses: [...misses, miss("d1", "detective", 0.1)] }));
    expect(xray.context).toEqual({ count: 5, bestScore: 0.88 });
    expect(searched(xray.lanes[0]).marks.map((mark) => mark.cardId)).toEqual(["d1"]);
    expect(buildXray(trace()).context).toBeNull();
  });

  it("draws any other exclusion reason as an excluded mark that keeps its reason", () => {
    const xray = buildXray(trace({ misses: [miss("e1", "detective", 0.7, "expired" as never), miss("e2", "detective", 0.5, "duplicate")] }));
    expect(searched(xray.lanes[0]).marks.map((mark) => [mark.kind, mark.reason])).toEqual([
      ["excluded", "expired"],
      ["duplicate", "duplicate"],
    ]);
  });

  it("carries threshold, floor, latency and responder through", () => {
    const xray = buildXray(trace({ threshold: 0.4, borderline_floor: 0.3, duration_ms: 17, responder: "role_voice", fallback_reason: "provider_timeout" }));
    expect(xray).toMatchObject({ threshold: 0.4, borderlineFloor: 0.3, durationMs: 17, responder: "role_voice", fallbackReason: "provider_timeout" });
  });
});

describe("scores near the cut", () => {
  it("shows three decimals near a cut point, so a miss never rounds up to the threshold", () => {
    expect(formatScore(0.395, [0.4])).toBe("0.395");
    expect(formatScore(0.4, [0.395])).toBe("0.400");
    expect(formatScore(0.12, [0.4])).toBe("0.12");
    expect(formatScore(0.395)).toBe("0.40");
  });

  it("labels a miss just below the threshold (or inside the borderline band) as just below", () => {
    const xray = buildXray(trace({ threshold: 0.4, borderline_floor: 0.3, misses: [miss("near", "detective", 0.395), miss("band", "detective", 0.31), miss("far", "detective", 0.1)] }));
    const marks = searched(xray.lanes[0]).marks;
    expect(marks.map((mark) => [mark.cardId, mark.justBelow])).toEqual([
      ["near", true],
      ["band", true],
      ["far", false],
    ]);
    expect(marks.map(markHasLabel)).toEqual([true, true, false]);
  });
});

describe("uncertain candidates (#10's relevance model)", () => {
  it("draws an uncertain miss with its own glyph, labels it, and lists it in the legend", () => {
    const xray = buildXray(trace({ threshold: 0.6, borderline_floor: 0.45, misses: [{ ...miss("u1", "detective", 0.5, "uncertain"), signals: { cosine: 0.41, coverage: 0.8 } }] }));
    const mark = searched(xray.lanes[0]).marks[0];
    expect(mark).toMatchObject({ kind: "uncertain", justBelow: true, signals: { cosine: 0.41, coverage: 0.8 } });
    expect(legendEntries(xray)).toContain("uncertain");
    expect(deriveVerdict(trace({ misses: [miss("u1", "detective", 0.5, "uncertain")] }))).toMatchObject({ bestMissScore: 0.5 });
  });
});

describe("legend", () => {
  it("lists only the kinds present in the chart", () => {
    expect(legendEntries(buildXray(trace({ misses: [miss("d1", "detective", 0.1)] }), {}))).toEqual(["miss", "not_searched"]);
    const busy = buildXray(
      trace({
        hits: [hit("b1", "bulletin_board", 0.8)],
        misses: [miss("c", "detective", 0.9, "derived_context"), miss("x", "detective", 0.2, "filtered_unsafe")],
      }),
    );
    expect(legendEntries(busy)).toEqual(["hit_board", "filtered_unsafe", "context", "not_searched"]);
  });
});

describe("mark positions", () => {
  it("clamps negative and >1 scores to the axis and flags them", () => {
    expect(clampScore(-0.2)).toEqual({ position: 0, clamped: true });
    expect(clampScore(1.3)).toEqual({ position: 1, clamped: true });
    expect(clampScore(0.5)).toEqual({ position: 0.5, clamped: false });
    expect(clampScore(Number.NaN)).toEqual({ position: 0, clamped: true });
    const mark = searched(buildXray(trace({ misses: [miss("d1", "detective", -0.15)] })).lanes[0]).marks[0];
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
    const lane = searched(buildXray(trace({ misses: [miss("a", "detective", 0.2), miss("b", "detective", 0.205), miss("c", "detective", 0.21)] })).lanes[0]);
    expect(lane.rowCount).toBe(3);
  });

  it("treats confirmed borderline hits as evidence", () => {
    const mark = searched(buildXray(trace({ hits: [{ ...hit("d1", "detective", 0.3), status: "borderline_confirmed" }] })).lanes[0]).marks[0];
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
    const verdict = deriveVerdict(trace({ misses: [miss("ctx", "detective", 0.9, "derived_context"), miss("d1", "detective", 0.21)] }));
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

describe("the grant and the presenter act", () => {
  const act = trace({
    grant: { purpose: "interrogation", keys: ["detective", "bulletin_board"] },
    unfiltered: true,
    locked: [
      { space: "informant", score: 0.0662 },
      { space: "informant", score: 0.0661 },
      { space: "suspect", score: 0.0549 },
      { space: "informant", score: 0.0146 },
      { space: "suspect", score: -0.0594 },
    ],
    misses: [miss("d1", "detective", 0.04)],
  });

  it("carries the keys of the request; a record from before grants has none", () => {
    expect(buildXray(act).keys).toEqual(["detective", "bulletin_board"]);
    expect(buildXray(trace()).keys).toBeNull();
  });

  it("draws each other compartment's rows as locks on its lane, one lock per shown score with its count", () => {
    const xray = buildXray(act, { informant: 2, suspect: 2 });
    expect(xray.unfiltered).toBe(true);
    const [informant, suspect] = [xray.lanes[2], xray.lanes[3]];
    if (informant?.searched !== false || suspect?.searched !== false) throw new Error("other compartments are not searched lanes");
    expect(informant.locked?.total).toBe(3);
    expect(informant.locked?.marks.map((mark) => [mark.space, formatScore(mark.score), mark.count])).toEqual([
      ["informant", "0.07", 2],
      ["informant", "0.01", 1],
    ]);
    // A negative score is pinned to the axis edge, like a candidate's.
    expect(suspect.locked?.marks.map((mark) => [mark.count, mark.position, mark.clamped])).toEqual([
      [1, 0.0549, false],
      [1, 0, true],
    ]);
    // Space and score only: a lock knows nothing else about its row.
    for (const mark of informant.locked?.marks ?? []) expect(Object.keys(mark).sort()).toEqual(["clamped", "count", "position", "row", "score", "space"]);
    expect(legendEntries(xray)).toEqual(["miss", "locked"]);
  });

  it("keeps the ordinary lanes of an ordinary trace, even if a trace carried locked rows without the act", () => {
    const ordinary = buildXray(trace({ locked: [{ space: "informant", score: 0.5 }] }), { informant: 2 });
    expect(ordinary.unfiltered).toBe(false);
    expect(ordinary.locked).toEqual([]);
    expect(ordinary.lanes[2]).toEqual({ space: "informant", searched: false, cardCount: 2 });
  });

  it("stacks locks whose score labels would overlap, and keeps distant ones on one row", () => {
    const lane = buildLockedLane("informant", [
      { space: "informant", score: 0.05 },
      { space: "informant", score: 0.04 },
      { space: "informant", score: 0.5 },
      { space: "detective", score: 0.05 },
    ]);
    expect(lane.total).toBe(3);
    expect(lane.marks.map((mark) => [mark.score, mark.row])).toEqual([
      [0.5, 0],
      [0.05, 1],
      [0.04, 0],
    ]);
    expect(lane.rowCount).toBe(2);
  });
});
