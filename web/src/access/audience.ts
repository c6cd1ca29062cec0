import type { Audience, SessionInfo } from "../api/types";

/** The audience lattice: an operator session may open everything a stage session may. */
export function audienceSatisfies(have: Audience | null, need: Audience): boolean {
  if (have === "operator") return true;
  return have === "stage" && need === "stage";
}

export function needsPasscode(session: SessionInfo, need: Audience, refusedByServer: boolean): boolean {
  if (refusedByServer) return true;
  return session.passcodes_enabled && !audienceSatisfies(session.audience, need);
}

/** A server without passcodes (or without the session endpoint) runs open for local play. */
export const OPEN_SESSION: SessionInfo = { audience: null, csrf_token: null, passcodes_enabled: false };
