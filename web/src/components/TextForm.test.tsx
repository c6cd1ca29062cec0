import { act, cleanup, fireEvent, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/client";
import { LIMITS } from "../api/rules";
import { en } from "../i18n/strings";
import { translate } from "../i18n/translate";
import { renderWithI18n } from "../test/render";
import { TextForm } from "./TextForm";
import { explainRefusal, useSubmission } from "./useSubmission";

afterEach(cleanup);

const t = (key: Parameters<typeof translate>[1], params?: Parameters<typeof translate>[2]) => translate("en", key, params);

/** A call the test settles when it chooses. */
function pendingCall() {
  const settle: { resolve: () => void; reject: (error: unknown) => void } = { resolve: () => undefined, reject: () => undefined };
  const call = vi.fn(
    () =>
      new Promise<void>((resolve, reject) => {
        settle.resolve = resolve;
        settle.reject = reject;
      }),
  );
  return { call, settle };
}

interface HarnessProps {
  call: (text: string) => Promise<void>;
  keepsFocusWhileBusy?: boolean;
  clearsOnAttempt?: boolean;
  rows?: number;
  counted?: boolean;
  notice?: string | null;
}

/** One form as a console screen writes it: the submission, the text, a refusal for empty text. */
function Harness({ call, keepsFocusWhileBusy, clearsOnAttempt, rows, counted, notice }: HarnessProps) {
  const [text, setText] = useState("");
  const submission = useSubmission({ explain: (caught) => explainRefusal(t, caught, { UNSAFE_INPUT: "ask.unsafe" }), clearsOnAttempt });
  const over = [...text].length > LIMITS.question;
  return (
    <TextForm
      id="field"
      label="Question"
      value={text}
      onChange={setText}
      maxLength={counted ? undefined : LIMITS.question}
      rows={rows}
      described={counted}
      counter={counted ? { text: `${[...text].length} / ${LIMITS.question}`, over } : undefined}
      disabled={over}
      submission={submission}
      onSubmit={() => (text.trim() === "" ? submission.refuse("Empty.") : void submission.run(() => call(text.trim())))}
      submitLabel="Send"
      busyLabel="Sending…"
      keepsFocusWhileBusy={keepsFocusWhileBusy}
      notice={notice}
      actions={<button type="button">Other</button>}
    >
      <p data-testid="own-control">own control</p>
    </TextForm>
  );
}

const field = () => screen.getByLabelText("Question") as HTMLInputElement;
const button = () => screen.getByRole("button", { name: /^Send/ }) as HTMLButtonElement;

describe("<TextForm>", () => {
  it("submits on the button and on the form's own submit (Enter), with the trimmed text", () => {
    const call = vi.fn().mockResolvedValue(undefined);
    renderWithI18n(<Harness call={call} />);
    fireEvent.change(field(), { target: { value: "  where?  " } });
    fireEvent.click(button());
    expect(call).toHaveBeenCalledWith("where?");
    expect(fireEvent.submit(field().form as HTMLFormElement)).toBe(false); // the page never reloads
  });

  it("reads its limit from the contract and lays out label, field, button, its own actions and controls, line", () => {
    renderWithI18n(<Harness call={vi.fn()} />);
    expect(field().maxLength).toBe(LIMITS.question);
    expect(field().type).toBe("text");
    const form = field().form as HTMLFormElement;
    const order = [...form.querySelectorAll("label, input, button, [data-testid=own-control], p[role]")].map(
      (element) => element.textContent || element.tagName,
    );
    expect(order).toEqual(["Question", "INPUT", "Send", "Other", "own control", "P"]);
    expect(screen.getByRole("alert").id).toBe("field-status");
    expect(field().getAttribute("aria-describedby")).toBeNull();
  });

  it("is busy while its call runs: the busy label, the button disabled, a second submit refused", async () => {
    const { call, settle } = pendingCall();
    renderWithI18n(<Harness call={call} />);
    fireEvent.change(field(), { target: { value: "where?" } });
    fireEvent.click(button());
    expect(button().textContent).toBe("Sending…");
    expect(button().disabled).toBe(true);
    expect(button().hasAttribute("aria-disabled")).toBe(false);
    fireEvent.submit(field().form as HTMLFormElement);
    expect(call).toHaveBeenCalledTimes(1);
    await act(async () => settle.resolve());
    expect(button().textContent).toBe("Send");
    expect(button().disabled).toBe(false);
  });

  it("keeps the button focusable while busy where the form asks for it (aria-disabled)", async () => {
    const { call, settle } = pendingCall();
    renderWithI18n(<Harness call={call} keepsFocusWhileBusy />);
    fireEvent.change(field(), { target: { value: "where?" } });
    button().focus();
    fireEvent.click(button());
    expect(button().getAttribute("aria-disabled")).toBe("true");
    expect(button().disabled).toBe(false);
    expect(document.activeElement).toBe(button());
    fireEvent.click(button());
    expect(call).toHaveBeenCalledTimes(1);
    await act(async () => settle.resolve());
    expect(button().getAttribute("aria-disabled")).toBe("false");
  });

  it("says a refusal and a failure on its alert line, in the form's words for a known code, and clears it on the next attempt", async () => {
    const { call, settle } = pendingCall();
    renderWithI18n(<Harness call={call} />);
    fireEvent.click(button());
    expect(screen.getByRole("alert").textContent).toBe("Empty.");
    expect(call).not.toHaveBeenCalled();
    fireEvent.change(field(), { target: { value: "call 555-0100" } });
    fireEvent.click(button());
    expect(screen.getByRole("alert").textContent).toBe("");
    await act(async () => settle.reject(new ApiError(400, "UNSAFE_INPUT", "rejected: call 555-0100", null)));
    expect(screen.getByRole("alert").textContent).toBe(en["ask.unsafe"]);
    fireEvent.click(button());
    await act(async () => settle.reject(new ApiError(500, "INTERNAL", "boom", null)));
    expect(screen.getByRole("alert").textContent).toBe(t("error.generic", { code: "INTERNAL", message: "boom" }));
  });

  it("keeps its line through a new attempt where the form clears it on editing instead", async () => {
    const { call, settle } = pendingCall();
    renderWithI18n(<Harness call={call} clearsOnAttempt={false} />);
    fireEvent.change(field(), { target: { value: "where?" } });
    fireEvent.click(button());
    await act(async () => settle.reject(new ApiError(400, "UNSAFE_INPUT", "no", null)));
    fireEvent.click(button());
    expect(screen.getByRole("alert").textContent).toBe(en["ask.unsafe"]);
    await act(async () => settle.resolve());
    expect(screen.getByRole("alert").textContent).toBe("");
  });

  it("has a status line where the form gives notices, an alert once something fails", async () => {
    const call = vi.fn().mockRejectedValue(new ApiError(400, "UNSAFE_INPUT", "no", null));
    const { rerender } = renderWithI18n(<Harness call={call} notice={null} />);
    expect(screen.getByRole("status").className).toBe("form-ok");
    expect(screen.queryByRole("alert")).toBeNull();
    rerender(<Harness call={call} notice="Saved." />);
    expect(screen.getByRole("status").textContent).toBe("Saved.");
    fireEvent.change(field(), { target: { value: "where?" } });
    await act(async () => fireEvent.click(button()));
    expect(screen.getByRole("alert").className).toBe("form-error");
    expect(screen.getByRole("alert").textContent).toBe(en["ask.unsafe"]);
  });

  it("counts a text area against its limit, disabled while over it, and describes the field by counter and line", () => {
    renderWithI18n(<Harness call={vi.fn()} rows={3} counted />);
    expect(field().tagName).toBe("TEXTAREA");
    expect((field() as unknown as HTMLTextAreaElement).rows).toBe(3);
    expect(field().getAttribute("aria-describedby")).toBe("field-counter field-status");
    const form = field().form as HTMLFormElement;
    const order = [...form.querySelectorAll("textarea, [data-testid=own-control], .counter, button")].map((element) => element.tagName);
    expect(order).toEqual(["TEXTAREA", "P", "SPAN", "BUTTON", "BUTTON"]); // own controls, then counter and buttons
    fireEvent.change(field(), { target: { value: "x".repeat(LIMITS.question + 1) } });
    const counter = document.getElementById("field-counter") as HTMLElement;
    expect(counter.textContent).toBe(`${LIMITS.question + 1} / ${LIMITS.question}`);
    expect(counter.className).toBe("counter counter--over");
    expect(button().disabled).toBe(true);
    fireEvent.change(field(), { target: { value: "x" } });
    expect(document.getElementById("field-counter")?.className).toBe("counter");
    expect(button().disabled).toBe(false);
  });

  it("offers its suggestions as a list the field names", () => {
    const submission = { busy: null, error: null, refuse: vi.fn(), run: vi.fn() };
    renderWithI18n(
      <TextForm id="claim" label="Claim" value="" onChange={vi.fn()} suggestions={["a", "b"]} submission={submission} onSubmit={vi.fn()} submitLabel="Go" busyLabel="Going…" />,
    );
    const list = document.getElementById((screen.getByLabelText("Claim") as HTMLInputElement).getAttribute("list") ?? "");
    expect([...(list?.querySelectorAll("option") ?? [])].map((option) => option.value)).toEqual(["a", "b"]);
  });
});

describe("explainRefusal", () => {
  it("uses the form's sentence only for a code it names, and never an inherited property", () => {
    expect(explainRefusal(t, new ApiError(400, "UNSAFE_INPUT", "x", null), { UNSAFE_INPUT: "ask.unsafe" })).toBe(en["ask.unsafe"]);
    expect(explainRefusal(t, new ApiError(400, "toString", "x", null), {})).toBe(t("error.generic", { code: "toString", message: "x" }));
    expect(explainRefusal(t, new Error("offline"), { UNSAFE_INPUT: "ask.unsafe" })).toBe(t("error.generic", { code: "CLIENT", message: "Error: offline" }));
  });
});
