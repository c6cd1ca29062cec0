import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CrossExaminationResult } from "../../api/types";
import { renderWithI18n } from "../../test/render";
import { CrossExamination } from "./CrossExamination";

afterEach(cleanup);

const sealed: CrossExaminationResult = {
  roles: ["informant", "suspect"],
  results: [
    { role: "informant", answer: "From own memory: in the cellar.", certainty: "known", audience: "informant", trace: {} as never },
    { role: "suspect", answer: "From own memory: in the attic.", certainty: "known", audience: "suspect", trace: {} as never },
  ],
  conclusion: {
    text: "Together: cellar and attic.",
    certainty: "known",
    audience: "sealed",
    sealed: true,
    provenance: [
      { card_id: "101", space: "informant" },
      { card_id: "202", space: "suspect" },
    ],
  },
};

describe("<CrossExamination>", () => {
  it("needs two roles before it asks the server", () => {
    const crossExamine = vi.fn();
    renderWithI18n(<CrossExamination presets={[]} crossExamine={crossExamine} />);
    fireEvent.click(screen.getByLabelText(/Suspect/));
    fireEvent.change(screen.getByLabelText("Question for all of them"), { target: { value: "Where?" } });
    fireEvent.click(screen.getByRole("button", { name: "Cross-examine" }));
    expect(screen.getByRole("alert").textContent).toBe("Pick at least two roles.");
    expect(crossExamine).not.toHaveBeenCalled();
  });

  it("shows a sealed conclusion to the operator as sealed, with its provenance", async () => {
    const crossExamine = vi.fn().mockResolvedValue(sealed);
    renderWithI18n(<CrossExamination presets={[]} crossExamine={crossExamine} />);
    fireEvent.change(screen.getByLabelText("Question for all of them"), { target: { value: "Where is it?" } });
    fireEvent.click(screen.getByRole("button", { name: "Cross-examine" }));
    const card = await waitFor(() => screen.getByTestId("sealed-conclusion"));
    expect(crossExamine).toHaveBeenCalledWith(["informant", "suspect"], "Where is it?");
    expect(card.textContent).toContain("Sealed conclusion");
    expect(card.textContent).toContain("Audience: sealed");
    expect(card.textContent).toContain("101 (Informant)");
    expect(card.textContent).toContain("202 (Suspect)");
  });
});
