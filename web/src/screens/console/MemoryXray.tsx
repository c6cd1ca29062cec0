import { useId, useRef } from "react";
import { BOARD, type Space, type Trace } from "../../api/types";
import type { Translate } from "../../i18n/translate";
import { useI18n } from "../../i18n/I18n";
import { useElementWidth } from "../../components/useElementWidth";
import { buildXray, markHasLabel, markNeedsReasonLabel, type Xray, type XrayLane, type XrayMark, type XrayVerdict } from "../../state/xray";

/** Until the chart is measured (and in tests) it is laid out at this width. */
const DEFAULT_WIDTH = 1000;
const AXIS_LEFT = 180;
const AXIS_RIGHT_MARGIN = 30;
const TOP_MARGIN = 30;
const LANE_HEIGHT = 64;
const ROW_STEP = 22;
const AXIS_HEIGHT = 34;
const TICKS = [0, 0.25, 0.5, 0.75, 1];
/** Labels of marks right of this point go on their left, so they stay inside the chart. */
const LABEL_FLIP_AT = 0.78;

/** Horizontal geometry at the chart's real pixel width, so labels keep their CSS size at any screen width. */
interface Axis {
  width: number;
  left: number;
  right: number;
  xFor: (position: number) => number;
}

function axisFor(width: number): Axis {
  const right = Math.max(AXIS_LEFT + 100, width - AXIS_RIGHT_MARGIN);
  return { width, left: AXIS_LEFT, right, xFor: (position) => AXIS_LEFT + position * (right - AXIS_LEFT) };
}

const laneHeight = (lane: XrayLane) => LANE_HEIGHT + (lane.rowCount - 1) * ROW_STEP;
const formatScore = (score: number) => score.toFixed(2);

function spaceName(t: Translate, space: Space): string {
  return space === BOARD ? t("space.bulletin_board") : t(`role.${space}`);
}

function scopesText(t: Translate, scopes: Space[]): string {
  return scopes.map((space) => spaceName(t, space)).join(t("scopes.joiner"));
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
          : t("xray.verdict.bestMiss", { score: formatScore(verdict.bestMissScore), threshold: formatScore(xray.threshold) })}
        {verdict.contextOnlyCount > 0 && <> {t("xray.verdict.contextOnly", { n: verdict.contextOnlyCount })}</>}
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
    case "borderline_rejected":
      return <rect x={x - 7} y={y - 7} width={14} height={14} transform={`rotate(45 ${x} ${y})`} className="xray-mark xray-mark--miss" />;
    case "derived_context":
    case "type_not_evidence":
      return <circle cx={x} cy={y} r={8} className="xray-mark xray-mark--context" />;
    case "filtered_unsafe":
    case "expired":
    case "failed_validation":
      return <path d={`M${x - 7} ${y - 7} L${x + 7} ${y + 7} M${x + 7} ${y - 7} L${x - 7} ${y + 7}`} className="xray-mark xray-mark--filtered" />;
    case "below_threshold":
      return <circle cx={x} cy={y} r={7} className="xray-mark xray-mark--miss" />;
    case "duplicate":
      return <rect x={x - 6} y={y - 6} width={12} height={12} className="xray-mark xray-mark--miss" />;
  }
}

function markLabel(t: Translate, mark: XrayMark): string | null {
  if (!markHasLabel(mark.kind, mark.clamped)) return null;
  const parts: string[] = [];
  if (mark.kind === "hit") parts.push(mark.topic);
  if (markNeedsReasonLabel(mark.kind)) parts.push(t(`kind.${mark.kind}`));
  if (mark.clamped) parts.push(formatScore(mark.score));
  return parts.join(" · ");
}

