import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { StageRetrieval } from "../../api/types";
import { FixedLanguage } from "../../i18n/I18n";
import { renderWithI18n } from "../../test/render";
import { RetrievalSentence } from "./RetrievalSentence";

afterEach(cleanup);

const retrieval = (overrides: Partial<StageRetrieval> = {}): StageRetrieval => ({
  role: "detective",
  searched_scopes: ["detective", "bulletin_board"],
  public_hits: [],
  private_hit_count: 0,
  verdict: "unknown",
  conflicting: false,
  duration_ms: 30,
  ...overrides,
});

const act = retrieval({
  unfiltered: true,
  locked: [
    { space: "informant", score: 0.0304 },
    { space: "suspect", score: 0.0549 },
    { space: "informant", score: 0.0662 },
  ],
});

describe("<RetrievalSentence> in the presenter act", () => {
  it("shows a lock per row, per space, with its score, and the sentence for the audience", () => {
    renderWithI18n(<RetrievalSentence retrieval={act} />);
    const locked = screen.getByTestId("stage-locked");
    expect(locked.getAttribute("data-count")).toBe("3");
    expect(locked.textContent).toContain("Asked without the space filter: 3 rows of other compartments came back, all locked");
    expect(locked.textContent).toContain("another compartment — no key in this request");
    const informant = screen.getByTestId("stage-locked-informant");
    expect(informant.getAttribute("data-count")).toBe("2");
    expect(informant.querySelectorAll(".lock-icon")).toHaveLength(2);
    expect(informant.textContent).toBe("Informant0.070.03");
    expect(screen.getByTestId("stage-locked-suspect").textContent).toBe("Suspect0.05");
    expect(screen.queryByTestId("stage-locked-detective")).toBeNull();
  });

  it("speaks Chinese on a Chinese case", () => {
    renderWithI18n(
      <FixedLanguage language="zh">
        <RetrievalSentence retrieval={act} />
      </FixedLanguage>,
    );
    expect(screen.getByTestId("stage-locked").textContent).toContain("本次提问不经空间过滤：返回了其他隔间的 3 行，全部锁定");
    expect(screen.getByTestId("stage-locked-informant").textContent).toContain("线人");
  });

  it("shows nothing of the kind for an ordinary retrieval", () => {
    renderWithI18n(<RetrievalSentence retrieval={retrieval()} />);
    expect(screen.getByTestId("stage-retrieval")).toBeTruthy();
    expect(screen.queryByTestId("stage-locked")).toBeNull();
  });
});
