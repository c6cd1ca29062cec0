import type { ReactNode } from "react";
import type { Card } from "../../api/types";
import { LockIcon } from "../../components/LockIcon";
import { useI18n } from "../../i18n/I18n";

interface CardItemProps {
  card: Card;
  cited: boolean;
  /** Provenance line, badges or actions specific to the list the card is in. */
  children?: ReactNode;
}

export function CardItem({ card, cited, children }: CardItemProps) {
  const { t } = useI18n();
  return (
    <li
      className={`card card--${card.visibility}${cited ? " card--cited" : ""}`}
      data-card-id={card.id}
      data-cited={cited || undefined}
    >
      <div className="card__top">
        <span className={`badge badge--${card.visibility}`}>
          {card.visibility === "private" ? (
            <>
              <LockIcon /> 
              {t("cards.private")}
            </>
          ) : (
            t("board.public")
          )}
        </span>
        {cited && <span className="badge badge--cited">{t("cards.cited")}</span>}
        <code className="card__id">{card.id}</code>
      </div>
      <p className="card__content">{card.content}</p>
      <p className="card__meta">
        {t("card.meta", { topic: card.topic, kind: card.kind, memoryType: card.memory_type, trust: card.trust })}
      </p>
      {children}
    </li>
  );
}
