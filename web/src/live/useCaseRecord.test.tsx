import { act, cleanup, renderHook, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../api/client";
import type { CaseRecordPage, OperatorSnapshot } from "../api/types";
import { interrogation, snapshot } from "../test/fixtures";
import { RECORD_PAGE, useCaseRecord } from "./useCaseRecord";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const at = (version: number): OperatorSnapshot => {
  const base = snapshot();
  return { ...base, case: { ...base.case, version } };
};
const page = (ids: number[], next: number | null, total: number): CaseRecordPage => ({ case_id: "case-1", entries: ids.map((id) => interrogation(id)), next, total });

describe("useCaseRecord", () => {
  it("reads the newest page once, then only as many entries as versions moved, and again from the top after an erasure", async () => {
    const reads = vi.spyOn(api, "recordPage");
    reads.mockResolvedValueOnce(page([9, 8], 8, 9));
    const { result, rerender } = renderHook(({ shown }) => useCaseRecord("case-1", shown), { initialProps: { shown: at(10) } });
    await waitFor(() => expect(result.current.state.entries).toHaveLength(2));
    expect(reads).toHaveBeenLastCalledWith("case-1", null, RECORD_PAGE);

    // Two changes later (one new question): a page of three reaches back to what is held.
    reads.mockResolvedValueOnce(page([10, 9, 8], 8, 10));
    rerender({ shown: at(12) });
    await waitFor(() => expect(result.current.state.entries.map((e) => e.id)).toEqual([10, 9, 8]));
    expect(reads).toHaveBeenLastCalledWith("case-1", null, 3);
    expect(result.current.state.next).toBe(8);

    // The same version again (a reconnect): nothing is read.
    rerender({ shown: at(12) });
    expect(reads).toHaveBeenCalledTimes(2);

    // Older entries on request, once at a time.
    reads.mockResolvedValueOnce(page([7, 6], null, 10));
    act(() => result.current.loadOlder());
    await waitFor(() => expect(result.current.state.entries.map((e) => e.id)).toEqual([10, 9, 8, 7, 6]));
    expect(reads).toHaveBeenLastCalledWith("case-1", 8, RECORD_PAGE);

    // A card erased: entries on any page may have lost their text, so the next refresh starts from the top.
    act(() => result.current.noteEvent({ id: 40, type: "card.erased", data: {} }));
    reads.mockResolvedValueOnce(page([10, 9], 9, 10));
    rerender({ shown: at(13) });
    await waitFor(() => expect(result.current.state.entries.map((e) => e.id)).toEqual([10, 9]));
    expect(reads).toHaveBeenLastCalledWith("case-1", null, RECORD_PAGE);
    expect(result.current.state.next).toBe(9);
  });
});
