import { useId, useState } from "react";
import { ApiError } from "../../api/client";
import type { Card, MemoryPolicy, Role } from "../../api/types";
import { describeError } from "../../components/describeError";
import { TextForm } from "../../components/TextForm";
import { useSubmission } from "../../components/useSubmission";
import { useI18n } from "../../i18n/I18n";
import { en, type MessageKey } from "../../i18n/strings";
import { LIMITS, PREFERENCE_LIMITS } from "../../api/rules";

export const WHISPER_MAX_LENGTH = LIMITS.whisperText;
const PREFERENCE_MAX_LENGTH: Readonly<Record<string, number | undefined>> = PREFERENCE_LIMITS;

/** Length check on the trimmed text, counted in characters (code points), not UTF-16 units. */
export function whisperLength(text: string): number {
  return [...text.trim()].length;
}

interface WhisperBoxProps {
  role: Role;
  whisper: (text: string, memoryType?: string, key?: string, source?: string) => Promise<Card>;
  /** What the operator may write (GET /api/memory-policy); without it the server's default type is used. */
  policy?: MemoryPolicy | null;
}

const PREFERENCE = "user_preference";
/** A UI string for `prefix + name` when one exists (the server may name a type or code the UI predates). */
export function knownKey(prefix: string, name: string | null): MessageKey | null {
  const key = `${prefix}${name ?? ""}`;
  return key in en ? (key as MessageKey) : null;
}

export function WhisperBox({ role, whisper, policy = null }: WhisperBoxProps) {
  const { t } = useI18n();
  const inputId = useId();
  const [text, setText] = useState("");
  const [source, setSource] = useState("");
  const [memoryType, setMemoryType] = useState<string | null>(null);
  const [preferenceKey, setPreferenceKey] = useState<string | null>(null);
  const chosenType = memoryType ?? policy?.default_type ?? null;
  const chosenKey = chosenType === PREFERENCE ? (preferenceKey ?? policy?.preference_keys[0] ?? null) : null;
  const [savedCardId, setSavedCardId] = useState<string | null>(null);
  // The line says what was saved as well as what failed; it stays until the text is edited.
  const submission = useSubmission({ explain, clearsOnAttempt: false });
  const roleName = t(`role.${role}`);
  const length = whisperLength(text);
  // A preference's value has its key's own limit; the server counts as the counter does.
  const maxLength = (chosenKey !== null ? PREFERENCE_MAX_LENGTH[chosenKey] : undefined) ?? WHISPER_MAX_LENGTH;
  const tooLong = length > maxLength;

  function explain(caught: unknown): string {
    // A preference's key and value are the request schema's: a malformed preference is a value its key
    // does not take (the box sends only keys the server offers).
    const refused = caught instanceof ApiError ? caught.code : null;
    const code = refused === "VALIDATION_ERROR" && chosenKey !== null ? "PREFERENCE_VALUE_INVALID" : refused;
    const policyKey = knownKey("whisper.policy.", code);
    return code === "UNSAFE_INPUT" ? t("whisper.unsafe") : policyKey ? t(policyKey) : describeError(t, caught);
  }

  function submit() {
    if (length === 0) {
      submission.refuse(t("whisper.empty"));
      return;
    }
    if (tooLong) return;
    void submission.run(async () => {
      const toldBy = source.trim();
      const typed = policy && chosenType;
      const card = toldBy
        ? await whisper(text.trim(), typed ? chosenType : undefined, typed ? (chosenKey ?? undefined) : undefined, toldBy)
        : typed
          ? await whisper(text.trim(), chosenType, chosenKey ?? undefined)
          : await whisper(text.trim());
      setText("");
      setSavedCardId(card.id);
    });
  }

  function edit(value: string) {
    setText(value);
    setSavedCardId(null);
    submission.refuse(null);
  }

  return (
    <section className="panel" aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>{t("whisper.heading", { role: roleName })}</h2>
      <TextForm
        id={inputId}
        label={t("whisper.label")}
        value={text}
        onChange={edit}
        rows={2}
        described
        invalid={tooLong || submission.error !== null}
        counter={{
          text: t("whisper.counter", { n: length, max: maxLength }) + (tooLong ? ` — ${t("whisper.tooLong", { max: maxLength })}` : ""),
          over: tooLong,
        }}
        submission={submission}
        onSubmit={submit}
        submitLabel={t("whisper.submit")}
        busyLabel={t("whisper.sending")}
        keepsFocusWhileBusy
        disabled={tooLong}
        notice={savedCardId === null ? null : t("whisper.saved", { id: savedCardId, role: roleName })}
      >
        <div className="form-row">
          <label htmlFor={`${inputId}-source`}>{t("whisper.source")}</label>
          <input
            id={`${inputId}-source`}
            type="text"
            className="grow"
            maxLength={LIMITS.whisperSource}
            value={source}
            onChange={(event) => setSource(event.target.value)}
          />
        </div>
        {policy && chosenType && (
          <div className="form-row">
            <label htmlFor={`${inputId}-type`}>{t("whisper.memoryType")}</label>
            <select id={`${inputId}-type`} value={chosenType} onChange={(event) => setMemoryType(event.target.value)}>
              {policy.writable_types.map((type) => (
                <option key={type} value={type}>
                  {(() => {
                    const label = knownKey("memoryType.", type);
                    return label ? t(label) : type;
                  })()}
                </option>
              ))}
            </select>
            {chosenType === PREFERENCE && chosenKey && (
              <>
                <label htmlFor={`${inputId}-key`}>{t("whisper.preferenceKey")}</label>
                <select id={`${inputId}-key`} value={chosenKey} onChange={(event) => setPreferenceKey(event.target.value)}>
                  {policy.preference_keys.map((key) => (
                    <option key={key} value={key}>
                      {key}
                    </option>
                  ))}
                </select>
              </>
            )}
          </div>
        )}
      </TextForm>
    </section>
  );
}
