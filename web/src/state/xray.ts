import { BOARD, ROLES, type LockedRow, type Role, type Space, type Trace } from "../api/types";

/** How a candidate is drawn. Every miss reason the chart has no glyph of its own for is an `excluded` mark
 * labelled with its reason (expired, failed validation, not evidence by type, owner mismatch, duplicate, …). */
export type MarkKind = "hit" | "borderline_confirmed" | "below_threshold" | "uncertain" | "borderline_rejected" | "duplicate" | "filtered_unsafe" | "excluded";

const DRAWN_MISS_REASONS: ReadonlySet<string> = new Set(["below_threshold", "uncertain", "borderline_rejected", "duplicate", "filtered_unsafe"]);
/** Session records ("I was asked…"): the read policy's `type_not_evidence`, classify()'s `derived_context`. */
const CONTEXT_REASONS: ReadonlySet<string> = new Set(["derived_context", "type_not_evidence"]);

export interface XrayMark {
  cardId: string;
  space: Space;
  topic: string;
  memoryType: string;
  score: number;
  /** Where the mark sits on the 0..1 axis. */
  position: number;
  /** The raw score fell outside 0..1 and was pinned to the axis edge. */
  clamped: boolean;
  kind: MarkKind;
  /** The miss reason as the server sent it (null for hits). */
  reason: string | null;
  /** The part of the coverage rule that kept this candidate from being known (docs/retrieval.md), if any. */
  rule: string | null;
  isEvidence: boolean;
  /** A miss just below the cut: drawn with its exact score and "just below". */
  justBelow: boolean;
  /** Every relevance signal the server measured for this candidate (shown in the table). */
  signals: Record<string, number>;
  /** Marks that would overlap stack into rows (0 = on the axis line). */
  row: number;
}

export interface SearchedLane {
  space: Space;
  searched: true;
  marks: XrayMark[];
  hitCount: number;
  rowCount: number;
}

/** A space the role may not search: drawn greyed with how many cards it holds, never what they say. In the
 * presenter act (an unfiltered trace) it is another compartment instead, with what it handed back, locked. */
export interface UnsearchedLane {
  space: Space;
  searched: false;
  cardCount: number;
  locked?: LockedLane;
}

/** Rows of another compartment that came back and no key in the request opened: a lock each at its score
 * (rows showing the same score share one lock, with their count). Space and score: nothing else exists here. */
export interface LockedLane {
  marks: LockMark[];
  /** How many rows came back (the sum of the marks' counts). */
  total: number;
  rowCount: number;
}

export interface LockMark {
  space: Space;
  score: number;
  count: number;
  position: number;
  clamped: boolean;
  row: number;
}

export type XrayLane = SearchedLane | UnsearchedLane;

/** Session / task-state records the search returned, folded into one labelled group: context, never evidence. */
export interface ContextGroup {
  count: number;
  bestScore: number;
}

export type VerdictSource = "own_memory" | "board";

export type XrayVerdict =
  | { kind: "nothing_found"; scopes: Space[]; bestMissScore: number | null; contextOnlyCount: number }
  | { kind: "found"; sources: VerdictSource[] };

export interface Xray {
  role: Role;
  lanes: XrayLane[];
  /** The spaces whose keys the request held to read ("keys in this request"); null in records from before grants. */
  keys: Space[] | null;
  /** The presenter act: asked without the space filter (other compartments' rows came back, locked). */
  unfiltered: boolean;
  locked: LockedRow[];
  context: ContextGroup | null;
  threshold: number;
  borderlineFloor: number;
  verdict: XrayVerdict;
  durationMs: number;
  responder: Trace["responder"];
  fallbackReason: Trace["fallback_reason"];
}

/** Axis distance a bare mark occupies; a second mark closer than this moves up a row. */
export const MARK_GAP = 0.035;
/** Axis distance a lock with its score (and count: "0.07 ×4") beside it occupies. */
export const LOCK_GAP = 0.12;
/** Axis distance a mark with a text label beside it occupies. */
export const LABELLED_MARK_GAP = 0.15;
/** Scores this close to a cut point are shown to three decimals: rounding must never make a miss look like a hit. */
export const NEAR_CUT = 0.05;
/** A miss at most this far below the cut is labelled "just below" (or anywhere in the borderline band). */
export const JUST_BELOW = 0.02;

export function clampScore(score: number): { position: number; clamped: boolean } {
  if (!Number.isFinite(score)) return { position: 0, clamped: true };
  if (score < 0) return { position: 0, clamped: true };
  if (score > 1) return { position: 1, clamped: true };
  return { position: score, clamped: false };
}

