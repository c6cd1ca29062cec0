import { useEffect, useState } from "react";
import { api } from "../../api/client";
import type { PolicyDecision } from "../../api/types";
import { describeError } from "../../components/describeError";
import { useI18n } from "../../i18n/I18n";
import { isMessageKey } from "../../i18n/strings";
import type { Translate } from "../../i18n/translate";
import { vocabulary } from "../../labels/cardMeta";
import { spaceName } from "../../labels/labels";

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

/** The raw codes of a decision, as the server keeps them: shown only under "Details". */
export function decisionCodes(d: PolicyDecision): string {
  const code = d.detail ? `${d.code} (${d.detail})` : d.code;
  return `${d.action} · ${code} · ${d.memory_type ?? ""} · ${d.creator ?? ""} → ${d.space ?? ""} ×${d.count}`;
}

/** One decision in words, in the interface language: what happened, why (a refusal's rule and the
 * screening's reasons), which type, who wrote it, which space. No code appears here. */
export function decisionLabel(t: Translate, d: PolicyDecision): string {
  const word = (key: string, fallback: string) => (isMessageKey(key) ? t(key) : fallback);
  const reasons = d.code === "UNSAFE_INPUT" ? d.detail.split(",").filter((r) => isMessageKey(`policyLog.reason.${r}`)) : [];
  const code = word(`policyLog.code.${d.code}`, d.code.toLowerCase().replace(/_+/g, " "));
  const why = reasons.length
    ? t("policyLog.because", { code, reasons: reasons.map((r) => word(`policyLog.reason.${r}`, r)).join(t("policyLog.reasonJoiner")) })
    : code;
  const params = {
    action: word(`policyLog.action.${d.action}`, d.action),
    why,
    type: d.memory_type ? vocabulary(t, "memoryType", d.memory_type) : "–",
    creator: d.creator ? vocabulary(t, "createdBy", d.creator) : "–",
    space: d.space ? spaceName(t, d.space) : "–",
    count: d.count,
  };
  return t(d.code === "ok" ? "policyLog.row" : "policyLog.rowWhy", params);
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
                <span data-testid="policy-log-label">{decisionLabel(t, d)}</span>
                <details className="policy-log__details">
                  <summary>{t("policyLog.details")}</summary>
                  <code>{decisionCodes(d)}</code>
                </details>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
