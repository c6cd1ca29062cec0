import { useState } from "react";
import { ApiError } from "../api/client";
import type { MessageKey } from "../i18n/strings";
import type { Translate } from "../i18n/translate";
import { describeError } from "./describeError";

/** A form's submission: what is running (one form may run more than one step) and the line's refusal. */
export interface Submission<Step extends string = never> {
  busy: Step | "submit" | null;
  error: string | null;
  /** Says why the form will not send (or, with null, takes the sentence back). */
  refuse: (message: string | null) => void;
  /** Runs one call unless another is running: busy meanwhile, its failure explained on the line. */
  run: (action: () => Promise<void>, step?: Step | "submit") => Promise<void>;
}

interface SubmissionOptions {
  /** The line's sentence for a failed call (never the text the operator typed). */
  explain: (caught: unknown) => string;
  /** False where the line outlives a new attempt and is cleared by editing instead (the whisper box). */
  clearsOnAttempt?: boolean;
}

/** The busy state and the error line every console form keeps, and the one way they run a call. */
export function useSubmission<Step extends string = never>({ explain, clearsOnAttempt = true }: SubmissionOptions): Submission<Step> {
  const [busy, setBusy] = useState<Step | "submit" | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function run(action: () => Promise<void>, step: Step | "submit" = "submit") {
    if (busy !== null) return;
    setBusy(step);
    if (clearsOnAttempt) setError(null);
    try {
      await action();
      setError(null);
    } catch (caught) {
      setError(explain(caught));
    } finally {
      setBusy(null);
    }
  }

  return { busy, error, refuse: setError, run };
}

/** The form's own sentence for a refusal it knows by code, and describeError's for any other failure. */
export function explainRefusal(t: Translate, caught: unknown, known: Readonly<Partial<Record<string, MessageKey>>>): string {
  const key = caught instanceof ApiError && Object.hasOwn(known, caught.code) ? known[caught.code] : undefined;
  return key ? t(key) : describeError(t, caught);
}
