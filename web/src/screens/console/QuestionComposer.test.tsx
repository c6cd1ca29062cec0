import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/client";
import { I18nProvider } from "../../i18n/I18n";
import { renderWithI18n } from "../../test/render";
import { QuestionComposer } from "./QuestionComposer";

afterEach(cleanup);

describe("<QuestionComposer> and the presenter act", () => {
  it("offers no switch when the server does not offer the act", () => {
    renderWithI18n(<QuestionComposer role="detective" presets={[]} ask={vi.fn()} />);
    expect(screen.queryByRole("switch")).toBeNull();
  });

  it("offers the switch off, and says the sentence for the audience once it is on", () => {
    const onChange = vi.fn();
    const { rerender } = renderWithI18n(<QuestionComposer role="detective" presets={[]} ask={vi.fn()} act={{ on: false, onChange }} />);
    const toggle = screen.getByRole("switch", { name: "Presenter act: ask without the space filter" });
    expect((toggle as HTMLInputElement).checked).toBe(false);
    expect(screen.queryByTestId("act-sentence")).toBeNull();
    fireEvent.click(toggle);
    expect(onChange).toHaveBeenCalledWith(true);
    rerender(
      <I18nProvider>
        <QuestionComposer role="detective" presets={[]} ask={vi.fn()} act={{ on: true, onChange }} />
      </I18nProvider>,
    );
    expect(screen.getByTestId("act-sentence").textContent).toContain(
      "This question runs without the space filter: only the compartment keys stand between the Detective and the other roles.",
    );
  });

  it("says so when the server has turned the act off", async () => {
    const ask = vi.fn().mockRejectedValue(new ApiError(403, "PRESENTER_ACTS_OFF", "off", null));
    renderWithI18n(<QuestionComposer role="detective" presets={[]} ask={ask} act={{ on: true, onChange: vi.fn() }} />);
    fireEvent.change(screen.getByLabelText("Question"), { target: { value: "What is the safe combination?" } });
    fireEvent.click(screen.getByRole("button", { name: "Ask" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("The presenter act is off on this server."));
  });
});
