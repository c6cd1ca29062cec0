import { useId, useState } from "react";
import { LIMITS } from "../../api/rules";
import type { Role } from "../../api/types";
import { LockIcon } from "../../components/LockIcon";
import { TextForm } from "../../components/TextForm";
import { explainRefusal, useSubmission } from "../../components/useSubmission";
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
  const submission = useSubmission({ explain: (caught) => explainRefusal(t, caught, { UNSAFE_INPUT: "ask.unsafe", PRESENTER_ACTS_OFF: "act.off" }) });
  const roleName = t(`role.${role}`);

  function submit() {
    if (question.trim() === "") submission.refuse(t("ask.empty"));
    else void submission.run(() => ask(question.trim()));
  }

  return (
    <section className="panel" aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>{t("ask.heading", { role: roleName })}</h2>
      <TextForm
        id={inputId}
        label={t("ask.label")}
        labelHidden
        value={question}
        onChange={setQuestion}
        maxLength={LIMITS.question}
        described
        submission={submission}
        onSubmit={submit}
        submitLabel={t("ask.submit")}
        busyLabel={t("ask.asking")}
        submitClassName={act?.on ? "button button--primary button--act" : "button button--primary"}
        keepsFocusWhileBusy
      >
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
      </TextForm>
    </section>
  );
}
