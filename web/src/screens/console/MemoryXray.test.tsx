import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FixedLanguage } from "../../i18n/I18n";
import { hit, miss, trace } from "../../test/fixtures";
import { renderWithI18n } from "../../test/render";
import { MemoryXray } from "./MemoryXray";

afterEach(cleanup);

describe("<MemoryXray>", () => {
  it("answers 'why does the detective not know?': verdict, searched lanes, greyed unsearched lanes, one context group", () => {
    renderWithI18n(
      <MemoryXray
        role="detective"
        cardCounts={{ informant: 2, suspect: 2 }}
        trace={trace({
          misses: [miss("d1", "detective", 0.21), miss("ctx", "detective", 0.88, "derived_context"), miss("ctx2", "detective", 0.7, "derived_context"), miss("d2", "detective", -0.1)],
        })}
      />,
    );
    expect(screen.getByTestId("xray-verdict").textContent).toContain("Nothing above the threshold in Detective's memory + Bulletin board");
    expect(screen.getByText(/Best candidate scored 0\.21; a hit needs 0\.35\./)).toBeTruthy(); // never the session record
    expect(screen.getByTestId("xray-lane-detective").getAttribute("data-searched")).toBe("true");
    expect(screen.getByTestId("xray-lane-bulletin_board").getAttribute("data-searched")).toBe("true");
    expect(screen.getByTestId("xray-lane-informant").getAttribute("data-searched")).toBe("false");
    expect(screen.getByText("not searched — private to the Informant · 2 cards")).toBeTruthy();
    expect(screen.getAllByTestId("xray-context")).toHaveLength(1);
    expect(screen.getByText("2 matched — context, never evidence")).toBeTruthy();
    expect(screen.getByTestId("xray-lane-detective").querySelector('[data-card-id="ctx"]')).toBeNull();
    expect(screen.getByText("threshold 0.35")).toBeTruthy();
    expect(screen.getByText("-0.10", { selector: "text" })).toBeTruthy();
    expect(screen.getByTestId("xray-latency").textContent).toBe("42 ms");
    const legend = [...screen.getByTestId("xray-legend").querySelectorAll("[data-entry]")].map((entry) => entry.getAttribute("data-entry"));
    expect(legend).toEqual(["miss", "context", "not_searched"]);
  });

  it("names the part of the coverage rule that held a candidate back, in the table and the mark's title", () => {
    const held = { ...miss("d1", "detective", 0.39, "uncertain"), rule: "contradiction" as const };
    renderWithI18n(<MemoryXray role="detective" trace={trace({ threshold: 0.4, borderline_floor: 0.3, misses: [held, miss("d2", "detective", 0.1)] })} />);
    const rules = screen.getAllByTestId("xray-rule");
    expect(rules).toHaveLength(1);
    expect(rules[0]?.textContent).toContain("held back: the question names another of the same kind");
    const mark = screen.getByTestId("xray-lane-detective").querySelector('[data-card-id="d1"] title');
    expect(mark?.textContent).toContain("held back: the question names another of the same kind");
  });

  it("labels a borderline miss with its exact score", () => {
    renderWithI18n(<MemoryXray role="detective" trace={trace({ threshold: 0.4, borderline_floor: 0.3, misses: [miss("d1", "detective", 0.395)] })} />);
    expect(screen.getByText("0.395 — just below", { selector: "text" })).toBeTruthy();
    expect(screen.getByText(/Best candidate scored 0\.395; a hit needs 0\.400\./)).toBeTruthy();
  });

  it("places marks on the 0..1 axis: the threshold and a hit at their scores", () => {
    renderWithI18n(<MemoryXray role="detective" trace={trace({ threshold: 0.5, hits: [hit("b1", "bulletin_board", 1)] })} />);
    const threshold = screen.getByTestId("xray-threshold");
    const hitMark = screen.getByTestId("xray-lane-bulletin_board").querySelector('[data-card-id="b1"] circle');
    expect(Number(threshold.getAttribute("x1"))).toBe(575); // axis 180..970 at the default 1000 px width
    expect(Number(hitMark?.getAttribute("cx"))).toBe(970);
    expect(screen.getByTestId("xray-verdict").textContent).toContain("Found on the bulletin board");
  });

  it("invites a question to the selected role before its first retrieval", () => {
    renderWithI18n(<MemoryXray role="informant" trace={null} />);
    expect(screen.getByText(/No question to the Informant yet/)).toBeTruthy();
  });
  it("labels the board copy of an own card as a duplicate in both languages (asked again after publishing)", () => {
    const asked = trace({
      role: "informant",
      searched_scopes: ["informant", "bulletin_board"],
      hits: [hit("own", "informant", 0.8)],
      misses: [miss("copy", "bulletin_board", 0.8, "duplicate")],
    });
    renderWithI18n(<MemoryXray role="informant" trace={asked} />);
    const copy = screen.getByTestId("xray-lane-bulletin_board").querySelector('[data-card-id="copy"]');
    expect(copy?.getAttribute("data-kind")).toBe("duplicate");
    expect(copy?.textContent).toContain("duplicate of a card already counted");
    cleanup();
    renderWithI18n(
      <FixedLanguage language="zh">
        <MemoryXray role="informant" trace={asked} />
      </FixedLanguage>,
    );
    const copyZh = screen.getByTestId("xray-lane-bulletin_board").querySelector('[data-card-id="copy"]');
    expect(copyZh?.textContent).toContain("重复：同一内容已计入");
  });

  it("names the keys the request held, in the interface language", () => {
    const asked = trace({ grant: { purpose: "interrogation", keys: ["detective", "bulletin_board"] } });
    renderWithI18n(<MemoryXray role="detective" trace={asked} />);
    expect(screen.getByTestId("grant-keys").textContent).toContain("Keys in this request: Detective, Bulletin board");
    cleanup();
    renderWithI18n(
      <FixedLanguage language="zh">
        <MemoryXray role="detective" trace={asked} />
      </FixedLanguage>,
    );
    expect(screen.getByTestId("grant-keys").textContent).toContain("本次请求持有的钥匙：侦探、公告板");
  });

  it("draws the presenter act's locked rows on the other compartments' lanes: space and score, nothing else", () => {
    const act = trace({
      grant: { purpose: "interrogation", keys: ["detective", "bulletin_board"] },
      unfiltered: true,
      locked: [
        { space: "informant", score: 0.0662 },
        { space: "informant", score: 0.0662 },
        { space: "suspect", score: 0.0549 },
      ],
      misses: [miss("d1", "detective", 0.04)],
    });
    renderWithI18n(<MemoryXray role="detective" cardCounts={{ informant: 2, suspect: 2 }} trace={act} />);
    expect(screen.getByTestId("xray-unfiltered").textContent).toContain("asked without the space filter");
    const informant = screen.getByTestId("xray-lane-informant");
    expect(informant.getAttribute("data-locked")).toBe("2");
    expect(informant.textContent).toContain("locked: 2");
    expect(informant.textContent).toContain("another compartment — no key in this request");
    expect(informant.textContent).not.toContain("not searched");
    const locks = screen.getAllByTestId("xray-lock");
    expect(locks.map((lock) => [lock.getAttribute("data-space"), lock.getAttribute("data-count")])).toEqual([
      ["informant", "2"],
      ["suspect", "1"],
    ]);
    expect(locks[0]?.querySelector("title")?.textContent).toBe("Informant · 0.07 ×2 · another compartment — no key in this request");
    const rows = screen.getAllByTestId("xray-locked-row");
    expect(rows.map((row) => row.getAttribute("data-space"))).toEqual(["informant", "informant", "suspect"]);
    expect(rows[0]?.textContent).toBe("Informant's memory—0.07 another compartment — no key in this request—");
    const legend = [...screen.getByTestId("xray-legend").querySelectorAll("[data-entry]")].map((entry) => entry.getAttribute("data-entry"));
    expect(legend).toEqual(["miss", "locked"]);
  });
});
