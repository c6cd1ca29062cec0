import { useId, useRef, type ReactNode } from "react";
import { BOARD, type Role, type Space, type Trace } from "../../api/types";
import { isMessageKey } from "../../i18n/strings";
import type { Translate } from "../../i18n/translate";
import { useI18n } from "../../i18n/I18n";
import { spaceMemoryName, spaceName, useTopicLabel } from "../../labels/labels";
import { GrantKeys } from "../../components/GrantKeys";
import { LockIcon } from "../../components/LockIcon";
import { useElementWidth } from "../../components/useElementWidth";
import {
  buildXray,
  formatScore,
  legendEntries,
  markHasLabel,
  type LegendEntry,
  type LockedLane,
  type LockMark,
  type SearchedLane,
  type UnsearchedLane,
  type Xray,
  type XrayLane,
  type XrayMark,
  type XrayVerdict,
} from "../../state/xray";

/** Until the chart is measured (and in tests) it is laid out at this width. */
const DEFAULT_WIDTH = 1000;
const AXIS_LEFT = 180;
const AXIS_RIGHT_MARGIN = 30;
const TOP_MARGIN = 26;
const LANE_HEIGHT = 50;
const UNSEARCHED_LANE_HEIGHT = 34;
const CONTEXT_LANE_HEIGHT = 34;
const ROW_STEP = 22;
const AXIS_HEIGHT = 34;
const TICKS = [0, 0.25, 0.5, 0.75, 1];
/** Labels of marks right of this point go on their left, so they stay inside the chart. */
const LABEL_FLIP_AT = 0.78;
/** Room under the locks of a locked lane. */
const LOCK_MARGIN = 6;

/** Horizontal geometry at the chart's real pixel width, so labels keep their CSS size at any screen width. */
interface Axis {
  width: number;
  left: number;
  right: number;
  /** Narrow screens: lane names go above the axis instead of beside it. */
  compact: boolean;
  xFor: (position: number) => number;
}

/** Below this chart width the lane names move above their lane. */
const COMPACT_BELOW = 560;
const COMPACT_NAME_HEIGHT = 20;

function axisFor(width: number): Axis {
  const compact = width < COMPACT_BELOW;
  const left = compact ? 16 : AXIS_LEFT;
  const right = Math.max(left + 100, width - AXIS_RIGHT_MARGIN);
  return { width, left, right, compact, xFor: (position) => left + position * (right - left) };
}

function laneHeight(lane: XrayLane, axis: Axis): number {
  const extra = axis.compact ? COMPACT_NAME_HEIGHT : 0;
  if (lane.searched) return LANE_HEIGHT + (lane.rowCount - 1) * ROW_STEP + extra;
  const locks = lane.locked ? lane.locked.rowCount * ROW_STEP + LOCK_MARGIN : 0;
  return UNSEARCHED_LANE_HEIGHT + locks + extra;
}

function scopesText(t: Translate, scopes: Space[]): string {
  return scopes.map((space) => spaceMemoryName(t, space)).join(t("scopes.joiner"));
}

function VerdictLine({ xray, verdict }: { xray: Xray; verdict: XrayVerdict }) {
  const { t } = useI18n();
  const roleName = t(`role.${xray.role}`);
  if (verdict.kind === "found") {
    const both = verdict.sources.length > 1;
    const key = both ? "xray.verdict.ownAndBoard" : verdict.sources[0] === "board" ? "xray.verdict.board" : "xray.verdict.own";
    return (
      <p className="xray__verdict xray__verdict--found" data-testid="xray-verdict" data-verdict="found">
        <span aria-hidden="true">✔ </span>
        {t(key, { role: roleName })}
      </p>
    );
  }
  return (
    <div>
      <p className="xray__verdict xray__verdict--nothing" data-testid="xray-verdict" data-verdict="nothing_found">
        <span aria-hidden="true">✘ </span>
        {t("xray.verdict.nothing", { scopes: scopesText(t, verdict.scopes) })}
      </p>
      <p className="xray__explain">
        {verdict.bestMissScore === null
          ? t("xray.verdict.noCandidates")
          : t("xray.verdict.bestMiss", {
              score: formatScore(verdict.bestMissScore, [xray.threshold]),
              threshold: formatScore(xray.threshold, [verdict.bestMissScore]),
            })}
      </p>
    </div>
  );
}

