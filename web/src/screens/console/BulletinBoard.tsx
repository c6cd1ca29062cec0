import { isRole, type Card } from "../../api/types";
import { useI18n } from "../../i18n/I18n";
import { CardItem } from "./CardItem";

export function BulletinBoard({ cards, cited }: { cards: Card[]; cited: Set<string> }) {
  const { t } = useI18n();
  return (
    <section className="panel board" aria-labelledby="board-heading">
      <h2 id="board-heading">{t("board.heading")}</h2>
      {cards.length === 0 ? (
        <p className="muted">{t("board.empty")}</p>
      ) : (
        <ul className="card-list">
          {cards.map((card) => (
            <CardItem key={card.id} card={card} cited={cited.has(card.id)}>
              {card.source && (
                <p className="card__source">
                  {t("board.source", {
                    role: isRole(card.source.role) ? t(`role.${card.source.role}`) : card.source.role,
                    cardId: card.source.card_id,
                  })}
                </p>
              )}
            </CardItem>
          ))}
        </ul>
      )}
    </section>
  );
}
