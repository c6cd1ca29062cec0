import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { LIMITS } from "../../api/rules";
import type { Role } from "../../api/types";
import { describeError } from "../../components/describeError";
import { useI18n } from "../../i18n/I18n";

interface QuestionComposerProps {
  role: Role;
  presets: string[];
  ask: (question: string) => Promise<void>;
}

export function QuestionComposer({ role, presets, ask }: QuestionComposerProps) {
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
      const unsafe = caught instanceof ApiError && caught.code === "UNSAFE_INPUT";
      setError(unsafe ? t("ask.unsafe") : describeError(t, caught));
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
          <button type="submit" className="button button--primary" aria-disabled={asking}>
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
        <p id={`${inputId}-status`} role="alert" className="form-error">
          {error}
        </p>
      </form>
    </section>
  );
}
