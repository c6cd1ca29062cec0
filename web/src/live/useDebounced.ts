import { useCallback, useEffect, useRef } from "react";

/** Returns a stable function that runs `action` once, `delayMs` after the last of a burst of calls. */
export function useDebounced(action: () => void, delayMs: number): () => void {
  const actionRef = useRef(action);
  actionRef.current = action;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
    },
    [],
  );

  return useCallback(() => {
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      actionRef.current();
    }, delayMs);
  }, [delayMs]);
}
