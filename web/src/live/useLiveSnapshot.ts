import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/client";
import type { LiveEvent } from "../api/types";
import type { ConnectionState } from "./resumableStream";
import { useDebounced } from "./useDebounced";
import { useLiveStream } from "./useLiveStream";

/** Events carry metadata only, so a burst of them becomes one snapshot refetch this long after the last. */
const REFETCH_DEBOUNCE_MS = 120;

export interface LiveSnapshotOptions<Snapshot> {
  load: () => Promise<Snapshot>;
  streamUrl: string;
  /** The case is gone (erased): there is no stream left to resume. */
  ended: boolean;
  onSnapshot: (snapshot: Snapshot) => void;
  onEvent: (event: LiveEvent) => void;
  onMissing?: () => void;
}

export interface LiveSnapshot {
  connection: ConnectionState;
  /** The server does not know the case (404). */
  missing: boolean;
  scheduleRefetch: () => void;
  /** After applying a command's own result: a snapshot fetched before it must not land after it. */
  discardPendingFetches: () => void;
}

/** A case snapshot kept current by its live stream: fetched once, then again after each burst of events or a
 * reconnect. Only the newest fetch may land; the stream stops when the case is missing or has ended. */
export function useLiveSnapshot<Snapshot>(options: LiveSnapshotOptions<Snapshot>): LiveSnapshot {
  const optionsRef = useRef(options);
  optionsRef.current = options;
  const [missing, setMissing] = useState(false);
  const latestRequest = useRef(0);

  const refetch = useCallback(async () => {
    const request = ++latestRequest.current;
    try {
      const snapshot = await optionsRef.current.load();
      if (request === latestRequest.current) optionsRef.current.onSnapshot(snapshot);
    } catch (error) {
      if (error instanceof ApiError && error.code === "CASE_NOT_FOUND") {
        optionsRef.current.onMissing?.();
        setMissing(true);
      }
      // Anything else (server restarting, access lost) is shown by the connection dot or the passcode screen.
    }
  }, []);
  const scheduleRefetch = useDebounced(() => void refetch(), REFETCH_DEBOUNCE_MS);

  const connection = useLiveStream(missing || options.ended ? null : options.streamUrl, {
    onEvent: (event) => {
      optionsRef.current.onEvent(event);
      scheduleRefetch();
    },
    onResync: scheduleRefetch,
  });

  useEffect(() => {
    void refetch();
  }, [refetch]);

  const discardPendingFetches = useCallback(() => {
    latestRequest.current++;
  }, []);
  return { connection, missing, scheduleRefetch, discardPendingFetches };
}
