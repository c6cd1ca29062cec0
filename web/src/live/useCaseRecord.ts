import { useEffect, useReducer, type Dispatch } from "react";
import { api } from "../api/client";
import type { OperatorSnapshot } from "../api/types";
import { initialRecordState, recordReducer, type RecordAction, type RecordState } from "../state/caseRecord";

/** The case record, fetched again whenever the console's snapshot is (after each burst of live events, a
 * reconnect or a command), so it follows the game without a stream of its own. Operator only. */
export function useCaseRecord(caseId: string, snapshot: OperatorSnapshot | null): [RecordState, Dispatch<RecordAction>] {
  const [state, dispatch] = useReducer(recordReducer, initialRecordState);
  useEffect(() => {
    if (snapshot === null) return;
    const version = snapshot.case.version;
    let current = true;
    api.record(caseId).then(
      (record) => {
        if (current) dispatch({ type: "record-loaded", version, entries: record.entries });
      },
      () => undefined, // kept as it was; the next snapshot fetches it again
    );
    return () => {
      current = false;
    };
  }, [caseId, snapshot]);
  return [state, dispatch];
}
