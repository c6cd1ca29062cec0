import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import type { Card, MemoryPolicy, Role } from "../../api/types";
import { describeError } from "../../components/describeError";
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

type WhisperStatus = { kind: "idle" } | { kind: "saved"; cardId: string } | { kind: "error"; message: string };

export function WhisperBox({ role, whisper, policy = null }: WhisperBoxProps) {
  const { t } = useI18n();
  const inputId = useId();
  const [text, setText] = useState("");
  const [source, setSource] = useState("");
  const [memoryType, setMemoryType] = useState<string | null>(null);
  const [preferenceKey, setPreferenceKey] = useState<string | null>(null);
  const chosenType = memoryType ?? policy?.default_type ?? null;
  const chosenKey = chosenType === PREFERENCE ? (preferenceKey ?? policy?.preference_keys[0] ?? null) : null;
  const [sending, setSending] = useState(false);
  const [status, setStatus] = useState<WhisperStatus>({ kind: "idle" });
  const roleName = t(`role.${role}`);
  const length = whisperLength(text);
  // A preference's value has its key's own limit; the server counts as the counter does.
  const maxLength = (chosenKey !== null ? PREFERENCE_MAX_LENGTH[chosenKey] : undefined) ?? WHISPER_MAX_LENGTH;
  const tooLong = length > maxLength;

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (sending) return;
    if (length === 0) {
      setStatus({ kind: "error", message: t("whisper.empty") });
      return;
    }
    if (tooLong) return;
    setSending(true);
    try {
      const toldBy = source.trim();
      const typed = policy && chosenType;
      const card = toldBy
        ? await whisper(text.trim(), typed ? chosenType : undefined, typed ? (chosenKey ?? undefined) : undefined, toldBy)
        : typed
          ? await whisper(text.trim(), chosenType, chosenKey ?? undefined)
          : await whisper(text.trim());
      setText("");
      setStatus({ kind: "saved", cardId: card.id });
    } catch (caught) {
      // A preference's key and value are the request schema's: a malformed preference is a value its key
      // does not take (the box sends only keys the server offers).
      const refused = caught instanceof ApiError ? caught.code : null;
      const code = refused === "VALIDATION_ERROR" && chosenKey !== null ? "PREFERENCE_VALUE_INVALID" : refused;
      const policyKey = knownKey("whisper.policy.", code);
      const message = code === "UNSAFE_INPUT" ? t("whisper.unsafe") : policyKey ? t(policyKey) : describeError(t, caught);
      setStatus({ kind: "error", message });
    } finally {
      setSending(false);
    }
  }

  return (
    <section className="panel" aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>{t("whisper.heading", { role: roleName })}</h2>
      <form onSubmit={submit} className="stacked-form">
        <label htmlFor={inputId}>{t("whisper.label")}</label>
        <textarea
          id={inputId}
          rows={2}
          value={text}
          aria-invalid={tooLong || status.kind === "error"}
          aria-describedby={`${inputId}-counter ${inputId}-status`}
          onChange={(event) => {
            setText(event.target.value);
            if (status.kind !== "idle") setStatus({ kind: "idle" });
          }}
        />
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
        <div className="form-row">
          <span id={`${inputId}-counter`} className={`counter${tooLong ? " counter--over" : ""}`}>
            {t("whisper.counter", { n: length, max: maxLength })}
            {tooLong && ` — ${t("whisper.tooLong", { max: maxLength })}`}
          </span>
          <button type="submit" className="button button--primary" disabled={tooLong} aria-disabled={sending}>
            {sending ? t("whisper.sending") : t("whisper.submit")}
          </button>
        </div>
        <p id={`${inputId}-status`} role={status.kind === "error" ? "alert" : "status"} className={status.kind === "error" ? "form-error" : "form-ok"}>
          {status.kind === "error" && status.message}
          {status.kind === "saved" && t("whisper.saved", { id: status.cardId, role: roleName })}
        </p>
      </form>
    </section>
  );
}
