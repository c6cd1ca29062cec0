import type { AskedAnswer } from "../../state/consoleState";
import { useI18n } from "../../i18n/I18n";

export function AnswerCard({ answer }: { answer: AskedAnswer | null }) {
  const { t } = useI18n();
  return (
    <section className="panel answer-card" aria-labelledby="answer-heading" aria-live="polite">
      <h2 id="answer-heading">{t("answer.heading")}</h2>
      {answer === null ? (
        <p className="muted">{t("answer.none")}</p>
      ) : (
        <div
          key={answer.seq}
          className={`answer answer--${answer.certainty}`}
          data-testid="answer"
          data-certainty={answer.certainty}
        >
          <div className="answer__top">
            <span className="answer__who">{t("answer.byRole", { role: t(`role.${answer.role}`) })}</span>
            <span className={`badge badge--${answer.certainty}`} data-testid="certainty">
              {t(`certainty.${answer.certainty}`)}
            </span>
          </div>
          <p className="answer__text">{answer.answer}</p>
          <p className="answer__cites">
            {answer.evidence.length === 0 ? (
              t("answer.citesNothing")
            ) : (
              <>
                {t("answer.cites")}:{" "}
                {answer.evidence.map((cardId) => (
                  <code key={cardId} className="cite">
                    {cardId}
                  </code>
                ))}
              </>
            )}
          </p>
          <p className="answer__meta muted">
            {t("answer.responder", { responder: t(answer.responder === "role_voice" ? "mode.role_voice" : "mode.evidence") })}
            {answer.fallback_reason && <> · {t("answer.fallback", { reason: answer.fallback_reason })}</>}
          </p>
        </div>
      )}
    </section>
  );
}
