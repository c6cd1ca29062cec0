import { BOARD, type MissReason, type HitStatus, type Role, type Space, type Trace } from "../api/types";

export type MarkKind = HitStatus | MissReason;

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
  isEvidence: boolean;
  /** Marks that would overlap stack into rows (0 = on the axis line). */
  row: number;
}

export interface XrayLane {
  space: Space;
  marks: XrayMark[];
  hitCount: number;
  rowCount: number;
}

export type VerdictSource = "own_memory" | "board";

export type XrayVerdict =
  | { kind: "nothing_found"; scopes: Space[]; bestMissScore: number | null; contextOnlyCount: number }
  | { kind: "found"; sources: VerdictSource[] };

export interface Xray {
  role: Role;
  lanes: XrayLane[];
  threshold: number;
  borderlineFloor: number;
  verdict: XrayVerdict;
  durationMs: number;
  responder: Trace["responder"];
  fallbackReason: string | null;
}

/** Axis distance a bare mark occupies; a second mark closer than this moves up a row. */
export const MARK_GAP = 0.035;
/** Axis distance a mark with a text label beside it occupies. */
export const LABELLED_MARK_GAP = 0.15;

export function clampScore(score: number): { position: number; clamped: boolean } {
  if (!Number.isFinite(score)) return { position: 0, clamped: true };
  if (score < 0) return { position: 0, clamped: true };
  if (score > 1) return { position: 1, clamped: true };
  return { position: score, clamped: false };
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

/** Hits show their topic, clamped scores their raw value, and every other non-plain miss its reason. */
export function markHasLabel(kind: MarkKind, clamped: boolean): boolean {
  return kind === "hit" || clamped || markNeedsReasonLabel(kind);
}

/** Search scopes first, in the order the server searched them; a candidate from any other space still gets a lane. */
function laneOrder(trace: Trace): Space[] {
  const spaces: Space[] = [...trace.searched_scopes];
  for (const candidate of [...trace.hits, ...trace.misses]) {
    if (!spaces.includes(candidate.space)) spaces.push(candidate.space);
  }
  return spaces;
}

function buildLane(space: Space, trace: Trace): XrayLane {
  const candidates = [
    ...trace.hits.filter((hit) => hit.space === space).map((hit) => ({ ...hit, kind: hit.status as MarkKind, isEvidence: true })),
    ...trace.misses.filter((miss) => miss.space === space).map((miss) => ({ ...miss, kind: miss.reason as MarkKind, isEvidence: false })),
  ];
  const placed = candidates.map((candidate) => ({ candidate, ...clampScore(candidate.score) }));
  const rows = assignRows(
    placed.map(({ candidate, position, clamped }) => ({
      position,
      span: markHasLabel(candidate.kind, clamped) ? LABELLED_MARK_GAP : MARK_GAP,
    })),
  );
  const marks = placed.map(({ candidate, position, clamped }, index): XrayMark => ({
    cardId: candidate.card_id,
    space,
    topic: candidate.topic,
    memoryType: candidate.memory_type,
    score: candidate.score,
    position,
    clamped,
    kind: candidate.kind,
    isEvidence: candidate.isEvidence,
    row: rows[index] ?? 0,
  }));
  return {
    space,
    marks,
    hitCount: marks.filter((mark) => mark.isEvidence).length,
    rowCount: marks.length === 0 ? 1 : Math.max(...marks.map((mark) => mark.row)) + 1,
  };
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
    .filter((miss) => miss.reason === "below_threshold" || miss.reason === "borderline_rejected")
    .map((miss) => miss.score);
  return {
    kind: "nothing_found",
    scopes: trace.searched_scopes,
    bestMissScore: scores.length > 0 ? Math.max(...scores) : null,
    contextOnlyCount: trace.misses.filter((miss) => miss.reason === "derived_context" || miss.reason === "type_not_evidence").length,
  };
}

export function buildXray(trace: Trace): Xray {
  return {
    role: trace.role,
    lanes: laneOrder(trace).map((space) => buildLane(space, trace)),
    threshold: trace.threshold,
    borderlineFloor: trace.borderline_floor,
    verdict: deriveVerdict(trace),
    durationMs: trace.duration_ms,
    responder: trace.responder,
    fallbackReason: trace.fallback_reason,
  };
}

/** Hits are drawn in colour; every other mark is a grey miss, and all but plain misses carry a reason label. */
export function markNeedsReasonLabel(kind: MarkKind): boolean {
  return kind !== "hit" && kind !== "below_threshold";
}
