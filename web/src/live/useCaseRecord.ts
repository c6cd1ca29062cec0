import { useCallback, useEffect, useReducer, useRef, type Dispatch } from "react";
import { api } from "../api/client";
import { RECORD_PAGE as RECORD_PAGE_RULE } from "../api/rules";
import type { LiveEvent, OperatorSnapshot } from "../api/types";
import { initialRecordState, recordReducer, type RecordAction, type RecordState } from "../state/caseRecord";

/** Entries per page the timeline asks for (the server's default page). */
export const RECORD_PAGE = RECORD_PAGE_RULE.default;

/** Events that can take the text out of entries on any page (a card erased; a finding withdrawn, whose card
 * entries may have quoted): the next refresh reads the record again from its first page. */
export function changesOldEntries(event: LiveEvent): boolean {
  return event.type === "card.erased" || event.type === "finding.withdrawn";
}

export interface CaseRecord {
  state: RecordState;
  dispatch: Dispatch<RecordAction>;
  /** Read the next older page (the timeline calls it when its end scrolls into view). */
  loadOlder: () => void;
  /** A live event of the case: noted if it changes older entries. */
  noteEvent: (event: LiveEvent) => void;
}

/** The case record, a page at a time. The newest page first; older pages on request; and whenever the console's
 * snapshot moves on (after each burst of live events, a reconnect or a command), only the entries that can be
 * new: each change bumps the case version once, so the newest `versions moved + 1` entries reach back to what is
 * held. Never the whole record again. Operator only. */
export function useCaseRecord(caseId: string, snapshot: OperatorSnapshot | null): CaseRecord {
  const [state, dispatch] = useReducer(recordReducer, initialRecordState);
  const stateRef = useRef(state);
  stateRef.current = state;
  // Events that asked for a reload, and how many of them a landed reload has answered: a reload that fails or is
  // overtaken leaves the request standing for the next snapshot.
  const reloadsWanted = useRef(0);
  const reloadsDone = useRef(0);

  useEffect(() => {
    if (snapshot === null) return;
    const version = snapshot.case.version;
    const held = stateRef.current.version;
    const wanted = reloadsWanted.current;
    const reload = held < 0 || wanted > reloadsDone.current;
    if (version === held && !reload) return; // nothing new
    const limit = reload ? RECORD_PAGE : Math.min(RECORD_PAGE_RULE.max, Math.max(1, version - held + 1));
    let current = true;
    api.recordPage(caseId, null, limit).then(
      (page) => {
        if (!current) return;
        dispatch(reload ? { type: "record-reloaded", version, page } : { type: "head-loaded", version, page });
        if (reload) reloadsDone.current = Math.max(reloadsDone.current, wanted);
      },
      () => undefined, // kept as it was; the next snapshot asks again
    );
    return () => {
      current = false;
    };
  }, [caseId, snapshot]);

  const loadOlder = useCallback(() => {
    const { next, loadingOlder } = stateRef.current;
    if (next === null || loadingOlder) return;
    dispatch({ type: "older-requested" });
    api.recordPage(caseId, next, RECORD_PAGE).then(
      (page) => dispatch({ type: "older-loaded", after: next, page }),
      () => dispatch({ type: "older-failed" }),
    );
  }, [caseId]);

  const noteEvent = useCallback((event: LiveEvent) => {
    if (changesOldEntries(event)) reloadsWanted.current += 1;
  }, []);

  return { state, dispatch, loadOlder, noteEvent };
}
