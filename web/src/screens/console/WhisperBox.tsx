import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import type { Card, Role } from "../../api/types";
import { describeError } from "../../components/describeError";
import { useI18n } from "../../i18n/I18n";

export const WHISPER_MAX_LENGTH = 280;

/** Length check on the trimmed text, counted in characters (code points), not UTF-16 units. */
export function whisperLength(text: string): number {
  return [...text.trim()].length;
}

interface WhisperBoxProps {
  role: Role;
  whisper: (text: string) => Promise<Card>;
}

type WhisperStatus = { kind: "idle" } | { kind: "saved"; cardId: string } | { kind: "error"; message: string };

export function WhisperBox({ role, whisper }: WhisperBoxProps) {
  const { t } = useI18n();
  const inputId = useId();
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [status, setStatus] = useState<WhisperStatus>({ kind: "idle" });
  const roleName = t(`role.${role}`);
  const length = whisperLength(text);
  const tooLong = length > WHISPER_MAX_LENGTH;

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
      const card = await whisper(text.trim());
      setText("");
      setStatus({ kind: "saved", cardId: card.id });
    } catch (caught) {
      const unsafe = caught instanceof ApiError && caught.code === "UNSAFE_INPUT";
      setStatus({ kind: "error", message: unsafe ? t("whisper.unsafe") : describeError(t, caught) });
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
          <span id={`${inputId}-counter`} className={`counter${tooLong ? " counter--over" : ""}`}>
            {t("whisper.counter", { n: length, max: WHISPER_MAX_LENGTH })}
            {tooLong && ` — ${t("whisper.tooLong", { max: WHISPER_MAX_LENGTH })}`}
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