function MarkGlyph({ mark, x, y }: { mark: XrayMark; x: number; y: number }) {
  const tone = mark.space === BOARD ? "board" : "own";
  switch (mark.kind) {
    case "hit":
      return <circle cx={x} cy={y} r={9} className={`xray-mark xray-mark--hit xray-mark--${tone}`} />;
    case "borderline_confirmed":
      return (
        <>
          <circle cx={x} cy={y} r={13} className={`xray-mark__ring xray-mark--${tone}`} />
          <circle cx={x} cy={y} r={8} className={`xray-mark xray-mark--hit xray-mark--${tone}`} />
        </>
      );
    case "uncertain":
      return (
        <>
          <circle cx={x} cy={y} r={11} className="xray-mark__ring xray-mark__ring--uncertain" />
          <circle cx={x} cy={y} r={6} className="xray-mark xray-mark--miss xray-mark--near" />
        </>
      );
    case "borderline_rejected":
      return <rect x={x - 7} y={y - 7} width={14} height={14} transform={`rotate(45 ${x} ${y})`} className="xray-mark xray-mark--miss" />;
    case "filtered_unsafe":
    case "excluded":
      return <path d={`M${x - 7} ${y - 7} L${x + 7} ${y + 7} M${x + 7} ${y - 7} L${x - 7} ${y + 7}`} className="xray-mark xray-mark--filtered" />;
    case "below_threshold":
      return <circle cx={x} cy={y} r={7} className={`xray-mark xray-mark--miss${mark.justBelow ? " xray-mark--near" : ""}`} />;
    case "duplicate":
      return <rect x={x - 6} y={y - 6} width={12} height={12} className="xray-mark xray-mark--miss" />;
  }
}

/** Why a candidate was not evidence, in words: a known reason, or the server's code as a last resort. */
export function reasonText(t: Translate, reason: string): string {
  const key = `reason.${reason}`;
  return isMessageKey(key) ? t(key) : reason.replace(/_+/g, " ");
}

/** The part of the coverage rule that held a candidate back, in words (null when none did). */
export function ruleText(t: Translate, rule: string | null | undefined): string | null {
  if (!rule) return null;
  const key = `rule.${rule}`;
  return isMessageKey(key) ? t(key) : rule.replace(/_+/g, " ");
}

function markLabel(t: Translate, topicLabel: (topic: string) => string, mark: XrayMark, cuts: number[]): string | null {
  if (!markHasLabel(mark)) return null;
  const parts: string[] = [];
  if (mark.isEvidence) parts.push(topicLabel(mark.topic));
  if (mark.kind === "borderline_confirmed") parts.push(t("kind.borderline_confirmed"));
  if (mark.reason && mark.kind !== "below_threshold") parts.push(reasonText(t, mark.reason));
  if (mark.justBelow) parts.push(t("xray.justBelow", { score: formatScore(mark.score, cuts) }));
  else if (mark.clamped) parts.push(formatScore(mark.score));
  return parts.join(" · ");
}

function LaneName({ t, space, top }: { t: Translate; space: Space; top: number }) {
  return (
    <text x={12} y={top} className="xray-lane__name">
      {spaceMemoryName(t, space)}
    </text>
  );
}

/** Where the text beside a lane name starts: right of the name, or under it on narrow screens. */
function besideName(axis: Axis, top: number): { x: number; y: number } {
  return axis.compact ? { x: 12, y: top + 38 } : { x: axis.left + 14, y: top + 22 };
}

