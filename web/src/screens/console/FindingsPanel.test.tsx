import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClaimEvaluation, FindingEvaluation } from "../../api/types";
import { renderWithI18n } from "../../test/render";
import { FindingsPanel } from "./FindingsPanel";

afterEach(cleanup);

const CLAIM = "The grey van left the harbour at midnight.";

function evaluation(overrides: Partial<ClaimEvaluation> = {}): FindingEvaluation {
  return {
    min_support: 2,
    claims: [
      {
        claim: CLAIM,
        proposed: false,
        contributors: [
          { card_id: "1", role: "detective", source: "the night porter", status: "counted", score: 0.98, created_at: "2026-12-02T04:00:00Z", content: CLAIM },
          { card_id: "2", role: "informant", source: "the dock memo", status: "shared_source", score: 0.95, created_at: "2026-12-02T04:00:00Z", content: CLAIM },
          { card_id: "3", role: null, source: null, status: "board_copy", score: 0.97, created_at: "2026-12-02T04:00:00Z", content: CLAIM },
        ],
        support: 3,
        leave_one_out: 2,
        min_support: 2,
        margin: 0,
        contradictions: 0,
        trust: "medium",
        decision: "qualifies",
        finding_id: null,
        ...overrides,
      },
    ],
  };
}

describe("FindingsPanel", () => {
  it("shows each contributor's check, the leave-one-out bar, and promotes a qualifying claim", async () => {
    const evaluate = vi.fn().mockResolvedValue(evaluation());
    const promote = vi.fn().mockResolvedValue({});
    const list = vi.fn().mockResolvedValue({ findings: [] });
    renderWithI18n(<FindingsPanel claims={[CLAIM]} refreshKey="1" evaluate={evaluate} promote={promote} list={list} />);
    fireEvent.change(screen.getByLabelText(/Claim/), { target: { value: CLAIM } });
    fireEvent.click(screen.getByRole("button", { name: "Evaluate" }));
    const result = await screen.findByTestId("finding-claim");
    expect(evaluate).toHaveBeenCalledWith(CLAIM);
    expect(within(result).getByText(/told by the night porter/)).toBeTruthy();
    expect(within(result).getByText(/same source, counted once/)).toBeTruthy();
    expect(within(result).getByText(/never a contributor/)).toBeTruthy();
    expect(within(result).getByRole("img").getAttribute("aria-label")).toContain("2 left");
    fireEvent.click(within(result).getByTestId("promote-finding"));
    await waitFor(() => expect(promote).toHaveBeenCalledWith(CLAIM));
  });

  it("offers no promotion for a claim that does not qualify, and lists a withdrawn finding without its text", async () => {
    const evaluate = vi.fn().mockResolvedValue(evaluation({ decision: "not_qualified", leave_one_out: 1, margin: -1 }));
    const withdrawn = {
      id: "f1", state: "withdrawn" as const, claim: null, public_card_id: null, support: 3, leave_one_out: 2, min_support: 2,
      margin: 0, contradictions: 0, trust: "medium" as const, review_at: "2027-01-01", scope: "bulletin_board" as const,
      promoted_at: "2026-12-02T04:00:00Z", withdrawn_at: "2026-12-02T04:05:00Z",
    };
    const list = vi.fn().mockResolvedValue({ findings: [withdrawn] });
    renderWithI18n(<FindingsPanel claims={[]} refreshKey="1" evaluate={evaluate} promote={vi.fn()} list={list} />);
    expect((await screen.findByTestId("findings-list")).textContent).toContain("Withdrawn: erasure removed its support");
    fireEvent.click(screen.getByRole("button", { name: "Propose claims" }));
    const result = await screen.findByTestId("finding-claim");
    expect(evaluate).toHaveBeenCalledWith(undefined);
    expect(within(result).queryByTestId("promote-finding")).toBeNull();
    expect(within(result).getByText("does not qualify")).toBeTruthy();
  });
});
