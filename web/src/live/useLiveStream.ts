import { useEffect, useRef, useState } from "react";
import { LIVE_EVENT_TYPES, type LiveEvent } from "../api/types";
import { ResumableEventStream, type ConnectionState } from "./resumableStream";

export interface LiveStreamHandlers {
  onEvent: (event: LiveEvent) => void;
  /** Fetch the snapshot again: called on every (re)open and after failures. */
  onResync: () => void;
}

/** Subscribes to one SSE stream for the component's lifetime and reports the connection state. */
export function useLiveStream(url: string | null, handlers: LiveStreamHandlers): ConnectionState {
  const [connection, setConnection] = useState<ConnectionState>("connecting");
  const handlersRef = useRef(handlers);
  handlersRef.current = handlers;

  useEffect(() => {
    if (url === null) return undefined;
    const stream = new ResumableEventStream(
      url,
      {
        onEvent: (event) => handlersRef.current.onEvent(event),
        onConnectionChange: setConnection,
        onOpen: () => handlersRef.current.onResync(),
        onError: () => handlersRef.current.onResync(),
      },
      { eventTypes: LIVE_EVENT_TYPES },
    );
    stream.start();
    return () => stream.stop();
  }, [url]);

  return url === null ? "ended" : connection;
}