function Searched({ lane, top, isOwnSpace, axis, cuts }: { lane: SearchedLane; top: number; isOwnSpace: boolean; axis: Axis; cuts: number[] }) {
  const { t } = useI18n();
  const topicLabel = useTopicLabel();
  const height = laneHeight(lane, axis);
  const baseline = top + height - 18;
  return (
    <g data-testid={`xray-lane-${lane.space}`} data-searched="true">
      <rect x={0} y={top} width={axis.width} height={height} className={isOwnSpace ? "xray-lane xray-lane--own" : "xray-lane"} />
      <LaneName t={t} space={lane.space} top={top + (axis.compact ? 18 : 21)} />
      <text
        x={axis.compact ? axis.width - 12 : 12}
        y={top + (axis.compact ? 18 : 40)}
        textAnchor={axis.compact ? "end" : "start"}
        className="xray-lane__count"
      >
        {t("xray.laneHits", { n: lane.hitCount })}
      </text>
      <line x1={axis.left} x2={axis.right} y1={baseline} y2={baseline} className="xray-lane__baseline" />
      {lane.marks.map((mark) => {
        const x = axis.xFor(mark.position);
        const y = baseline - mark.row * ROW_STEP;
        const label = markLabel(t, topicLabel, mark, cuts);
        const kindText = mark.reason ? reasonText(t, mark.reason) : t(mark.kind === "borderline_confirmed" ? "kind.borderline_confirmed" : "kind.hit");
        const held = ruleText(t, mark.rule);
        const title = `${topicLabel(mark.topic)} · ${formatScore(mark.score, cuts)} · ${kindText}${held ? ` · ${held}` : ""}`;
        return (
          <g key={mark.cardId} data-card-id={mark.cardId} data-kind={mark.kind} data-just-below={mark.justBelow || undefined}>
            <title>{title}</title>
            <MarkGlyph mark={mark} x={x} y={y} />
            {label && (
              <text
                x={x + (mark.position > LABEL_FLIP_AT ? -14 : 14)}
                y={y + 4}
                textAnchor={mark.position > LABEL_FLIP_AT ? "end" : "start"}
                className={`xray-mark__label${mark.isEvidence ? " xray-mark__label--hit" : ""}${mark.justBelow ? " xray-mark__label--near" : ""}`}
              >
                {label}
              </text>
            )}
          </g>
        );
      })}
    </g>
  );
}

/** A padlock drawn in the chart at (x, y). */
function LockGlyph({ x, y }: { x: number; y: number }) {
  return (
    <g className="xray-mark xray-mark--locked">
      <rect x={x - 6} y={y - 2} width={12} height={9} rx={1.5} />
      <path d={`M${x - 3.5} ${y - 2}V${y - 5}a3.5 3.5 0 0 1 7 0V${y - 2}`} className="xray-mark__shackle" />
    </g>
  );
}

/** Another compartment in the presenter act: its name, what it is, and a lock at the score of each row it handed
 * back (its space and score: the request holds no key to anything else). */
function Locked({ lane, locked, top, axis }: { lane: UnsearchedLane; locked: LockedLane; top: number; axis: Axis }) {
  const { t } = useI18n();
  const name = spaceName(t, lane.space);
  const note = besideName(axis, top);
  const height = laneHeight(lane, axis);
  const baseline = top + height - LOCK_MARGIN - ROW_STEP / 2 - 4;
  return (
    <g data-testid={`xray-lane-${lane.space}`} data-searched="false" data-locked={locked.total} className="xray-lane-group--locked">
      <rect x={0} y={top} width={axis.width} height={height} className="xray-lane xray-lane--locked" />
      <LaneName t={t} space={lane.space} top={top + (axis.compact ? 18 : 22)} />
      <text
        x={axis.compact ? axis.width - 12 : 12}
        y={top + (axis.compact ? 18 : 40)}
        textAnchor={axis.compact ? "end" : "start"}
        className="xray-lane__count"
      >
        {t("xray.laneLocked", { n: locked.total })}
      </text>
      <text x={note.x} y={note.y} className="xray-lane__locked">
        {t("locked.row")}
      </text>
      {locked.marks.map((mark) => (
        <LockedMark key={mark.score} mark={mark} name={name} x={axis.xFor(mark.position)} y={baseline - mark.row * ROW_STEP} />
      ))}
    </g>
  );
}

