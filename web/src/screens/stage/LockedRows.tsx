import type { StageRetrieval } from "../../api/types";
import { LockIcon } from "../../components/LockIcon";
import { useI18n } from "../../i18n/I18n";
import { spaceName } from "../../labels/labels";
import { lockedBySpace } from "../../state/stageState";
import { formatScore } from "../../state/xray";

/** The presenter act on the stage: what other compartments handed back, a lock per row with its score, per space.
 * Nothing else of those rows reaches the stage (api/delivery.py sends a space and a score). */
export function LockedRows({ retrieval }: { retrieval: StageRetrieval }) {
  const { t } = useI18n();
  if (!retrieval.unfiltered) return null;
  const groups = lockedBySpace(retrieval);
  const total = groups.reduce((sum, group) => sum + group.scores.length, 0);
  return (
    <div className="stage-locked" data-testid="stage-locked" data-count={total}>
      <p className="stage-locked__sentence">
        <LockIcon /> {t("stage.unfiltered", { n: total })}
      </p>
      {groups.length > 0 && (
        <ul className="stage-locked__spaces">
          {groups.map(({ space, scores }) => (
            <li key={space} className={`stage-locked__space stage-locked__space--${space}`} data-testid={`stage-locked-${space}`} data-count={scores.length}>
              <span className="stage-locked__name">{spaceName(t, space)}</span>
              <span className="stage-locked__rows">
                {scores.map((score, index) => (
                  <span key={index} className="stage-locked__row" data-score={score}>
                    <LockIcon />
                    <span className="stage-locked__score">{formatScore(score)}</span>
                  </span>
                ))}
              </span>
            </li>
          ))}
        </ul>
      )}
      <p className="stage-locked__note">{t("locked.row")}</p>
    </div>
  );
}
