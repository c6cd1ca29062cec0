import {
  BOARD,
  isRole,
  type Certainty,
  type InterrogationResult,
  type LiveEvent,
  type OperatorSnapshot,
  type Role,
  type Space,
  type Trace,
} from "../api/types";

/** What one answer of a role rested on; `question` only when this console asked it (events never carry it). */
export interface RoleAnswer {
  certainty: Certainty;
  evidence: string[];
  question?: string;
}

/** Enough answers per role for the matrix; older ones can only repeat what newer ones say. */
const ANSWER_LOG_LIMIT = 50;

function logAnswer(log: AnswerLog, role: Role, answer: RoleAnswer): AnswerLog {
  return { ...log, [role]: [...(log[role] ?? []), answer].slice(-ANSWER_LOG_LIMIT) };
}

export type AnswerLog = Partial<Record<Role, RoleAnswer[]>>;

export interface CardRef {
  space: Space;
  topic: string;
}

export interface AskedAnswer extends InterrogationResult {
  role: Role;
  /** Counts answers, so the same answer twice is still a new answer (re-rendered and announced). */
  seq: number;
}

export interface ConsoleState {
  snapshot: OperatorSnapshot | null;
  /** The trace shown in the memory X-ray: the latest interrogation from this console or any other. */
  trace: Trace | null;
  /** The last answer this console received (answer text only exists in the POST response). */
  answer: AskedAnswer | null;
  /** Every answer per role, oldest first: the who-knows-what matrix folds over them. */
  answerLog: AnswerLog;
  /** Space and topic of every card seen in a trace, so evidence stays resolvable after the snapshot moves on. */
  tracedCards: Record<string, CardRef>;
  erased: boolean;
  /** Grows with every live event; components key animations on it. */
  activity: number;
  lastEvent: { id: number | null; type: string } | null;
}

export type ConsoleAction =
  | { type: "snapshot-loaded"; snapshot: OperatorSnapshot }
  | { type: "case-reset"; snapshot: OperatorSnapshot }
  | { type: "answer-received"; role: Role; question: string; result: InterrogationResult }
  | { type: "live-event"; event: LiveEvent };

export const initialConsoleState: ConsoleState = {
  snapshot: null,
  trace: null,
  answer: null,
  answerLog: {},
  tracedCards: {},
  erased: false,
  activity: 0,
  lastEvent: null,
};

function rememberTracedCards(known: Record<string, CardRef>, trace: Trace | null): Record<string, CardRef> {
  if (trace === null) return known;
  const next = { ...known };
  for (const candidate of [...trace.hits, ...trace.misses]) {
    next[candidate.card_id] = { space: candidate.space, topic: candidate.topic };
  }
  return next;
}

/** The evidence of a trace is its hits (confirmed borderline included); misses never count. */
export function answerFromTrace(trace: Trace): RoleAnswer {
  const evidence = trace.hits.map((hit) => hit.card_id);
  return { certainty: trace.certainty ?? (evidence.length > 0 ? "known" : "unknown"), evidence };
}

function applySnapshot(state: ConsoleState, snapshot: OperatorSnapshot): ConsoleState {
  const trace = snapshot.last_trace ?? state.trace;
  const lastTrace = snapshot.last_trace;
  const answerLog =
    lastTrace && !state.answerLog[lastTrace.role]?.length
      ? logAnswer(state.answerLog, lastTrace.role, answerFromTrace(lastTrace))
      : state.answerLog;
  return {
    ...state,
    snapshot,
    trace,
    answerLog,
    tracedCards: rememberTracedCards(state.tracedCards, snapshot.last_trace),
  };
}

function applyEvent(state: ConsoleState, event: LiveEvent): ConsoleState {
  const next: ConsoleState = { ...state, activity: state.activity + 1, lastEvent: { id: event.id, type: event.type } };
  switch (event.type) {
    case "answer.completed": {
      const { role, certainty, evidence } = event.data;
      if (!isRole(role) || (certainty !== "known" && certainty !== "uncertain" && certainty !== "unknown")) return next;
      const cited = Array.isArray(evidence) ? evidence.filter((id): id is string => typeof id === "string") : [];
      return { ...next, answerLog: logAnswer(state.answerLog, role, { certainty, evidence: cited }) };
    }
    case "case.reset":
      return { ...next, trace: null, answer: null, answerLog: {} };
    case "case.erased":
      return { ...next, erased: true };
    default:
      return next;
  }
}

export function consoleReducer(state: ConsoleState, action: ConsoleAction): ConsoleState {
  switch (action.type) {
    case "snapshot-loaded":
      // Versions only grow: an older snapshot arriving late must not undo what is already shown.
      if (state.snapshot && action.snapshot.case.version < state.snapshot.case.version) return state;
      return applySnapshot(state, action.snapshot);
    case "case-reset":
      return applySnapshot({ ...state, trace: null, answer: null, answerLog: {} }, action.snapshot);
    case "answer-received": {
      const { role, question, result } = action;
      return {
        ...state,
        trace: result.trace,
        answer: { ...result, role, seq: (state.answer?.seq ?? 0) + 1 },
        answerLog: logAnswer(state.answerLog, role, { certainty: result.certainty, evidence: result.evidence, question }),
        tracedCards: rememberTracedCards(state.tracedCards, result.trace),
      };
    }
    case "live-event":
      return applyEvent(state, action.event);
  }
}

/** Card ids to highlight: the evidence of the answer on screen. */
export function citedCardIds(answer: AskedAnswer | null): Set<string> {
  return new Set(answer?.evidence ?? []);
}

/** For each private card id, the board copy made from it (if any). */
export function boardCopiesBySource(snapshot: OperatorSnapshot): Map<string, string> {
  const copies = new Map<string, string>();
  for (const card of snapshot.spaces[BOARD] ?? []) {
    if (card.source) copies.set(card.source.card_id, card.id);
  }
  return copies;
}
