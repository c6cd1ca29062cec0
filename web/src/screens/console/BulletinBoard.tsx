import { useEffect, useRef } from "react";
import { isRole, type Card } from "../../api/types";
import { useI18n } from "../../i18n/I18n";
import { CardItem } from "./CardItem";

interface BulletinBoardProps {
  cards: Card[];
  cited: Set<string>;
  /** The copy just published: scrolled into view and highlighted. */
  freshCardId: string | null;
}

export function BulletinBoard({ cards, cited, freshCardId }: BulletinBoardProps) {
  const { t } = useI18n();
  const listRef = useRef<HTMLUListElement>(null);
  const freshShown = freshCardId !== null && cards.some((card) => card.id === freshCardId);
  useEffect(() => {
    if (!freshShown || freshCardId === null) return;
    const item = listRef.current?.querySelector<HTMLElement>(`[data-card-id="${CSS.escape(freshCardId)}"]`);
    const reduced = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
    item?.scrollIntoView?.({ block: "nearest", behavior: reduced ? "auto" : "smooth" });
  }, [freshShown, freshCardId]);
  return (
    <section className="panel board" aria-labelledby="board-heading">
      <h2 id="board-heading">{t("board.heading")}</h2>
      {cards.length === 0 ? (
        <p className="muted">{t("board.empty")}</p>
      ) : (
        <ul className="card-list" ref={listRef}>
          {cards.map((card) => (
            <CardItem key={card.id} card={card} cited={cited.has(card.id)} fresh={card.id === freshCardId}>
              {card.source && (
                <p className="card__source">
                  {t("board.source", { role: isRole(card.source.role) ? t(`role.${card.source.role}`) : card.source.role })}
                </p>
              )}
            </CardItem>
          ))}
        </ul>
      )}
    </section>
  );
}
