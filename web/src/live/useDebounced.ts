import { useCallback, useEffect, useRef } from "react";

/** Returns a stable function that runs `action` once, `delayMs` after the last of a burst of calls. */
export function useDebounced(action: () => void, delayMs: number): () => void {
  const actionRef = useRef(action);
  actionRef.current = action;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const mounted = useRef(false);

  useEffect(() => {
    mounted.current = true; // set here, not at declaration: StrictMode mounts, unmounts and mounts again
    return () => {
      mounted.current = false;
      if (timer.current !== null) clearTimeout(timer.current);
    };
  }, []);

  return useCallback(() => {
    // A command that finishes after the page was left must not start a fetch for the old case.
    if (!mounted.current) return;
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      actionRef.current();
    }, delayMs);
  }, [delayMs]);
}
