import { BOARD, ROLES, type LiveEvent, type Space, type StageRetrieval, type StageSnapshot } from "../api/types";

export interface StageState {
  snapshot: StageSnapshot | null;
  erased: boolean;
  /** Grows with every live event; the retrieval sentence re-animates on it. */
  activity: number;
  /** A finding was withdrawn since the last one was promoted (its text is gone: only that it happened). */
  findingWithdrawn: boolean;
}

export type StageAction = { type: "snapshot-loaded"; snapshot: StageSnapshot } | { type: "live-event"; event: LiveEvent };

export const initialStageState: StageState = { snapshot: null, erased: false, activity: 0, findingWithdrawn: false };

export function stageReducer(state: StageState, action: StageAction): StageState {
  switch (action.type) {
    case "snapshot-loaded":
      return { ...state, snapshot: action.snapshot };
    case "live-event":
      return {
        ...state,
        activity: state.activity + 1,
        erased: state.erased || action.event.type === "case.erased",
        findingWithdrawn:
          action.event.type === "finding.withdrawn" ||
          (state.findingWithdrawn && action.event.type !== "finding.promoted" && action.event.type !== "case.reset"),
      };
  }
}

export type StageOutcome = "nothing" | "uncertain" | "own_memory" | "board" | "own_memory_and_board" | "conflicting";

export interface RetrievalSentence {
  role: StageRetrieval["role"];
  searchedOwnMemory: boolean;
  searchedBoard: boolean;
  outcome: StageOutcome;
}

/** "Detective searched its own memory + the board → nothing found", as data. */
export function describeRetrieval(retrieval: StageRetrieval): RetrievalSentence {
  const foundOwn = retrieval.private_hit_count > 0;
  const foundBoard = retrieval.public_hits.length > 0;
  let outcome: StageOutcome = "nothing";
  if (retrieval.conflicting && foundBoard) outcome = "conflicting";
  else if (foundOwn && foundBoard) outcome = "own_memory_and_board";
  else if (foundOwn) outcome = "own_memory";
  else if (foundBoard) outcome = "board";
  else if (retrieval.verdict === "uncertain") outcome = "uncertain"; // found something close, not certain
  return {
    role: retrieval.role,
    searchedOwnMemory: retrieval.searched_scopes.includes(retrieval.role),
    searchedBoard: retrieval.searched_scopes.includes("bulletin_board"),
    outcome,
  };
}

/** The presenter act's locked rows, by space in a fixed order (roles, then the board), each space's scores highest
 * first: a lock per row on the stage. Empty unless the retrieval ran without the space filter. */
export function lockedBySpace(retrieval: StageRetrieval): { space: Space; scores: number[] }[] {
  if (!retrieval.unfiltered) return [];
  const order: Space[] = [...ROLES, BOARD];
  return order
    .map((space) => ({
      space,
      scores: (retrieval.locked ?? [])
        .filter((row) => row.space === space)
        .map((row) => row.score)
        .sort((a, b) => b - a),
    }))
    .filter((group) => group.scores.length > 0);
}