function LockedMark({ mark, name, x, y }: { mark: LockMark; name: string; x: number; y: number }) {
  const { t } = useI18n();
  const shown = `${formatScore(mark.score)}${mark.count > 1 ? ` ×${mark.count}` : ""}`;
  return (
    <g data-testid="xray-lock" data-space={mark.space} data-score={mark.score} data-count={mark.count}>
      <title>{`${name} · ${shown} · ${t("locked.row")}`}</title>
      <LockGlyph x={x} y={y} />
      <text x={x + 10} y={y + 6} className="xray-mark__label xray-mark__label--locked">
        {shown}
      </text>
    </g>
  );
}

/** A space the role may not search: greyed, with a count of what is there and never the content. */
function Unsearched({ lane, top, axis }: { lane: UnsearchedLane; top: number; axis: Axis }) {
  const { t } = useI18n();
  const owner = spaceName(t, lane.space);
  const text = besideName(axis, top);
  if (lane.locked) return <Locked lane={lane} locked={lane.locked} top={top} axis={axis} />;
  return (
    <g data-testid={`xray-lane-${lane.space}`} data-searched="false" className="xray-lane-group--unsearched">
      <rect x={0} y={top} width={axis.width} height={laneHeight(lane, axis)} className="xray-lane xray-lane--unsearched" />
      <LaneName t={t} space={lane.space} top={top + (axis.compact ? 18 : 22)} />
      <text x={text.x} y={text.y} className="xray-lane__unsearched">
        {t(lane.space === BOARD ? "xray.notSearchedBoard" : "xray.notSearched", { role: owner, n: lane.cardCount })}
      </text>
    </g>
  );
}

const contextHeight = (axis: Axis) => CONTEXT_LANE_HEIGHT + (axis.compact ? COMPACT_NAME_HEIGHT : 0);

function ContextLane({ xray, top, axis }: { xray: Xray; top: number; axis: Axis }) {
  const { t } = useI18n();
  if (!xray.context) return null;
  const text = besideName(axis, top);
  return (
    <g data-testid="xray-context" data-count={xray.context.count}>
      <rect x={0} y={top} width={axis.width} height={contextHeight(axis)} className="xray-lane xray-lane--context" />
      <text x={12} y={top + (axis.compact ? 18 : 22)} className="xray-lane__name xray-lane__name--context">
        {t("xray.contextLane")}
      </text>
      <circle cx={text.x + 6} cy={text.y - 5} r={6} className="xray-mark xray-mark--context" />
      <text x={text.x + 18} y={text.y} className="xray-lane__unsearched">
        {t("xray.contextGroup", { n: xray.context.count })}
      </text>
    </g>
  );
}