/** Two decimals, or three near a cut point (0.395 against 0.40 must not read "0.40"). */
export function formatScore(score: number, cuts: readonly number[] = []): string {
  const near = cuts.some((cut) => Math.abs(score - cut) < NEAR_CUT);
  const text = score.toFixed(near ? 3 : 2);
  return Number(text) === 0 ? text.replace("-", "") : text; // never "-0.00"
}

export interface MarkSpan {
  position: number;
  /** How far right of `position` the mark (and its label) reaches. */
  span: number;
}

/** Greedy row packing: each mark takes the lowest row whose previous occupant ends at or before it. */
export function assignRows(marks: MarkSpan[]): number[] {
  const order = marks.map((mark, index) => ({ ...mark, index })).sort((a, b) => a.position - b.position);
  const rowEnds: number[] = [];
  const rows = new Array<number>(marks.length).fill(0);
  for (const { position, span, index } of order) {
    let row = rowEnds.findIndex((end) => end <= position + 1e-9);
    if (row === -1) row = rowEnds.length;
    rowEnds[row] = position + span;
    rows[index] = row;
  }
  return rows;
}

/** Hits show their topic; every mark that is not a plain miss says why; near misses and clamped scores show the number. */
export function markHasLabel(mark: Pick<XrayMark, "kind" | "clamped" | "justBelow">): boolean {
  return mark.kind !== "below_threshold" || mark.clamped || mark.justBelow;
}

/** Searched scopes first, in search order; then any other space a candidate came from; then every other
 * space of the case, greyed: the picture itself says the search was not allowed there. */
function laneOrder(trace: Trace): Space[] {
  const spaces: Space[] = [...trace.searched_scopes];
  for (const candidate of [...trace.hits, ...trace.misses]) {
    if (!spaces.includes(candidate.space)) spaces.push(candidate.space);
  }
  for (const space of [...ROLES, BOARD] as Space[]) {
    if (!spaces.includes(space)) spaces.push(space);
  }
  return spaces;
}

function markKind(reason: string): MarkKind {
  return DRAWN_MISS_REASONS.has(reason) ? (reason as MarkKind) : "excluded";
}

function buildSearchedLane(space: Space, trace: Trace): SearchedLane {
  const justBelowFrom = Math.min(trace.threshold - JUST_BELOW, trace.borderline_floor);
  const candidates = [
    ...trace.hits
      .filter((hit) => hit.space === space)
      .map((hit) => ({ ...hit, kind: hit.status as MarkKind, reason: null, isEvidence: true })),
    ...trace.misses
      .filter((miss) => miss.space === space && !CONTEXT_REASONS.has(miss.reason))
      .map((miss) => ({ ...miss, kind: markKind(miss.reason), reason: miss.reason, isEvidence: false })),
  ];
  const placed = candidates.map((candidate) => {
    const nearKind = candidate.kind === "below_threshold" || candidate.kind === "uncertain";
    const justBelow = nearKind && candidate.score >= justBelowFrom && candidate.score < trace.threshold;
    return { candidate, justBelow, ...clampScore(candidate.score) };
  });
  const rows = assignRows(
    placed.map(({ candidate, position, clamped, justBelow }) => ({
      position,
      span: markHasLabel({ kind: candidate.kind, clamped, justBelow }) ? LABELLED_MARK_GAP : MARK_GAP,
    })),
  );
  const marks = placed.map(({ candidate, position, clamped, justBelow }, index): XrayMark => ({
    cardId: candidate.card_id,
    space,
    topic: candidate.topic,
    memoryType: candidate.memory_type,
    score: candidate.score,
    position,
    clamped,
    kind: candidate.kind,
    reason: candidate.reason,
    rule: candidate.rule ?? null,
    isEvidence: candidate.isEvidence,
    justBelow,
    signals: candidate.signals ?? {},
    row: rows[index] ?? 0,
  }));
  return {
    space,
    searched: true,
    marks,
    hitCount: marks.filter((mark) => mark.isEvidence).length,
    rowCount: marks.length === 0 ? 1 : Math.max(...marks.map((mark) => mark.row)) + 1,
  };
}

function contextGroup(trace: Trace): ContextGroup | null {
  const scores = trace.misses.filter((miss) => CONTEXT_REASONS.has(miss.reason)).map((miss) => miss.score);
  return scores.length === 0 ? null : { count: scores.length, bestScore: Math.max(...scores) };
}

