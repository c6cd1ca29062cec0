import { useCallback, useEffect, useId, useState } from "react";
import { LIMITS } from "../../api/rules";
import type { ClaimEvaluation, Finding, FindingContributor, FindingEvaluation, FindingPromotion } from "../../api/types";
import { TextForm } from "../../components/TextForm";
import { explainRefusal, useSubmission } from "../../components/useSubmission";
import { useI18n } from "../../i18n/I18n";
import type { Translate } from "../../i18n/translate";
import { vocabulary } from "../../labels/cardMeta";

interface FindingsPanelProps {
  claims: string[];
  /** Changes whenever the case does: the list of findings is read again. */
  refreshKey: string;
  evaluate: (claim?: string) => Promise<FindingEvaluation>;
  promote: (claim: string) => Promise<FindingPromotion>;
  list: () => Promise<{ findings: Finding[] }>;
}

const REFUSALS = { UNSAFE_INPUT: "findings.unsafe", FINDING_NOT_QUALIFIED: "findings.notQualified", FINDING_PENDING: "findings.pending" } as const;

/** The fifth act: a claim in the operator's words, checked for independent support (docs/findings.md). */
export function FindingsPanel({ claims, refreshKey, evaluate, promote, list }: FindingsPanelProps) {
  const { t } = useI18n();
  const id = useId();
  const [claim, setClaim] = useState("");
  // "submit" evaluates (the claim typed, or proposals); "promote" puts a qualifying claim on the board.
  const submission = useSubmission<"promote">({ explain: (caught) => explainRefusal(t, caught, REFUSALS) });
  const busy = submission.busy !== null;
  const [result, setResult] = useState<FindingEvaluation | null>(null);
  const [findings, setFindings] = useState<Finding[]>([]);

  const reload = useCallback(() => {
    list().then(
      (body) => setFindings(body.findings),
      () => undefined, // the list is a view: a failed read keeps the last one
    );
  }, [list]);
  useEffect(reload, [reload, refreshKey]);

  function run(given: string | undefined) {
    void submission.run(async () => setResult(await evaluate(given)));
  }

  function submit() {
    if (claim.trim() === "") submission.refuse(t("findings.empty"));
    else run(claim.trim());
  }

  function promoteClaim(text: string) {
    void submission.run(async () => {
      await promote(text);
      setResult(await evaluate(text));
      reload();
    }, "promote");
  }

  const propose = (
    <button type="button" className="button" disabled={busy} onClick={() => run(undefined)}>
      {t("findings.propose")}
    </button>
  );

  return (
    <section className="panel findings" aria-labelledby={`${id}-heading`} data-testid="findings-panel">
      <h2 id={`${id}-heading`}>{t("findings.heading")}</h2>
      <p className="muted">{t("findings.intro")}</p>
      <TextForm
        id={`${id}-claim`}
        label={t("findings.claim")}
        value={claim}
        onChange={setClaim}
        maxLength={LIMITS.claim}
        suggestions={claims}
        submission={submission}
        onSubmit={submit}
        submitLabel={t("findings.evaluate")}
        busyLabel={t("findings.evaluating")}
        actions={propose}
      />
      {result && (
        <div aria-live="polite" data-testid="findings-evaluation">
          {result.claims.length === 0 && <p className="muted">{t("findings.noProposals")}</p>}
          {result.claims.map((evaluated) => (
            <ClaimResult
              key={evaluated.claim}
              evaluated={evaluated}
              busy={busy}
              onPromote={() => promoteClaim(evaluated.claim)}
              onUse={() => setClaim(evaluated.claim)}
            />
          ))}
        </div>
      )}
      <h3>{t("findings.list")}</h3>
      {findings.length === 0 ? (
        <p className="muted">{t("findings.none")}</p>
      ) : (
        <ul className="findings__list" data-testid="findings-list">
          {findings.map((finding) => (
            <li key={finding.id} className={`finding finding--${finding.state}`} data-state={finding.state}>
              <span className={`badge ${finding.state === "ready" ? "badge--known" : ""}`}>{t(`findings.state.${finding.state}`)}</span>{" "}
              {finding.state === "withdrawn" ? (
                <span className="muted">{t("findings.withdrawnText")}</span>
              ) : (
                <>
                  <q>{finding.claim}</q>{" "}
                  <span className="muted">
                    {t("findings.figures", { support: finding.support, loo: finding.leave_one_out, min: finding.min_support })} ·{" "}
                    {t("findings.review", { date: finding.review_at })}
                  </span>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ClaimResult({
  evaluated,
  busy,
  onPromote,
  onUse,
}: {
  evaluated: ClaimEvaluation;
  busy: boolean;
  onPromote: () => void;
  onUse: () => void;
}) {
  const { t } = useI18n();
  const qualifies = evaluated.decision === "qualifies";
  return (
    <article className="finding-claim" data-testid="finding-claim" data-decision={evaluated.decision}>
      <div className="answer__top">
        <q className="finding-claim__text">{evaluated.claim}</q>
        <span className={`badge ${qualifies || evaluated.decision === "promoted" ? "badge--known" : "badge--unknown"}`}>
          {t(`findings.decision.${evaluated.decision}`)}
        </span>
      </div>
      {evaluated.proposed && (
        <p className="muted">
          {t("findings.proposedNote")}{" "}
          <button type="button" className="button button--small" onClick={onUse}>
            {t("findings.claim")}
          </button>
        </p>
      )}
      <LeaveOneOutBar support={evaluated.support} loo={evaluated.leave_one_out} min={evaluated.min_support} />
      <p className="muted">
        {t("findings.figures", { support: evaluated.support, loo: evaluated.leave_one_out, min: evaluated.min_support })} ·{" "}
        {t("findings.trust", { trust: vocabulary(t, "trust", evaluated.trust) })} ·{" "}
        {t("findings.contradictions", { count: evaluated.contradictions })}
      </p>
      <ul className="finding-claim__contributors">
        {evaluated.contributors.map((contributor) => (
          <ContributorRow key={contributor.card_id} contributor={contributor} t={t} />
        ))}
      </ul>
      {qualifies && (
        <button type="button" className="button button--primary" disabled={busy} onClick={onPromote} data-testid="promote-finding">
          {busy ? t("findings.promoting") : t("findings.promote")}
        </button>
      )}
    </article>
  );
}

function ContributorRow({ contributor, t }: { contributor: FindingContributor; t: Translate }) {
  const counted = contributor.status === "counted";
  return (
    <li className={counted ? "contributor contributor--counted" : "contributor"} data-status={contributor.status}>
      <span aria-hidden="true">{counted ? "✔" : "✕"}</span>{" "}
      <strong>{contributor.role ? t(`role.${contributor.role}`) : t("findings.board")}</strong>{" "}
      <span className="muted">
        ({contributor.source ? t("findings.toldBy", { source: contributor.source }) : t("findings.noSource")})
      </span>{" "}
      · {t(`findings.status.${contributor.status}`)} · <q>{contributor.content}</q>
    </li>
  );
}

/** The leave-one-out margin as a bar: what is left with any one contributor removed, against the minimum. */
function LeaveOneOutBar({ support, loo, min }: { support: number; loo: number; min: number }) {
  const { t } = useI18n();
  const scale = Math.max(3, support, min + 1);
  return (
    <div className="loo-bar" role="img" aria-label={t("findings.bar", { loo, min })} data-testid="loo-bar">
      <div className="loo-bar__support" style={{ width: `${(support / scale) * 100}%` }} />
      <div className={loo >= min ? "loo-bar__left loo-bar__left--ok" : "loo-bar__left"} style={{ width: `${(loo / scale) * 100}%` }} />
      <div className="loo-bar__min" style={{ left: `${(min / scale) * 100}%` }} />
    </div>
  );
}
