import type { StageConclusion } from "../../api/types";
import { useI18n } from "../../i18n/I18n";

/** The newest cross-examination, as the public may see it: a sealed conclusion is announced, never shown. */
export function ConclusionLine({ conclusion }: { conclusion: StageConclusion | null }) {
  const { t } = useI18n();
  if (conclusion === null) return null;
  const text = conclusion.sealed
    ? `🔒 ${t("stage.sealed")}`
    : t("stage.jointSearch", { roles: (conclusion.roles ?? []).map((role) => t(`role.${role}`)).join(t("scopes.joiner")) });
  return (
    <p key={conclusion.id} className="stage-retrieval stage-conclusion" data-testid="stage-conclusion" data-sealed={conclusion.sealed} aria-live="polite">
      {text}
    </p>
  );
}
