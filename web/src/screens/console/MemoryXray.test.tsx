import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FixedLanguage } from "../../i18n/I18n";
import { hit, miss, trace } from "../../test/fixtures";
import { renderWithI18n } from "../../test/render";
import { MemoryXray } from "./MemoryXray";

afterEach(cleanup);

describe("<MemoryXray>", () => {
  it("answers 'why does the detective not know?' with a verdict line, lanes and a threshold line", () => {
    renderWithI18n(
      <MemoryXray
        trace={trace({
          misses: [miss("d1", "detective", 0.21), miss("ctx", "detective", 0.88, "derived_context"), miss("d2", "detective", -0.1)],
        })}
      />,
    );
    expect(screen.getByTestId("xray-verdict").textContent).toContain("Nothing above the threshold in Detective + Bulletin board");
    expect(screen.getByText(/Best candidate scored 0\.21; a hit needs 0\.35\./)).toBeTruthy(); // never the session record
    expect(screen.getByText(/1 session records matched: context, never evidence\./)).toBeTruthy();
    expect(screen.getByTestId("xray-lane-detective")).toBeTruthy();
    expect(screen.getByTestId("xray-lane-bulletin_board")).toBeTruthy();
    expect(screen.getByText("threshold 0.35")).toBeTruthy();
    expect(screen.getByText("context, not evidence", { selector: "text" })).toBeTruthy();
    expect(screen.getByText("-0.10", { selector: "text" })).toBeTruthy();
    expect(screen.getByTestId("xray-latency").textContent).toBe("42 ms");
  });

  it("places marks on the 0..1 axis: the threshold and a hit at their scores", () => {
    renderWithI18n(<MemoryXray trace={trace({ threshold: 0.5, hits: [hit("b1", "bulletin_board", 1)] })} />);
    const threshold = screen.getByTestId("xray-threshold");
    const hitMark = screen.getByTestId("xray-lane-bulletin_board").querySelector('[data-card-id="b1"] circle');
    expect(Number(threshold.getAttribute("x1"))).toBe(575); // axis 180..970 at the default 1000 px width
    expect(Number(hitMark?.getAttribute("cx"))).toBe(970);
    expect(screen.getByTestId("xray-verdict").textContent).toContain("Found on the bulletin board");
  });

  it("invites a question before the first retrieval", () => {
    renderWithI18n(<MemoryXray trace={null} />);
    expect(screen.getByText(/No retrieval yet/)).toBeTruthy();
  });
  it("labels the board copy of an own card as a duplicate in both languages (asked again after publishing)", () => {
    const asked = trace({
      role: "informant",
      searched_scopes: ["informant", "bulletin_board"],
      hits: [hit("own", "informant", 0.8)],
      misses: [miss("copy", "bulletin_board", 0.8, "duplicate")],
    });
    renderWithI18n(<MemoryXray trace={asked} />);
    const copy = screen.getByTestId("xray-lane-bulletin_board").querySelector('[data-card-id="copy"]');
    expect(copy?.getAttribute("data-kind")).toBe("duplicate");
    expect(copy?.textContent).toContain("duplicate of a card already counted");
    cleanup();
    renderWithI18n(
      <FixedLanguage language="zh">
        <MemoryXray trace={asked} />
      </FixedLanguage>,
    );
    const copyZh = screen.getByTestId("xray-lane-bulletin_board").querySelector('[data-card-id="copy"]');
    expect(copyZh?.textContent).toContain("重复：同一内容已计入");
  });
});
