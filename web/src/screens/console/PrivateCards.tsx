import { isDerivedCard, type Card, type Role } from "../../api/types";
import { useI18n } from "../../i18n/I18n";
import { CardItem } from "./CardItem";

interface PrivateCardsProps {
  role: Role;
  cards: Card[];
  cited: Set<string>;
  /** Private card id → id of its board copy, for cards already published. */
  boardCopies: Map<string, string>;
  publishingCardId: string | null;
  onPublish: (card: Card) => void;
  /** Erase the card (its board copies go with it; findings it supported are re-checked). */
  onErase?: (card: Card) => void;
}

export function PrivateCards({ role, cards, cited, boardCopies, publishingCardId, onPublish, onErase }: PrivateCardsProps) {
  const { t } = useI18n();
  const evidenceCards = cards.filter((card) => !isDerivedCard(card));
  const sessionRecords = cards.filter(isDerivedCard);
  return (
    <section className="panel private-cards" aria-labelledby="private-cards-heading">
      <h2 id="private-cards-heading">{t("cards.heading", { role: t(`role.${role}`) })}</h2>
      {evidenceCards.length === 0 ? (
        <p className="muted">{t("cards.empty")}</p>
      ) : (
        <ul className="card-list">
          {evidenceCards.map((card) => (
            <CardItem key={card.id} card={card} cited={cited.has(card.id)}>
              <div className="card__actions">
                {boardCopies.has(card.id) && <span className="badge badge--public">{t("cards.onBoard")}</span>}
                <button
                  type="button"
                  className="button button--small"
                  // Not `disabled` while busy: a disabled button drops keyboard focus to the page body.
                  aria-disabled={publishingCardId !== null}
                  aria-label={`${t("cards.publish")}: ${card.content}`}
                  data-testid={`publish-${card.id}`}
                  onClick={() => {
                    if (publishingCardId === null) onPublish(card);
                  }}
                >
                  {publishingCardId === card.id ? t("cards.publishing") : t("cards.publish")}
                </button>
                {onErase && (
                  <button
                    type="button"
                    className="button button--small"
                    aria-label={`${t("cards.erase")}: ${card.content}`}
                    data-testid={`erase-${card.id}`}
                    onClick={() => {
                      if (window.confirm(t("cards.eraseConfirm"))) onErase(card);
                    }}
                  >
                    {t("cards.erase")}
                  </button>
                )}
              </div>
              {card.told_by && <p className="card__source">{t("findings.toldBy", { source: card.told_by })}</p>}
            </CardItem>
          ))}
        </ul>
      )}
      {sessionRecords.length > 0 && (
        <details className="session-records">
          <summary>{t("cards.sessionRecords", { n: sessionRecords.length })}</summary>
          <ul className="card-list">
            {sessionRecords.map((card) => (
              <CardItem key={card.id} card={card} cited={false} />
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
