import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { ROLES, type CrossExaminationResult, type Role } from "../../api/types";
import { describeError } from "../../components/describeError";
import { GrantKeys } from "../../components/GrantKeys";
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
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<CrossExaminationResult | null>(null);

  function toggle(role: Role) {
    setRoles((current) => (current.includes(role) ? current.filter((r) => r !== role) : ROLES.filter((r) => r === role || current.includes(r))));
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (roles.length < 2) {
      setError(t("cross.pickTwo"));
      return;
    }
    if (question.trim() === "") {
      setError(t("ask.empty"));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      setResult(await crossExamine(roles, question.trim()));
    } catch (caught) {
      const unsafe = caught instanceof ApiError && caught.code === "UNSAFE_INPUT";
      setError(unsafe ? t("ask.unsafe") : describeError(t, caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel cross-exam" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{t("cross.heading")}</h2>
      <p className="muted">{t("cross.intro")}</p>
      <form onSubmit={submit} className="stacked-form">
        <fieldset className="form-row">
          <legend>{t("cross.roles")}</legend>
          {ROLES.map((role) => (
            <label key={role} className="chip">
              <input type="checkbox" checked={roles.includes(role)} onChange={() => toggle(role)} /> {t(`role.${role}`)}
            </label>
          ))}
        </fieldset>
        <label htmlFor={`${id}-question`}>{t("cross.question")}</label>
        <div className="form-row">
          <input
            id={`${id}-question`}
            type="text"
            className="grow"
            maxLength={LIMITS.crossExaminationQuestion}
            value={question}
            list={`${id}-presets`}
            onChange={(event) => setQuestion(event.target.value)}
          />
          <button type="submit" className="button button--primary" disabled={busy}>
            {busy ? t("cross.asking") : t("cross.submit")}
          </button>
        </div>
        <datalist id={`${id}-presets`}>
          {presets.map((preset) => (
            <option key={preset} value={preset} />
          ))}
        </datalist>
        <p role="alert" className="form-error">
          {error}
        </p>
      </form>
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