export function deriveVerdict(trace: Trace): XrayVerdict {
  if (trace.hits.length > 0) {
    const sources: VerdictSource[] = [];
    if (trace.hits.some((hit) => hit.space !== BOARD)) sources.push("own_memory");
    if (trace.hits.some((hit) => hit.space === BOARD)) sources.push("board");
    return { kind: "found", sources };
  }
  // Only candidates that could ever have been evidence: a session record ("I was asked…") often scores high,
  // and quoting it as the best candidate would contradict "nothing above the threshold".
  const scores = trace.misses
    .filter((miss) => miss.reason === "below_threshold" || miss.reason === "uncertain" || miss.reason === "borderline_rejected")
    .map((miss) => miss.score);
  return {
    kind: "nothing_found",
    scopes: trace.searched_scopes,
    bestMissScore: scores.length > 0 ? Math.max(...scores) : null,
    contextOnlyCount: trace.misses.filter((miss) => CONTEXT_REASONS.has(miss.reason)).length,
  };
}

/** The locks of one other compartment: rows that show the same score (two decimals) share a lock. */
export function buildLockedLane(space: Space, rows: readonly LockedRow[]): LockedLane {
  const groups = new Map<string, { score: number; count: number }>();
  for (const row of rows) {
    if (row.space !== space) continue;
    const shown = formatScore(row.score);
    const group = groups.get(shown);
    if (group) group.count += 1;
    else groups.set(shown, { score: row.score, count: 1 });
  }
  const placed = [...groups.values()].sort((a, b) => b.score - a.score).map((group) => ({ ...group, ...clampScore(group.score) }));
  const rowsOf = assignRows(placed.map(({ position }) => ({ position, span: LOCK_GAP })));
  const marks = placed.map((group, index): LockMark => ({ space, ...group, row: rowsOf[index] ?? 0 }));
  return {
    marks,
    total: marks.reduce((sum, mark) => sum + mark.count, 0),
    rowCount: marks.length === 0 ? 1 : Math.max(...marks.map((mark) => mark.row)) + 1,
  };
}

/** `cardCounts`: how many (non-session) cards each space holds, for the greyed lanes of unsearched spaces. */
export function buildXray(trace: Trace, cardCounts: Partial<Record<Space, number>> = {}): Xray {
  const searched = new Set<Space>([...trace.searched_scopes, ...trace.hits.map((h) => h.space), ...trace.misses.map((m) => m.space)]);
  const unfiltered = trace.unfiltered === true;
  const locked = unfiltered ? (trace.locked ?? []) : [];
  return {
    role: trace.role,
    keys: trace.grant?.keys ?? null,
    unfiltered,
    locked,
    lanes: laneOrder(trace).map((space): XrayLane => {
      if (searched.has(space)) return buildSearchedLane(space, trace);
      const lane: UnsearchedLane = { space, searched: false, cardCount: cardCounts[space] ?? 0 };
      return unfiltered ? { ...lane, locked: buildLockedLane(space, locked) } : lane;
    }),
    context: contextGroup(trace),
    threshold: trace.threshold,
    borderlineFloor: trace.borderline_floor,
    verdict: deriveVerdict(trace),
    durationMs: trace.duration_ms,
    responder: trace.responder,
    fallbackReason: trace.fallback_reason,
  };
}

/** The mark kinds present in a chart, in legend order, so the legend lists only what is drawn. */
export type LegendEntry =
  | "hit_own"
  | "hit_board"
  | "borderline_confirmed"
  | "miss"
  | "uncertain"
  | "borderline_rejected"
  | "duplicate"
  | "filtered_unsafe"
  | "excluded"
  | "context"
  | "locked"
  | "not_searched";

export function legendEntries(xray: Xray): LegendEntry[] {
  const marks = xray.lanes.flatMap((lane) => (lane.searched ? lane.marks : []));
  const present = new Set<LegendEntry>();
  for (const mark of marks) {
    if (mark.kind === "hit") present.add(mark.space === BOARD ? "hit_board" : "hit_own");
    else if (mark.kind === "below_threshold") present.add("miss");
    else present.add(mark.kind);
  }
  if (xray.context) present.add("context");
  if (xray.lanes.some((lane) => !lane.searched && (lane.locked?.total ?? 0) > 0)) present.add("locked");
  if (xray.lanes.some((lane) => !lane.searched && lane.locked === undefined)) present.add("not_searched");
  const order: LegendEntry[] = ["hit_own", "hit_board", "borderline_confirmed", "miss", "uncertain", "borderline_rejected", "duplicate", "filtered_unsafe", "excluded", "context", "locked", "not_searched"];
  return order.filter((entry) => present.has(entry));
}