function Lane({ lane, top, isOwnSpace, axis }: { lane: XrayLane; top: number; isOwnSpace: boolean; axis: Axis }) {
  const { t } = useI18n();
  const height = laneHeight(lane);
  const baseline = top + height - 20;
  return (
    <g data-testid={`xray-lane-${lane.space}`}>
      <rect x={0} y={top} width={axis.width} height={height} className={isOwnSpace ? "xray-lane xray-lane--own" : "xray-lane"} />
      <text x={12} y={top + 26} className="xray-lane__name">
        {spaceName(t, lane.space)}
      </text>
      <text x={12} y={top + 46} className="xray-lane__count">
        {t("xray.laneHits", { n: lane.hitCount })}
      </text>
      <line x1={axis.left} x2={axis.right} y1={baseline} y2={baseline} className="xray-lane__baseline" />
      {lane.marks.map((mark) => {
        const x = axis.xFor(mark.position);
        const y = baseline - mark.row * ROW_STEP;
        const label = markLabel(t, mark);
        const title = `${mark.cardId} · ${mark.topic} · ${formatScore(mark.score)} · ${t(`kind.${mark.kind}`)}`;
        return (
          <g key={mark.cardId} data-card-id={mark.cardId} data-kind={mark.kind}>
            <title>{title}</title>
            <MarkGlyph mark={mark} x={x} y={y} />
            {label && (
              <text
                x={x + (mark.position > LABEL_FLIP_AT ? -14 : 14)}
                y={y + 4}
                textAnchor={mark.position > LABEL_FLIP_AT ? "end" : "start"}
                className={`xray-mark__label${mark.isEvidence ? " xray-mark__label--hit" : ""}`}
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

function ScoreChart({ xray, labelId }: { xray: Xray; labelId: string }) {
  const { t } = useI18n();
  const containerRef = useRef<HTMLDivElement>(null);
  const axis = axisFor(useElementWidth(containerRef) ?? DEFAULT_WIDTH);
  const { xFor } = axis;
  const tops: number[] = [];
  let cursor = TOP_MARGIN;
  for (const lane of xray.lanes) {
    tops.push(cursor);
    cursor += laneHeight(lane);
  }
  const lanesBottom = cursor;
  const height = lanesBottom + AXIS_HEIGHT;
  const thresholdX = xFor(Math.min(1, Math.max(0, xray.threshold)));
  const floorX = xFor(Math.min(1, Math.max(0, xray.borderlineFloor)));

  return (
    <div ref={containerRef} className="xray__chart-box">
      <svg className="xray__chart" width={axis.width} height={height} viewBox={`0 0 ${axis.width} ${height}`} role="img" aria-labelledby={labelId}>
        {xray.lanes.map((lane, index) => (
          <Lane key={lane.space} lane={lane} top={tops[index] ?? TOP_MARGIN} isOwnSpace={lane.space === xray.role} axis={axis} />
        ))}
        {floorX < thresholdX && (
          <g>
            <rect x={floorX} y={TOP_MARGIN} width={thresholdX - floorX} height={lanesBottom - TOP_MARGIN} className="xray-band" />
            <text x={(floorX + thresholdX) / 2} y={TOP_MARGIN - 10} textAnchor="middle" className="xray-band__label">
              {t("xray.borderlineBand")}
            </text>
          </g>
        )}
        <line x1={thresholdX} x2={thresholdX} y1={TOP_MARGIN - 6} y2={lanesBottom} className="xray-threshold" data-testid="xray-threshold" />
        <text x={thresholdX + 6} y={TOP_MARGIN - 10} className="xray-threshold__label">
          {t("xray.threshold", { value: formatScore(xray.threshold) })}
        </text>
        <line x1={axis.left} x2={axis.right} y1={lanesBottom} y2={lanesBottom} className="xray-axis" />
        {TICKS.map((tick) => (
          <g key={tick}>
            <line x1={xFor(tick)} x2={xFor(tick)} y1={lanesBottom} y2={lanesBottom + 6} className="xray-axis" />
            <text x={xFor(tick)} y={lanesBottom + 24} textAnchor="middle" className="xray-axis__label">
              {tick.toFixed(2)}
            </text>
          </g>
        ))}
      </svg>
    </div>
  );
}

function CandidateTable({ xray }: { xray: Xray }) {
  const { t } = useI18n();
  const marks = xray.lanes.flatMap((lane) => lane.marks).sort((a, b) => b.score - a.score);
  return (
    <details className="xray__details">
      <summary>{t("xray.tableCaption")}</summary>
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">{t("xray.col.card")}</th>
            <th scope="col">{t("xray.col.space")}</th>
            <th scope="col">{t("xray.col.topic")}</th>
            <th scope="col">{t("xray.col.score")}</th>
            <th scope="col">{t("xray.col.outcome")}</th>
          </tr>
        </thead>
        <tbody>
          {marks.map((mark) => (
            <tr key={`${mark.space}-${mark.cardId}`}>
              <td>
                <code>{mark.cardId}</code>
              </td>
              <td>{spaceName(t, mark.space)}</td>
              <td>{mark.topic}</td>
              <td>{mark.clamped ? t("xray.clamped", { score: formatScore(mark.score) }) : formatScore(mark.score)}</td>
              <td>{t(`kind.${mark.kind}`)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

export function MemoryXray({ trace }: { trace: Trace | null }) {
  const { t } = useI18n();
  const labelId = useId();
  if (trace === null) {
    return (
      <section className="panel xray" aria-labelledby="xray-heading">
        <h2 id="xray-heading">{t("xray.heading")}</h2>
        <p className="muted">{t("xray.empty")}</p>
      </section>
    );
  }
  const xray = buildXray(trace);
  const responder = t(xray.responder === "role_voice" ? "mode.role_voice" : "mode.evidence");
  return (
    <section className="panel xray" aria-labelledby="xray-heading" data-testid="xray">
      <div className="xray__head">
        <div id={labelId}>
          <h2 id="xray-heading">{t("xray.heading")}</h2>
          <p className="xray__searched">{t("xray.searched", { role: t(`role.${xray.role}`), scopes: scopesText(t, trace.searched_scopes) })}</p>
          <VerdictLine xray={xray} verdict={xray.verdict} />
        </div>
        <ul className="xray__facts">
          <li className="xray__latency" data-testid="xray-latency">
            {t("xray.latency", { ms: Math.round(xray.durationMs) })}
          </li>
          <li>{t("xray.responder", { responder })}</li>
          {xray.fallbackReason && <li>{t("xray.fallback", { reason: xray.fallbackReason })}</li>}
        </ul>
      </div>
      <ScoreChart xray={xray} labelId={labelId} />
      <p className="xray__legend" aria-hidden="true">
        <span className="legend legend--own">● {t("xray.legend.hit")}</span>
        <span className="legend legend--board">● {t("xray.legend.hit")} ({t("space.bulletin_board")})</span>
        <span className="legend legend--miss">● {t("xray.legend.miss")}</span>
        <span className="legend legend--miss">◆ {t("kind.borderline_rejected")}</span>
        <span className="legend legend--miss">○ {t("kind.derived_context")}</span>
        <span className="legend legend--miss">✕ {t("kind.filtered_unsafe")}</span>
        <span className="legend legend--miss">■ {t("kind.duplicate")}</span>
      </p>
      <CandidateTable xray={xray} />
    </section>
  );
}
