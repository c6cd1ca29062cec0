import type { FormEvent, ReactNode } from "react";
import type { Submission } from "./useSubmission";

interface TextFormProps<Step extends string> {
  /** The field's id; its suggestions, counter and line take theirs from it. */
  id: string;
  label: string;
  /** Read by assistive technology only, where the heading already says what the field is for. */
  labelHidden?: boolean;
  value: string;
  onChange: (value: string) => void;
  /** The field's character limit, from the generated contract (`api/rules.ts`). */
  maxLength?: number;
  /** A text area of so many rows: it stands alone, the form's own controls under it, the button row last. */
  rows?: number;
  /** What the field offers as it is typed (a datalist). */
  suggestions?: readonly string[];
  /** The field's description names its counter and its line. */
  described?: boolean;
  invalid?: boolean;
  /** A count beside the button, marked when the text is over its limit. */
  counter?: { text: string; over: boolean };
  submission: Submission<Step>;
  onSubmit: () => void;
  submitLabel: string;
  busyLabel: string;
  submitClassName?: string;
  /** The button stays focusable while busy (`aria-disabled`; the submission refuses a second call) instead of `disabled`. */
  keepsFocusWhileBusy?: boolean;
  /** Disabled whatever the submission says (a text over its limit). */
  disabled?: boolean;
  /** What the form says when all went well; a form that passes one (null while quiet) has a status line, not an alert. */
  notice?: string | null;
  /** The form's own controls before the field. */
  before?: ReactNode;
  /** The form's own buttons after the submit button, in its row. */
  actions?: ReactNode;
  /** The form's own controls after the field. */
  children?: ReactNode;
}

/** A console form around one text field: label, field, submit button with its busy state, and the line that
 * says why a call failed (or what it did). Enter submits a one-line field, as a browser form does. */
export function TextForm<Step extends string = never>(props: TextFormProps<Step>) {
  const { id, submission, rows, counter, notice, described = false } = props;
  const busy = submission.busy !== null;
  const quiet = submission.error === null && notice !== undefined;
  const describedBy = described ? [counter && `${id}-counter`, `${id}-status`].filter(Boolean).join(" ") : undefined;
  const field = {
    id,
    value: props.value,
    maxLength: props.maxLength,
    "aria-invalid": props.invalid,
    "aria-describedby": describedBy,
    onChange: (event: { target: { value: string } }) => props.onChange(event.target.value),
  };

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!busy) props.onSubmit();
  }

  const listId = props.suggestions && `${id}-list`;
  /** The button's row: after a one-line field, which it shares; under a text area and the form's own controls. */
  const row = (oneLineField: ReactNode) => (
    <div className="form-row">
      {oneLineField}
      {counter && (
        <span id={`${id}-counter`} className={counter.over ? "counter counter--over" : "counter"}>
          {counter.text}
        </span>
      )}
      <button
        type="submit"
        className={props.submitClassName ?? "button button--primary"}
        disabled={props.keepsFocusWhileBusy ? props.disabled : busy || props.disabled}
        aria-disabled={props.keepsFocusWhileBusy ? busy : undefined}
      >
        {submission.busy === "submit" ? props.busyLabel : props.submitLabel}
      </button>
      {props.actions}
    </div>
  );

  return (
    <form onSubmit={submit} className="stacked-form">
      {props.before}
      <label htmlFor={id} className={props.labelHidden ? "visually-hidden" : undefined}>
        {props.label}
      </label>
      {rows !== undefined ? (
        <>
          <textarea rows={rows} {...field} />
          {props.children}
          {row(null)}
        </>
      ) : (
        <>
          {row(<input type="text" className="grow" list={listId} {...field} />)}
          {listId && (
            <datalist id={listId}>
              {props.suggestions?.map((suggestion) => (
                <option key={suggestion} value={suggestion} />
              ))}
            </datalist>
          )}
          {props.children}
        </>
      )}
      <p id={`${id}-status`} role={quiet ? "status" : "alert"} className={quiet ? "form-ok" : "form-error"}>
        {submission.error ?? notice}
      </p>
    </form>
  );
}
