"""The precision-recall chart of `bureau eval-retrieval`, as a small SVG written into docs/img/."""

from __future__ import annotations

from bureau.evaluation.metrics import Report, pr_curve
from bureau.evaluation.sets import LANGUAGES
from bureau.scope.relevance import Cuts


def render_chart(report: Report, cuts: dict[str, Cuts], title: str = "") -> str:
    """Precision–recall on the chosen half: the calibrated model per language, and today's cosine. `title`
    names the set when it is not the half's own name (blind set 2)."""
    width, height, left, top, plot_w, plot_h = 640, 420, 60, 30, 540, 320
    colours = {"en": "#1f77b4", "zh": "#d62728", "today": "#7f7f7f"}

    def xy(recall: float, precision: float) -> str:
        return f"{left + recall * plot_w:.1f},{top + (1 - precision) * plot_h:.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="18" font-size="14">Precision–recall of "known" ('
        f"{title or ('blind set' if report.split == 'blind' else report.split + ' half')}, {report.embedder})</text>",
    ]
    for i in range(6):
        v = i / 5
        y, x = top + (1 - v) * plot_h, left + v * plot_w
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v:.1f}</text>')
        parts.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{v:.1f}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 40}" text-anchor="middle">recall (answerable questions)</text>'
    )
    parts.append(
        f'<text transform="translate(16,{top + plot_h / 2}) rotate(-90)" text-anchor="middle">precision of known</text>'
    )
    series = {lang: [o for o in report.outcomes if o.probe.language == lang] for lang in LANGUAGES}
    series["today"] = report.today_outcomes
    for name, outcomes in series.items():
        points = pr_curve(outcomes)
        path = " ".join(xy(r, p) for _, r, p in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colours[name]}" stroke-width="2"/>')
        if name in cuts:
            at = [(r, p) for c, r, p in points if c >= cuts[name].known]
            if at:
                r, p = at[-1]
                parts.append(
                    f'<circle cx="{xy(r, p).split(",")[0]}" cy="{xy(r, p).split(",")[1]}" r="5" '
                    f'fill="{colours[name]}"/>'
                )
    legend = [
        ("en", "EN, logistic model (dot: known cut)"),
        ("zh", "ZH, logistic model (dot: known cut)"),
        ("today", "today: one cosine threshold, EN + ZH"),
    ]
    for i, (name, label) in enumerate(legend):
        y = height - 22 + 0 * i
        x = left + i * 200
        parts.append(f'<line x1="{x}" x2="{x + 18}" y1="{y}" y2="{y}" stroke="{colours[name]}" stroke-width="3"/>')
        parts.append(f'<text x="{x + 24}" y="{y + 4}" font-size="11">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
