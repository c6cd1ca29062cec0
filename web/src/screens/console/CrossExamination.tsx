import { useId, useState } from "react";
import { ROLES, type CrossExaminationResult, type Role } from "../../api/types";
import { GrantKeys } from "../../components/GrantKeys";
import { TextForm } from "../../components/TextForm";
import { explainRefusal, useSubmission } from "../../components/useSubmission";
import { useI18n } from "../../i18n/I18n";
import { LIMITS } from "../../api/rules";

interface CrossExaminationProps {
  presets: string[];
  crossExamine: (roles: Role[], question: string) => Promise<CrossExaminationResult>;
}

/** One question to several roles, and the joint conclusion with its audience (sealed when it must be). */
export function CrossExamination({ presets, crossExamine }: CrossExaminationProps) {
  const { t } = useI18n();
  const id = useId();
  const [roles, setRoles] = useState<Role[]>(["informant", "suspect"]);
  const [question, setQuestion] = useState("");
  const submission = useSubmission({ explain: (caught) => explainRefusal(t, caught, { UNSAFE_INPUT: "ask.unsafe" }) });
  const [result, setResult] = useState<CrossExaminationResult | null>(null);

  function toggle(role: Role) {
    setRoles((current) => (current.includes(role) ? current.filter((r) => r !== role) : ROLES.filter((r) => r === role || current.includes(r))));
  }

  function submit() {
    if (roles.length < 2) submission.refuse(t("cross.pickTwo"));
    else if (question.trim() === "") submission.refuse(t("ask.empty"));
    else void submission.run(async () => setResult(await crossExamine(roles, question.trim())));
  }

  const rolePicker = (
    <fieldset className="form-row">
      <legend>{t("cross.roles")}</legend>
      {ROLES.map((role) => (
        <label key={role} className="chip">
          <input type="checkbox" checked={roles.includes(role)} onChange={() => toggle(role)} /> {t(`role.${role}`)}
        </label>
      ))}
    </fieldset>
  );

  return (
    <section className="panel cross-exam" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{t("cross.heading")}</h2>
      <p className="muted">{t("cross.intro")}</p>
      <TextForm
        id={`${id}-question`}
        label={t("cross.question")}
        value={question}
        onChange={setQuestion}
        maxLength={LIMITS.crossExaminationQuestion}
        suggestions={presets}
        submission={submission}
        onSubmit={submit}
        submitLabel={t("cross.submit")}
        busyLabel={t("cross.asking")}
        before={rolePicker}
      />
      {result && <CrossExaminationOutcome result={result} />}
    </section>
  );
}

/** A cross-examination's answers and joint conclusion: the live result, and its record entry shown again. */
export function CrossExaminationOutcome({ result }: { result: CrossExaminationResult }) {
  const { t } = useI18n();
  const { conclusion } = result;
  return (
    <div aria-live="polite" data-testid="cross-result">
      <ul className="cross-exam__answers">
        {result.results.map((r) => (
          <li key={r.role}>
            <span className={`badge badge--${r.certainty}`}>{t(r.certainty === "known" ? "certainty.known" : "certainty.unknown")}</span>{" "}
            <strong>{t(`role.${r.role}`)}</strong>: {r.answer}
            <GrantKeys grant={r.trace.grant} className="cross-exam__keys" />
          </li>
        ))}
      </ul>
      <div
        className={conclusion.sealed ? "answer cross-exam__sealed" : "answer"}
        data-testid={conclusion.sealed ? "sealed-conclusion" : "joint-conclusion"}
      >
        <div className="answer__top">
          <span className="answer__who">{conclusion.sealed ? `🔒 ${t("cross.sealed")}` : t("cross.conclusion")}</span>
          <span className="badge">{t("cross.audience", { audience: conclusion.audience })}</span>
        </div>
        <p className="answer__text">{conclusion.text}</p>
        {conclusion.sealed && <p className="muted">{t("cross.sealedNote")}</p>}
        <p className="answer__cites">
          {t("cross.derivedFrom")}:{" "}
          {conclusion.provenance.map((item) => (
            <code key={item.card_id} className="cite">
              {item.card_id} ({t(item.space === "bulletin_board" ? "space.bulletin_board" : `role.${item.space}`)})
            </code>
          ))}
        </p>
      </div>
    </div>
  );
}
