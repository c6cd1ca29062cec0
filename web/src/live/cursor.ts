/**
 * The resume cursor: the id of the last SSE frame we applied. Event ids are integers that only grow
 * within a deployment, so a frame at or below the cursor is a replay and must not be applied twice.
 */
export type ResumeCursor = number | null;

export interface CursorStep {
  cursor: ResumeCursor;
  isNew: boolean;
}

/** Frames without an id (or with a non-integer id) are applied but never move the cursor. */
export function advanceCursor(cursor: ResumeCursor, rawId: string | null | undefined): CursorStep {
  const id = parseEventId(rawId);
  if (id === null) return { cursor, isNew: true };
  if (cursor !== null && id <= cursor) return { cursor, isNew: false };
  return { cursor: id, isNew: true };
}

export function parseEventId(rawId: string | null | undefined): number | null {
  if (rawId === null || rawId === undefined || rawId.trim() === "") return null;
  const id = Number(rawId);
  return Number.isSafeInteger(id) && id >= 0 ? id : null;
}

/** A fresh EventSource cannot set Last-Event-ID, so it asks the server to resume with `?after=`. */
export function resumeUrl(baseUrl: string, cursor: ResumeCursor): string {
  if (cursor === null) return baseUrl;
  const separator = baseUrl.includes("?") ? "&" : "?";
  return `${baseUrl}${separator}after=${cursor}`;
}
