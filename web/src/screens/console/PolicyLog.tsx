import { useEffect, useState } from "react";
import { api } from "../../api/client";
import type { PolicyDecision } from "../../api/types";
import { describeError } from "../../components/describeError";
import { useI18n } from "../../i18n/I18n";

interface PolicyLogProps {
  caseId: string;
  /** Read the log again whenever this changes (the case version, plus refused whispers, which change nothing). */
  refreshKey: string;
}

/** Every page of the case's policy audit trail, oldest first (the server pages; nothing is cut off). */
async function fetchAll(caseId: string): Promise<PolicyDecision[]> {
  const all: PolicyDecision[] = [];
  let after = 0;
  for (;;) {
    const page = await api.policyDecisions(caseId, after);
    all.push(...page.decisions);
    if (page.next_after === null) return all;
    after = page.next_after;
  }
}

/** Operator-only: the memory policy's decisions for this case — codes and counts, never memory content. */
export function PolicyLog({ caseId, refreshKey }: PolicyLogProps) {
  const { t } = useI18n();
  const [decisions, setDecisions] = useState<PolicyDecision[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    fetchAll(caseId).then(
      (rows) => current && (setDecisions(rows), setError(null)),
      (caught: unknown) => current && setError(describeError(t, caught)),
    );
    return () => {
      current = false;
    };
  }, [caseId, refreshKey, t]);

  return (
    <section className="panel policy-log" aria-labelledby="policy-log-heading">
      <h2 id="policy-log-heading">{t("policyLog.heading")}</h2>
      {error && <p className="form-error">{error}</p>}
      {decisions && decisions.length === 0 && <p>{t("policyLog.empty")}</p>}
      {decisions && decisions.length > 0 && (
        <>
          <p className="policy-log__count">{t("policyLog.count", { n: decisions.length })}</p>
          <ol className="policy-log__rows" data-testid="policy-log">
            {[...decisions].reverse().map((d) => (
              <li key={d.id} data-action={d.action} data-code={d.code}>
                {t("policyLog.row", {
                  action: t(`policyLog.action.${d.action}`),
                  code: d.detail ? `${d.code} (${d.detail})` : d.code,
                  type: d.memory_type,
                  creator: d.creator,
                  space: d.space,
                  count: d.count,
                })}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