function ScoreChart({ xray, labelId }: { xray: Xray; labelId: string }) {
  const { t } = useI18n();
  const containerRef = useRef<HTMLDivElement>(null);
  const axis = axisFor(useElementWidth(containerRef) ?? DEFAULT_WIDTH);
  const { xFor } = axis;
  const cuts = [xray.threshold];
  const searchedLanes = xray.lanes.filter((lane): lane is SearchedLane => lane.searched);
  const otherLanes = xray.lanes.filter((lane): lane is UnsearchedLane => !lane.searched);
  let cursor = TOP_MARGIN;
  const searchedTops = searchedLanes.map((lane) => {
    const top = cursor;
    cursor += laneHeight(lane, axis);
    return top;
  });
  const scoredBottom = cursor;
  const axisTop = scoredBottom;
  cursor += AXIS_HEIGHT;
  const contextTop = cursor;
  if (xray.context) cursor += contextHeight(axis) + 4;
  const otherTops = otherLanes.map((lane) => {
    const top = cursor;
    cursor += laneHeight(lane, axis) + 4;
    return top;
  });
  const height = cursor;
  const thresholdX = xFor(Math.min(1, Math.max(0, xray.threshold)));
  const floorX = xFor(Math.min(1, Math.max(0, xray.borderlineFloor)));

  return (
    <div ref={containerRef} className="xray__chart-box">
      <svg className="xray__chart" width={axis.width} height={height} viewBox={`0 0 ${axis.width} ${height}`} role="img" aria-labelledby={labelId}>
        {searchedLanes.map((lane, index) => (
          <Searched key={lane.space} lane={lane} top={searchedTops[index] ?? TOP_MARGIN} isOwnSpace={lane.space === xray.role} axis={axis} cuts={cuts} />
        ))}
        {floorX < thresholdX && (
          <g>
            <rect x={floorX} y={TOP_MARGIN} width={thresholdX - floorX} height={scoredBottom - TOP_MARGIN} className="xray-band" />
            <text x={thresholdX - 6} y={TOP_MARGIN - 10} textAnchor="end" className="xray-band__label">
              {t("xray.borderlineBand")}
            </text>
          </g>
        )}
        <line x1={thresholdX} x2={thresholdX} y1={TOP_MARGIN - 6} y2={scoredBottom} className="xray-threshold" data-testid="xray-threshold" />
        <text x={thresholdX + 6} y={TOP_MARGIN - 10} className="xray-threshold__label">
          {t("xray.threshold", { value: formatScore(xray.threshold) })}
        </text>
        <line x1={axis.left} x2={axis.right} y1={axisTop} y2={axisTop} className="xray-axis" />
        {TICKS.map((tick) => (
          <g key={tick}>
            <line x1={xFor(tick)} x2={xFor(tick)} y1={axisTop} y2={axisTop + 6} className="xray-axis" />
            <text x={xFor(tick)} y={axisTop + 24} textAnchor="middle" className="xray-axis__label">
              {tick.toFixed(2)}
            </text>
          </g>
        ))}
        <ContextLane xray={xray} top={contextTop} axis={axis} />
        {otherLanes.map((lane, index) => (
          <Unsearched key={lane.space} lane={lane} top={otherTops[index] ?? contextTop} axis={axis} />
        ))}
      </svg>
    </div>
  );
}

const LEGEND: Record<LegendEntry, { glyph: ReactNode; tone: string }> = {
  hit_own: { glyph: "●", tone: "own" },
  hit_board: { glyph: "●", tone: "board" },
  borderline_confirmed: { glyph: "◎", tone: "own" },
  miss: { glyph: "●", tone: "miss" },
  uncertain: { glyph: "◎", tone: "own" },
  borderline_rejected: { glyph: "◆", tone: "miss" },
  duplicate: { glyph: "■", tone: "miss" },
  filtered_unsafe: { glyph: "✕", tone: "miss" },
  excluded: { glyph: "✕", tone: "miss" },
  context: { glyph: "○", tone: "miss" },
  locked: { glyph: <LockIcon />, tone: "locked" },
  not_searched: { glyph: "▭", tone: "miss" },
};

function Legend({ xray }: { xray: Xray }) {
  const { t } = useI18n();
  return (
    <p className="xray__legend" aria-hidden="true" data-testid="xray-legend">
      {legendEntries(xray).map((entry) => (
        <span key={entry} className={`legend legend--${LEGEND[entry].tone}`} data-entry={entry}>
          {LEGEND[entry].glyph} {t(`xray.legend.${entry}`)}
        </span>
      ))}
    </p>
  );
}

/** "cosine 0.42 · coverage_mean 0.94 · …": every signal the relevance model weighed, in the server's order. */
function formatSignals(signals: Record<string, number>): string {
  return Object.entries(signals)
    .map(([name, value]) => `${name.replace(/_/g, " ")} ${value.toFixed(2)}`)
    .join(" · ");
}

type TableRow =
  | ((Trace["hits"][number] & { reason: null }) | (Trace["misses"][number] & { status: null }))
  | { locked: true; space: Space; score: number; index: number };

