import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/client";
import { PREFERENCE_LIMITS } from "../../api/rules";
import type { MemoryPolicy } from "../../api/types";
import { card } from "../../test/fixtures";
import { renderWithI18n } from "../../test/render";
import { whisperLength, WhisperBox } from "./WhisperBox";

afterEach(cleanup);

const textbox = () => screen.getByLabelText("Secret to whisper");
const submit = () => screen.getByRole("button", { name: "Whisper" });

describe("<WhisperBox>", () => {
  it("counts trimmed characters (not UTF-16 units) and blocks more than 280", () => {
    expect(whisperLength("  密码 0427 😀  ")).toBe(9);
    renderWithI18n(<WhisperBox role="informant" whisper={vi.fn()} />);
    fireEvent.change(textbox(), { target: { value: "x".repeat(281) } });
    expect(screen.getByText(/281 \/ 280/)).toBeTruthy();
    expect((submit() as HTMLButtonElement).disabled).toBe(true);
  });

  it("rejects an empty whisper without calling the server", () => {
    const whisper = vi.fn();
    renderWithI18n(<WhisperBox role="informant" whisper={whisper} />);
    fireEvent.change(textbox(), { target: { value: "   " } });
    fireEvent.click(submit());
    expect(screen.getByRole("alert").textContent).toBe("Write something first.");
    expect(whisper).not.toHaveBeenCalled();
  });

  it("shows UNSAFE_INPUT inline and never repeats the text", async () => {
    const whisper = vi.fn().mockRejectedValue(new ApiError(400, "UNSAFE_INPUT", "rejected: call 555-0100", null));
    renderWithI18n(<WhisperBox role="detective" whisper={whisper} />);
    fireEvent.change(textbox(), { target: { value: "call 555-0100" } });
    fireEvent.click(submit());
    await waitFor(() => expect(screen.getByRole("alert").textContent).toMatch(/rejected by the safety check/));
    expect(screen.getByRole("alert").textContent).not.toContain("555-0100");
  });

  it("sends the trimmed text, clears the box and says where the card went (no id)", async () => {
    const whisper = vi.fn().mockResolvedValue(card({ id: "w1", space: "suspect" }));
    renderWithI18n(<WhisperBox role="suspect" whisper={whisper} />);
    fireEvent.change(textbox(), { target: { value: "  red van  " } });
    fireEvent.click(submit());
    await waitFor(() => expect(screen.getByRole("status").textContent).toBe("Whispered: the card is now in Suspect's private memory."));
    expect(whisper).toHaveBeenCalledWith("red van");
    expect((textbox() as HTMLTextAreaElement).value).toBe("");
  });
});

describe("<WhisperBox> with the memory policy", () => {
  const policy: MemoryPolicy = {
    writable_types: ["user_preference", "long_term_knowledge", "operational_memory"],
    default_type: "long_term_knowledge",
    preference_keys: ["answer_style", "dietary_preference"],
  };

  it("offers the types the operator may write and, for a preference, its keys", async () => {
    const whisper = vi.fn().mockResolvedValue(card({ id: "p1", space: "informant" }));
    renderWithI18n(<WhisperBox role="informant" whisper={whisper} policy={policy} />);
    const typeSelect = screen.getByLabelText("Memory type") as HTMLSelectElement;
    expect([...typeSelect.options].map((o) => o.textContent)).toEqual(["user preference", "long-term knowledge", "operational memory"]);
    expect(typeSelect.value).toBe("long_term_knowledge");
    expect(screen.queryByLabelText("Preference")).toBeNull();

    fireEvent.change(typeSelect, { target: { value: "user_preference" } });
    fireEvent.change(screen.getByLabelText("Preference"), { target: { value: "dietary_preference" } });
    fireEvent.change(textbox(), { target: { value: "vegetarian" } });
    fireEvent.click(submit());
    await waitFor(() => expect(whisper).toHaveBeenCalledWith("vegetarian", "user_preference", "dietary_preference"));
  });

  it("counts a preference's value against its key's own limit", () => {
    renderWithI18n(<WhisperBox role="informant" whisper={vi.fn()} policy={policy} />);
    fireEvent.change(screen.getByLabelText("Memory type"), { target: { value: "user_preference" } });
    fireEvent.change(screen.getByLabelText("Preference"), { target: { value: "dietary_preference" } });
    fireEvent.change(textbox(), { target: { value: "v".repeat(PREFERENCE_LIMITS.dietary_preference + 1) } });
    expect(screen.getByText(new RegExp(`/ ${PREFERENCE_LIMITS.dietary_preference}`))).toBeTruthy();
    expect((submit() as HTMLButtonElement).disabled).toBe(true);
  });

  it("says a preference value its key does not take when the schema refuses it (422)", async () => {
    const whisper = vi.fn().mockRejectedValue(new ApiError(422, "VALIDATION_ERROR", "no", null));
    renderWithI18n(<WhisperBox role="informant" whisper={whisper} policy={policy} />);
    fireEvent.change(screen.getByLabelText("Memory type"), { target: { value: "user_preference" } });
    fireEvent.change(textbox(), { target: { value: "klingon" } });
    fireEvent.click(submit());
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("That value does not fit this preference."));
    expect(whisper).toHaveBeenCalledWith("klingon", "user_preference", "answer_style");
  });

  it("names the policy rule that refused a whisper", async () => {
    const whisper = vi.fn().mockRejectedValue(new ApiError(400, "PREFERENCE_VALUE_INVALID", "no", null));
    renderWithI18n(<WhisperBox role="informant" whisper={whisper} policy={policy} />);
    fireEvent.change(textbox(), { target: { value: "klingon" } });
    fireEvent.click(submit());
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("That value does not fit this preference."));
    expect(whisper).toHaveBeenCalledWith("klingon", "long_term_knowledge", undefined);
  });
});
