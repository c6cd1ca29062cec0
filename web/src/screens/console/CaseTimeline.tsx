import { useEffect, useId, useRef } from "react";
import { api } from "../../api/client";
import type { CrossExaminationEntry } from "../../api/types";
import type { CrossExaminationResult, Role, Space } from "../../api/types";
import { useI18n } from "../../i18n/I18n";
import type { Translate } from "../../i18n/translate";
import { entryTraces, type TimelineRow } from "../../state/caseRecord";
import { CrossExaminationOutcome } from "./CrossExamination";
import { MemoryXray } from "./MemoryXray";

function roleNames(t: Translate, roles: readonly Role[]): string {
  return roles.map((role) => t(`role.${role}`)).join(t("scopes.joiner"));
}

function entryTitle(t: Translate, row: TimelineRow): string {
  const { entry } = row;
  return entry.kind === "interrogation"
    ? t("record.interrogation", { role: roleNames(t, entry.roles) })
    : t("record.crossExamination", { roles: roleNames(t, entry.roles) });
}

function useClock(): (iso: string) => string {
  const { language } = useI18n();
  const format = new Intl.DateTimeFormat(language === "zh" ? "zh-CN" : "en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return (iso) => format.format(new Date(iso));
}

interface CaseTimelineProps {
  caseId: string;
  rows: TimelineRow[];
  openId: number | null;
  onOpen: (id: number) => void;
  /** Older entries remain on the server. */
  hasMore?: boolean;
  /** An older page is on its way. */
  loadingOlder?: boolean;
  onLoadMore?: () => void;
}

/** Calls `onVisible` whenever the element scrolls into view inside its scrolling list (or the page). */
function useWhenVisible(onVisible: () => void, active: boolean) {
  const ref = useRef<HTMLLIElement>(null);
  const callback = useRef(onVisible);
  callback.current = onVisible;
  useEffect(() => {
    const element = ref.current;
    if (!active || element === null || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((seen) => {
      if (seen.some((item) => item.isIntersecting)) callback.current();
    }, { root: element.closest("ol"), rootMargin: "0px 0px 120px 0px" });
    observer.observe(element);
    return () => observer.disconnect();
  }, [active]);
  return ref;
}

/** Every interrogation and cross-examination of the case, newest first; a row opens that entry's X-ray again.
 * Older entries load as the end of the list scrolls into view (or from its button). */
export function CaseTimeline({ caseId, rows, openId, onOpen, hasMore = false, loadingOlder = false, onLoadMore = () => undefined }: CaseTimelineProps) {
  const { t } = useI18n();
  const clock = useClock();
  const headingId = useId();
  const sentinel = useWhenVisible(onLoadMore, hasMore && !loadingOlder);
  return (
    <section className="panel timeline" aria-labelledby={headingId} data-testid="case-timeline">
      <h2 id={headingId}>{t("record.heading")}</h2>
      {rows.length === 0 ? (
        <p className="muted">{t("record.empty")}</p>
      ) : (
        <ol className="timeline__list" reversed aria-busy={loadingOlder}>
          {rows.map((row) => (
            <li key={row.entry.id}>
              <button
                type="button"
                className="timeline__entry"
                data-entry-id={row.entry.id}
                data-number={row.number}
                data-sealed={row.sealed || undefined}
                aria-haspopup="dialog"
                aria-expanded={openId === row.entry.id}
                onClick={() => onOpen(row.entry.id)}
              >
                <span className="timeline__top">
                  <span className="timeline__number">{t("record.number", { n: row.number })}</span>
                  <span className="timeline__what">{entryTitle(t, row)}</span>
                  <time dateTime={row.entry.created_at}>{clock(row.entry.created_at)}</time>
                </span>
                <span className="timeline__question">{row.entry.question ?? t("record.textGone")}</span>
                <span className="timeline__badges">
                  {row.sealed ? (
                    <span className="badge badge--sealed">🔒 {t("record.sealed")}</span>
                  ) : (
                    <span className={`badge badge--${row.certainty}`}>{t(`certainty.${row.certainty}`)}</span>
                  )}
                </span>
              </button>
            </li>
          ))}
          {hasMore && (
            <li ref={sentinel} className="timeline__more" data-testid="timeline-more">
              <button type="button" className="button" disabled={loadingOlder} aria-busy={loadingOlder} onClick={onLoadMore}>
                {loadingOlder ? t("record.loadingOlder") : t("record.loadOlder")}
              </button>
            </li>
          )}
        </ol>
      )}
      {rows.length > 0 && (
        <p className="timeline__downloads">
          <a className="button" href={api.recordExportUrl(caseId, "json")} download>
            {t("record.downloadJson")}
          </a>
          <a className="button" href={api.recordExportUrl(caseId, "markdown")} download>
            {t("record.downloadReport")}
          </a>
        </p>
      )}
    </section>
  );
}

/** The record entry in the shape the live cross-examination result has, so both render the same way. */
function asCrossExaminationResult(t: Translate, entry: CrossExaminationEntry): CrossExaminationResult {
  const gone = t("record.textGone");
  return {
    roles: entry.roles,
    results: entry.results.map((result) => ({ ...result, answer: result.answer ?? gone })),
    conclusion: { ...entry.conclusion, text: entry.conclusion.text ?? gone, provenance: entry.provenance },
  };
}

interface RecordEntryDialogProps {
  row: TimelineRow | null;
  cardCounts: Partial<Record<Space, number>>;
  onClose: () => void;
}

/** One record entry shown again, as it was answered: question, answer(s) and the X-ray of each retrieval. */
export function RecordEntryDialog({ row, cardCounts, onClose }: RecordEntryDialogProps) {
  const { t } = useI18n();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const open = row !== null;

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  const traces = row ? entryTraces(row.entry) : [];
  return (
    <dialog
      ref={dialogRef}
      className="dialog dialog--wide"
      aria-labelledby={titleId}
      data-testid="record-entry"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      {row && (
        <>
          <div className="dialog__head">
            <h2 id={titleId}>
              {t("record.number", { n: row.number })} · {entryTitle(t, row)}
            </h2>
            <button type="button" className="button" onClick={onClose}>
              {t("record.close")}
            </button>
          </div>
          <p>
            <strong>{t("record.question")}:</strong> {row.entry.question ?? t("record.textGone")}
          </p>
          {row.entry.erased_ingredients.length > 0 && <p className="muted">{t("record.erasedIngredients")}</p>}
          {row.entry.kind === "interrogation" ? (
            <p data-testid="record-answer">
              <span className={`badge badge--${row.certainty}`}>{t(`certainty.${row.certainty}`)}</span> <strong>{t("record.answer")}:</strong>{" "}
              {row.entry.answer ?? t("record.textGone")}
            </p>
          ) : (
            <CrossExaminationOutcome result={asCrossExaminationResult(t, row.entry)} />
          )}
          {traces.map(({ role, trace }) => (
            <MemoryXray key={role} trace={trace} role={role} cardCounts={cardCounts} title={traces.length > 1 ? t("record.xrayOf", { role: t(`role.${role}`) }) : undefined} />
          ))}
        </>
      )}
    </dialog>
  );
}
