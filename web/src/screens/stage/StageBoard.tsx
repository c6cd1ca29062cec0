import { isRole, type StageBoardCard } from "../../api/types";
import { useI18n } from "../../i18n/I18n";

export function StageBoard({ cards }: { cards: StageBoardCard[] }) {
  const { t } = useI18n();
  return (
    <section className="stage-board" aria-labelledby="stage-board-heading">
      <h2 id="stage-board-heading">{t("board.heading")}</h2>
      {cards.length === 0 ? (
        <p className="stage-board__empty">{t("stage.boardEmpty")}</p>
      ) : (
        <ul className="stage-board__cards" data-testid="stage-board">
          {cards.map((card) => (
            <li key={card.id} className={card.kind === "finding" ? "stage-card stage-card--finding" : "stage-card"}>
              {card.kind === "finding" ? (
                <>
                  <p className="stage-card__content" data-testid="stage-finding">
                    {t("stage.learned", { text: card.content })}
                  </p>
                  <p className="stage-card__source">{t("stage.learnedNote")}</p>
                </>
              ) : (
                <p className="stage-card__content">{card.content}</p>
              )}
              {isRole(card.source_role) && <p className="stage-card__source">{t("stage.from", { role: t(`role.${card.source_role}`) })}</p>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
