import { BOARD, type InterrogationResult, type LiveEvent, type OperatorSnapshot, type Role } from "../api/types";

/** A role's answer on screen: the interrogation result, keyed so a repeat of the same answer re-renders. */
export interface AskedAnswer extends InterrogationResult {
  role: Role;
  key: string;
}

export interface ConsoleState {
  snapshot: OperatorSnapshot | null;
  /** Each role's latest answer (with its trace): kept with the case on the server, so a reload shows them. */
  answers: Partial<Record<Role, AskedAnswer>>;
  erased: boolean;
  /** Counts local answers, so the same answer twice is still a new answer (re-rendered and announced). */
  asked: number;
}

export type ConsoleAction =
  | { type: "snapshot-loaded"; snapshot: OperatorSnapshot }
  | { type: "case-reset"; snapshot: OperatorSnapshot }
  | { type: "answer-received"; role: Role; result: InterrogationResult }
  | { type: "live-event"; event: LiveEvent };

export const initialConsoleState: ConsoleState = { snapshot: null, answers: {}, erased: false, asked: 0 };

function answersOf(snapshot: OperatorSnapshot, shown: ConsoleState["answers"]): ConsoleState["answers"] {
  const answers: ConsoleState["answers"] = {};
  for (const [role, stored] of Object.entries(snapshot.answers ?? {}) as [Role, NonNullable<OperatorSnapshot["answers"]>[Role]][]) {
    if (!stored) continue;
    const current = shown[role];
    // The answer this console just received is the same one: keep its key, so it is not announced twice.
    const same = current && current.answer === stored.answer && current.trace.duration_ms === stored.trace.duration_ms;
    answers[role] = same ? current : { ...stored, role, key: stored.asked_at };
  }
  return answers;
}

export function consoleReducer(state: ConsoleState, action: ConsoleAction): ConsoleState {
  switch (action.type) {
    case "snapshot-loaded":
      // Versions only grow: an older snapshot arriving late must not undo what is already shown.
      if (state.snapshot && action.snapshot.case.version < state.snapshot.case.version) return state;
      return { ...state, snapshot: action.snapshot, answers: answersOf(action.snapshot, state.answers) };
    case "case-reset":
      return { ...state, snapshot: action.snapshot, answers: answersOf(action.snapshot, {}) };
    case "answer-received": {
      const asked = state.asked + 1;
      return { ...state, asked, answers: { ...state.answers, [action.role]: { ...action.result, role: action.role, key: `local-${asked}` } } };
    }
    case "live-event":
      if (action.event.type === "case.erased") return { ...state, erased: true };
      if (action.event.type === "case.reset") return { ...state, answers: {} };
      return state;
  }
}

/** Card ids to highlight: the evidence of the answer on screen. */
export function citedCardIds(answer: AskedAnswer | null | undefined): Set<string> {
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