function CandidateTable({ xray, trace }: { xray: Xray; trace: Trace }) {
  const { t } = useI18n();
  const topicLabel = useTopicLabel();
  const cuts = [xray.threshold];
  const rows: TableRow[] = [
    ...trace.hits.map((hit) => ({ ...hit, reason: null })),
    ...trace.misses.map((miss) => ({ ...miss, status: null })),
    ...xray.locked.map((row, index) => ({ locked: true as const, space: row.space, score: row.score, index })),
  ].sort((a, b) => b.score - a.score);
  return (
    <details className="xray__details">
      <summary>{t("xray.tableCaption")}</summary>
      <div className="table-scroll">
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">{t("xray.col.space")}</th>
              <th scope="col">{t("xray.col.topic")}</th>
              <th scope="col">{t("xray.col.score")}</th>
              <th scope="col">{t("xray.col.outcome")}</th>
              <th scope="col">{t("xray.col.signals")}</th>
              <th scope="col">{t("xray.col.card")}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) =>
              "locked" in row ? (
                <tr key={`locked-${row.index}`} data-testid="xray-locked-row" data-space={row.space}>
                  <td>{spaceMemoryName(t, row.space)}</td>
                  <td>—</td>
                  <td>{formatScore(row.score, cuts)}</td>
                  <td>
                    <LockIcon /> {t("locked.row")}
                  </td>
                  <td />
                  <td>—</td>
                </tr>
              ) : (
                <tr key={`${row.space}-${row.card_id}`}>
                  <td>{spaceMemoryName(t, row.space)}</td>
                  <td>{topicLabel(row.topic)}</td>
                  <td>{formatScore(row.score, cuts)}</td>
                  <td>
                    {row.reason ? reasonText(t, row.reason) : t(row.status === "borderline_confirmed" ? "kind.borderline_confirmed" : "kind.hit")}
                    {row.rule && <span data-testid="xray-rule"> · {ruleText(t, row.rule)}</span>}
                  </td>
                  <td className="xray__signals">{formatSignals(row.signals ?? {})}</td>
                  <td>
                    <code>{row.card_id}</code>
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
    </details>
  );
}

interface MemoryXrayProps {
  trace: Trace | null;
  /** The role whose X-ray this is (shown before its first question). */
  role: Role;
  /** Cards per space (session records excluded), for the greyed lanes of spaces the role may not search. */
  cardCounts?: Partial<Record<Space, number>>;
  /** Instead of "Memory X-ray", when several are shown together (a cross-examination's record entry). */
  title?: string;
}

export function MemoryXray({ trace, role, cardCounts = {}, title }: MemoryXrayProps) {
  const { t } = useI18n();
  const labelId = useId();
  const headingId = useId();
  const heading = <h2 id={headingId}>{title ?? t("xray.heading")}</h2>;
  if (trace === null) {
    return (
      <section className="panel xray" aria-labelledby={headingId}>
        {heading}
        <p className="muted">{t("xray.empty", { role: t(`role.${role}`) })}</p>
      </section>
    );
  }
  const xray = buildXray(trace, cardCounts);
  const responder = t(xray.responder === "role_voice" ? "mode.role_voice" : "mode.evidence");
  return (
    <section className="panel xray" aria-labelledby={headingId} data-testid="xray">
      <div className="xray__head">
        <div id={labelId}>
          {heading}
          {xray.verdict.kind === "found" && (
            <p className="xray__searched">{t("xray.searched", { role: t(`role.${xray.role}`), scopes: scopesText(t, trace.searched_scopes) })}</p>
          )}
          <VerdictLine xray={xray} verdict={xray.verdict} />
          {xray.unfiltered && (
            <p className="xray__unfiltered" data-testid="xray-unfiltered">
              <LockIcon /> {t("xray.unfiltered", { role: t(`role.${xray.role}`) })}
            </p>
          )}
          <GrantKeys grant={trace.grant} className="xray__keys" />
        </div>
        <ul className="xray__facts">
          <li className="xray__latency" data-testid="xray-latency">
            {t("xray.latency", { ms: Math.round(xray.durationMs) })}
          </li>
          <li>{t("xray.responder", { responder })}</li>
          {xray.fallbackReason && <li>{t("xray.fallback", { reason: t(`fallback.${xray.fallbackReason}`) })}</li>}
        </ul>
      </div>
      <ScoreChart xray={xray} labelId={labelId} />
      <Legend xray={xray} />
      <CandidateTable xray={xray} trace={trace} />
    </section>
  );
}
