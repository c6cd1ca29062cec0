import type { StageRetrieval } from "../../api/types";
import { useI18n } from "../../i18n/I18n";
import { describeRetrieval } from "../../state/stageState";
import { LockedRows } from "./LockedRows";

export function RetrievalSentence({ retrieval }: { retrieval: StageRetrieval | null }) {
  const { t } = useI18n();
  if (retrieval === null) {
    return <p className="stage-retrieval stage-retrieval--waiting" data-testid="stage-retrieval">{t("stage.waiting")}</p>;
  }
  const sentence = describeRetrieval(retrieval);
  const scopes = [
    ...(sentence.searchedOwnMemory ? [t("stage.scope.own")] : []),
    ...(sentence.searchedBoard ? [t("stage.scope.board")] : []),
  ].join(t("scopes.joiner"));
  const tone =
    sentence.outcome === "nothing" || sentence.outcome === "uncertain"
      ? sentence.outcome
      : sentence.outcome === "conflicting"
        ? "found stage-retrieval--conflicting"
        : "found";
  // Remounts (and so re-animates) whenever a new retrieval lands.
  const identity = `${retrieval.role}-${retrieval.verdict}-${retrieval.duration_ms}-${retrieval.public_hits.length}-${retrieval.private_hit_count}-${sentence.outcome}-${retrieval.locked?.length ?? "filtered"}`;
  // The live region stays mounted; only its content is replaced, so screen readers announce each retrieval.
  return (
    <div aria-live="polite">
      <p
        key={identity}
        className={`stage-retrieval stage-retrieval--${tone}`}
        data-testid="stage-retrieval"
        data-outcome={sentence.outcome}
      >
        {t("stage.searched", { role: t(`role.${sentence.role}`), scopes })}
        <span className="stage-retrieval__arrow"> → </span>
        <span className="stage-retrieval__outcome">{t(`stage.outcome.${sentence.outcome}`)}</span>
      </p>
      <LockedRows key={`locked-${identity}`} retrieval={retrieval} />
    </div>
  );
}
