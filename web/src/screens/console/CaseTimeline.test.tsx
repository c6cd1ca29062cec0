import { cleanup, fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FixedLanguage, I18nProvider } from "../../i18n/I18n";
import { timelineRows } from "../../state/caseRecord";
import { interrogation, sealedCrossExamination } from "../../test/fixtures";
import { renderWithI18n } from "../../test/render";
import { CaseTimeline } from "./CaseTimeline";

afterEach(cleanup);

describe("<CaseTimeline>", () => {
  const rows = timelineRows([sealedCrossExamination(2), interrogation(1, "detective", "unknown")]);

  it("lists entries newest first; a sealed cross-examination is marked sealed, its conclusion never in the list", () => {
    renderWithI18n(<CaseTimeline caseId="case-1" rows={rows} openId={null} onOpen={() => undefined} />);
    const entries = screen.getAllByRole("button");
    const downloads = screen.getAllByRole("link").map((link) => link.getAttribute("href"));
    expect(downloads).toEqual(["/api/cases/case-1/record/export?format=json", "/api/cases/case-1/record/export?format=markdown"]);
    expect(entries.map((entry) => entry.getAttribute("data-number"))).toEqual(["2", "1"]);
    expect(entries[0]?.textContent).toContain("Cross-examination · Informant + Suspect");
    expect(within(entries[0]!).getByText(/Sealed/)).toBeTruthy();
    expect(entries[0]?.textContent).not.toContain("joint");
    expect(entries[1]?.textContent).toContain("Interrogation · Detective");
    expect(entries[1]?.textContent).toContain("Unknown");
    expect(entries[1]?.textContent).toContain("question 1");
  });

  it("opens the entry that was clicked, and speaks Chinese with the interface", () => {
    const onOpen = vi.fn();
    renderWithI18n(
      <FixedLanguage language="zh">
        <CaseTimeline caseId="case-1" rows={rows} openId={1} onOpen={onOpen} />
      </FixedLanguage>,
    );
    const first = screen.getByText("第 1 条").closest("button")!;
    expect(first.getAttribute("aria-expanded")).toBe("true");
    expect(first.textContent).toContain("审问侦探");
    fireEvent.click(first);
    expect(onOpen).toHaveBeenCalledWith(1);
    expect(screen.getByText(/已封存/)).toBeTruthy();
  });

  it("offers older entries at the end of the list while there are any, busy while a page loads", () => {
    const onLoadMore = vi.fn();
    const { rerender } = renderWithI18n(<CaseTimeline caseId="case-1" rows={rows} openId={null} onOpen={() => undefined} hasMore onLoadMore={onLoadMore} />);
    const more = within(screen.getByTestId("timeline-more")).getByRole("button", { name: "Show older entries" });
    fireEvent.click(more);
    expect(onLoadMore).toHaveBeenCalledTimes(1);
    rerender(
      <I18nProvider>
        <CaseTimeline caseId="case-1" rows={rows} openId={null} onOpen={() => undefined} hasMore loadingOlder onLoadMore={onLoadMore} />
      </I18nProvider>,
    );
    const busy = within(screen.getByTestId("timeline-more")).getByRole("button", { name: "Loading older entries…" });
    expect(busy.hasAttribute("disabled")).toBe(true);
    expect(screen.getByRole("list").getAttribute("aria-busy")).toBe("true");
    rerender(
      <I18nProvider>
        <CaseTimeline caseId="case-1" rows={rows} openId={null} onOpen={() => undefined} hasMore={false} onLoadMore={onLoadMore} />
      </I18nProvider>,
    );
    expect(screen.queryByTestId("timeline-more")).toBeNull();
  });

  it("says what it is for before the first question", () => {
    renderWithI18n(<CaseTimeline caseId="case-1" rows={[]} openId={null} onOpen={() => undefined} />);
    expect(screen.getByText(/Nothing asked yet/)).toBeTruthy();
  });
});
