import type { CaseLanguage } from "../api/types";

export interface RecentCase {
  id: string;
  title: string;
  language: CaseLanguage;
  openedAt: string;
}

const STORAGE_KEY = "bureau.recentCases";
const MAX_RECENT = 8;

export function loadRecentCases(storage: Storage = localStorage): RecentCase[] {
  try {
    const parsed: unknown = JSON.parse(storage.getItem(STORAGE_KEY) ?? "[]");
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (entry): entry is RecentCase =>
        typeof entry === "object" && entry !== null && typeof (entry as RecentCase).id === "string",
    );
  } catch {
    return [];
  }
}

function save(cases: RecentCase[], storage: Storage): void {
  storage.setItem(STORAGE_KEY, JSON.stringify(cases.slice(0, MAX_RECENT)));
}

/** Moves the case to the front of the list (most recently opened first). */
export function rememberCase(entry: RecentCase, storage: Storage = localStorage): void {
  save([entry, ...loadRecentCases(storage).filter((known) => known.id !== entry.id)], storage);
}

export function forgetCase(caseId: string, storage: Storage = localStorage): void {
  save(loadRecentCases(storage).filter((known) => known.id !== caseId), storage);
}
