import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { LIMITS } from "../../api/rules";
import type { Role } from "../../api/types";
import { describeError } from "../../components/describeError";
import { LockIcon } from "../../components/LockIcon";
import { useI18n } from "../../i18n/I18n";

/** The presenter act's switch: offered only when the server has the act on (`Health.presenter_acts`). */
export interface PresenterActSwitch {
  on: boolean;
  onChange: (on: boolean) => void;
}

interface QuestionComposerProps {
  role: Role;
  presets: string[];
  ask: (question: string) => Promise<void>;
  /** Absent when the server does not offer the act. */
  act?: PresenterActSwitch;
}

export function QuestionComposer({ role, presets, ask, act }: QuestionComposerProps) {
  const { t } = useI18n();
  const inputId = useId();
  const [question, setQuestion] = useState("");
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const roleName = t(`role.${role}`);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (asking) return;
    if (question.trim() === "") {
      setError(t("ask.empty"));
      return;
    }
    setAsking(true);
    setError(null);
    try {
      await ask(question.trim());
    } catch (caught) {
      const code = caught instanceof ApiError ? caught.code : null;
      setError(code === "UNSAFE_INPUT" ? t("ask.unsafe") : code === "PRESENTER_ACTS_OFF" ? t("act.off") : describeError(t, caught));
    } finally {
      setAsking(false);
    }
  }

  return (
    <section className="panel" aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>{t("ask.heading", { role: roleName })}</h2>
      <form onSubmit={submit} className="stacked-form">
        <label htmlFor={inputId} className="visually-hidden">
          {t("ask.label")}
        </label>
        <div className="form-row">
          <input
            id={inputId}
            type="text"
            className="grow"
            maxLength={LIMITS.question}
            value={question}
            aria-describedby={`${inputId}-status`}
            onChange={(event) => setQuestion(event.target.value)}
          />
          <button type="submit" className={act?.on ? "button button--primary button--act" : "button button--primary"} aria-disabled={asking}>
            {asking ? t("ask.asking") : t("ask.submit")}
          </button>
        </div>
        {presets.length > 0 && (
          <div className="presets" role="group" aria-label={t("ask.presets")}>
            {presets.map((preset) => (
              <button key={preset} type="button" className="chip" onClick={() => setQuestion(preset)}>
                {preset}
              </button>
            ))}
          </div>
        )}
        {act && (
          <div className={act.on ? "act-switch act-switch--on" : "act-switch"}>
            <label className="act-switch__label">
              <input type="checkbox" role="switch" checked={act.on} aria-describedby={act.on ? `${inputId}-act` : undefined} onChange={(event) => act.onChange(event.target.checked)} />{" "}
              {t("act.toggle")}
            </label>
            {act.on && (
              <p id={`${inputId}-act`} className="act-switch__sentence" data-testid="act-sentence">
                <LockIcon /> {t("act.sentence", { role: roleName })}
              </p>
            )}
          </div>
        )}
        <p id={`${inputId}-status`} role="alert" className="form-error">
          {error}
        </p>
      </form>
    </section>
  );
}
