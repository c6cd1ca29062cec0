import { useCallback, useEffect, useState } from "react";

/** Seconds left of a one-off countdown (e.g. Retry-After), ticking once a second until it reaches 0. */
export function useCountdown(): [number, (seconds: number) => void] {
  const [remaining, setRemaining] = useState(0);
  useEffect(() => {
    if (remaining <= 0) return undefined;
    const timer = setTimeout(() => setRemaining((value) => Math.max(0, value - 1)), 1000);
    return () => clearTimeout(timer);
  }, [remaining]);
  const start = useCallback((seconds: number) => setRemaining(Math.max(1, Math.ceil(seconds))), []);
  return [remaining, start];
}
