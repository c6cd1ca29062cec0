import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { getSession, onAccessDenied, setCsrfToken, signOut as endSession } from "../api/client";
import type { SessionInfo } from "../api/types";
import { OPEN_SESSION } from "./audience";

interface SessionValue {
  /** null while the first GET /api/session is in flight. */
  session: SessionInfo | null;
  /** Some call was refused with ACCESS_REQUIRED / ROLE_FORBIDDEN since the last sign-in. */
  refusedByServer: boolean;
  /** Bumps after each sign-in so gated screens remount and load again. */
  epoch: number;
  refresh: () => Promise<void>;
  signedIn: () => Promise<void>;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [refusedByServer, setRefusedByServer] = useState(false);
  const [epoch, setEpoch] = useState(0);

  const refresh = useCallback(async () => {
    try {
      const current = await getSession();
      setCsrfToken(current.csrf_token);
      setSession(current);
    } catch {
      setSession((known) => known ?? OPEN_SESSION);
    }
  }, []);

  useEffect(() => {
    void refresh();
    // Re-read the session too: an expired one must show the sign-in prompt, not "this session may not…".
    return onAccessDenied(() => {
      setRefusedByServer(true);
      void refresh();
    });
  }, [refresh]);

  const signedIn = useCallback(async () => {
    await refresh();
    setRefusedByServer(false);
    setEpoch((value) => value + 1);
  }, [refresh]);

  const signOut = useCallback(async () => {
    await endSession();
    await refresh();
  }, [refresh]);

  const value = useMemo(
    () => ({ session, refusedByServer, epoch, refresh, signedIn, signOut }),
    [session, refusedByServer, epoch, refresh, signedIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (value === null) throw new Error("useSession needs a SessionProvider");
  return value;
}
