import { useCallback, useEffect, useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { LIMITS } from "../../api/rules";
import type { ClaimEvaluation, Finding, FindingContributor, FindingEvaluation, FindingPromotion } from "../../api/types";
import { describeError } from "../../components/describeError";
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

/** The fifth act: a claim in the operator's words, checked for independent support (docs/findings.md). */
export function FindingsPanel({ claims, refreshKey, evaluate, promote, list }: FindingsPanelProps) {
  const { t } = useI18n();
  const id = useId();
  const [claim, setClaim] = useState("");
  const [busy, setBusy] = useState<"evaluate" | "promote" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<FindingEvaluation | null>(null);
  const [findings, setFindings] = useState<Finding[]>([]);

  const reload = useCallback(() => {
    list().then(
      (body) => setFindings(body.findings),
      () => undefined, // the list is a view: a failed read keeps the last one
    );
  }, [list]);
  useEffect(reload, [reload, refreshKey]);

  function failed(caught: unknown) {
    if (caught instanceof ApiError && caught.code === "UNSAFE_INPUT") setError(t("findings.unsafe"));
    else if (caught instanceof ApiError && caught.code === "FINDING_NOT_QUALIFIED") setError(t("findings.notQualified"));
    else if (caught instanceof ApiError && caught.code === "FINDING_PENDING") setError(t("findings.pending"));
    else setError(describeError(t, caught));
  }

  async function run(given: string | undefined) {
    setBusy("evaluate");
    setError(null);
    try {
      setResult(await evaluate(given));
    } catch (caught) {
      failed(caught);
    } finally {
      setBusy(null);
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (claim.trim() === "") {
      setError(t("findings.empty"));
      return;
    }
    await run(claim.trim());
  }

  async function promoteClaim(text: string) {
    setBusy("promote");
    setError(null);
    try {
      await promote(text);
      setResult(await evaluate(text));
      reload();
    } catch (caught) {
      failed(caught);
    } finally {
      setBusy(null);
    }
  }

  return (
    <section className="panel findings" aria-labelledby={`${id}-heading`} data-testid="findings-panel">
      <h2 id={`${id}-heading`}>{t("findings.heading")}</h2>
      <p className="muted">{t("findings.intro")}</p>
      <form onSubmit={submit} className="stacked-form">
        <label htmlFor={`${id}-claim`}>{t("findings.claim")}</label>
        <div className="form-row">
          <input
            id={`${id}-claim`}
            type="text"
            className="grow"
            maxLength={LIMITS.claim}
            value={claim}
            list={`${id}-claims`}
            onChange={(event) => setClaim(event.target.value)}
          />
          <button type="submit" className="button button--primary" disabled={busy !== null}>
            {busy === "evaluate" ? t("findings.evaluating") : t("findings.evaluate")}
          </button>
          <button type="button" className="button" disabled={busy !== null} onClick={() => void run(undefined)}>
            {t("findings.propose")}
          </button>
        </div>
        <datalist id={`${id}-claims`}>
          {claims.map((preset) => (
            <option key={preset} value={preset} />
          ))}
        </datalist>
        <p role="alert" className="form-error">
          {error}
        </p>
      </form>
      {result && (
        <div aria-live="polite" data-testid="findings-evaluation">
          {result.claims.length === 0 && <p className="muted">{t("findings.noProposals")}</p>}
          {result.claims.map((evaluated) => (
            <ClaimResult
              key={evaluated.claim}
              evaluated={evaluated}
              busy={busy !== null}
              onPromote={() => void promoteClaim(evaluated.claim)}
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
