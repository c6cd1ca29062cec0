import type { ReactNode } from "react";
import type { Card } from "../../api/types";
import { LockIcon } from "../../components/LockIcon";
import { useI18n } from "../../i18n/I18n";
import type { Translate } from "../../i18n/translate";
import { vocabulary } from "../../labels/cardMeta";
import { useCardLabel } from "../../labels/labels";

interface CardItemProps {
  card: Card;
  cited: boolean;
  /** Just published: highlighted until the next action. */
  fresh?: boolean;
  /** Provenance line, badges or actions specific to the list the card is in. */
  children?: ReactNode;
}

/** Kind, memory type and trust in words; a memory type that only repeats the kind ("rumour · rumour") once. */
function cardMeta(t: Translate, card: Card): string {
  const kind = vocabulary(t, "cardKind", card.kind);
  const memoryType = vocabulary(t, "memoryType", card.memory_type);
  const trust = vocabulary(t, "trust", card.trust);
  return kind === memoryType ? t("card.metaShort", { kind, trust }) : t("card.meta", { kind, memoryType, trust });
}

/** One memory card: a human label ("Informant · safe combination"), the text, its metadata in words; ids
 * only in the details view. */
export function CardItem({ card, cited, fresh = false, children }: CardItemProps) {
  const { t } = useI18n();
  const cardLabel = useCardLabel();
  return (
    <li
      className={`card card--${card.visibility}${cited ? " card--cited" : ""}${fresh ? " card--fresh" : ""}`}
      data-card-id={card.id}
      data-cited={cited || undefined}
      data-fresh={fresh || undefined}
    >
      <div className="card__top">
        <span className={`badge badge--${card.visibility}`}>
          {card.visibility === "private" ? (
            <>
              <LockIcon /> {t("cards.private")}
            </>
          ) : (
            t("board.public")
          )}
        </span>
        {fresh && <span className="badge badge--fresh">{t("card.fresh")}</span>}
        {cited && <span className="badge badge--cited">{t("cards.cited")}</span>}
        <span className="card__label" data-testid="card-label">
          {cardLabel(card)}
        </span>
      </div>
      <p className="card__content">{card.content}</p>
      <p className="card__meta">{cardMeta(t, card)}</p>
      {children}
      <details className="card__details">
        <summary>{t("card.details")}</summary>
        <dl>
          <dt>{t("card.id")}</dt>
          <dd>
            <code>{card.id}</code>
          </dd>
          {card.source && (
            <>
              <dt>{t("card.sourceId")}</dt>
              <dd>
                <code>{card.source.card_id}</code>
              </dd>
            </>
          )}
          <dt>{t("card.createdBy")}</dt>
          <dd>{vocabulary(t, "createdBy", card.created_by)}</dd>
          <dt>{t("card.createdAt")}</dt>
          <dd>{new Date(card.created_at).toLocaleString()}</dd>
        </dl>
      </details>
    </li>
  );
}
