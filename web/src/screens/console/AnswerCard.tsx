import type { Card } from "../../api/types";
import type { AskedAnswer } from "../../state/consoleState";
import { useI18n } from "../../i18n/I18n";
import { vocabulary } from "../../labels/cardMeta";
import { useCardLabel, useTopicLabel } from "../../labels/labels";

interface AnswerCardProps {
  answer: AskedAnswer | null;
  /** Every card the console knows, to name the cited ones (ids only on hover). */
  cards: Map<string, Card>;
}

function Citation({ cardId, card }: { cardId: string; card: Card | undefined }) {
  const { t } = useI18n();
  const cardLabel = useCardLabel();
  if (card === undefined) {
    return <li className="cite">{t("answer.citeGone")}</li>;
  }
  const source = card.source ? t(`role.${card.source.role}`) : null;
  return (
    <li className={`cite cite--trust-${card.trust}`} title={cardId} data-card-id={cardId}>
      <span className="cite__label">{cardLabel(card)}</span>
      {source && <span className="cite__source">{t("answer.cardSource", { role: source })}</span>}
      <span className="cite__trust">{t("answer.citeTrust", { trust: vocabulary(t, "trust", card.trust) })}</span>
    </li>
  );
}

export function AnswerCard({ answer, cards }: AnswerCardProps) {
  const { t } = useI18n();
  const topicLabel = useTopicLabel();
  const conflicts = answer?.conflicts ?? [];
  return (
    <section className="panel answer-card" aria-labelledby="answer-heading" aria-live="polite">
      <h2 id="answer-heading">{t("answer.heading")}</h2>
      {answer === null ? (
        <p className="muted">{t("answer.none")}</p>
      ) : (
        <div
          key={answer.key}
          className={`answer answer--${answer.certainty}`}
          data-testid="answer"
          data-certainty={answer.certainty}
          data-responder={answer.responder}
          data-answer-key={answer.key}
          data-conflicting={conflicts.length > 0 || undefined}
        >
          <div className="answer__top">
            <span className="answer__who">{t("answer.byRole", { role: t(`role.${answer.role}`) })}</span>
            <span className={`badge badge--${answer.certainty}`} data-testid="certainty">
              {t(`certainty.${answer.certainty}`)}
            </span>
            {conflicts.length > 0 && (
              <span className="badge badge--conflict" data-testid="conflict-badge">
                {t("answer.conflict")}
              </span>
            )}
          </div>
          {conflicts.map((conflict) => (
            <p key={conflict.topic} className="answer__conflict" data-testid="answer-conflict">
              {t("answer.conflictExplain", { n: conflict.card_ids.length, topic: topicLabel(conflict.topic) })}
            </p>
          ))}
          <p className="answer__text">{answer.answer}</p>
          {answer.evidence.length === 0 ? (
            <p className="answer__cites">{t("answer.citesNothing")}</p>
          ) : (
            <div className="answer__cites">
              <span>{t("answer.cites")}</span>
              <ul className="cite-list">
                {answer.evidence.map((cardId) => (
                  <Citation key={cardId} cardId={cardId} card={cards.get(cardId)} />
                ))}
              </ul>
            </div>
          )}
          {answer.fallback_reason && (
            <p className="answer__meta muted">
              {t("answer.responder", { responder: t(answer.responder === "role_voice" ? "mode.role_voice" : "mode.evidence") })} ·{" "}
              {t("answer.fallback", { reason: t(`fallback.${answer.fallback_reason}`) })}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
