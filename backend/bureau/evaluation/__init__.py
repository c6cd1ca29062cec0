"""Evaluation of honest retrieval (`bureau eval-retrieval`, docs/retrieval.md): the sets, the scoring, the
fit, the metrics, the chart and the report. Only the CLI imports it inside `bureau` (an import contract in
pyproject.toml); scripts/ and tests/ use it too.

- `sets`     the labelled and blind sets (loading);
- `scoring`  every question scored and judged as the store does it;
- `fitting`  the logistic model and its cut points, from the calibration half (`--fit`);
- `metrics`  the figures, and the report of one half;
- `chart`    the precision-recall SVG;
- `report`   the tables and the run.
"""

from bureau.evaluation.chart import render_chart
from bureau.evaluation.fitting import MODEL_PATH, fit, fit_logistic, half_split_figures, write_model
from bureau.evaluation.metrics import TODAY_THRESHOLD, Report, auroc, evaluate, metrics, pr_curve
from bureau.evaluation.report import (
    BLIND_2_CHART_PATH,
    BLIND_3_CHART_PATH,
    BLIND_CHART_PATH,
    CHART_PATH,
    COMPARE_ROWS,
    ROWS,
    render_comparison,
    render_table,
    run,
)
from bureau.evaluation.scoring import Outcome, Scored, build_scorer, judge, score_set, without_rule
from bureau.evaluation.sets import (
    ANSWERABLE_KINDS,
    BLIND_SET_2_PATH,
    BLIND_SET_3_PATH,
    BLIND_SET_PATH,
    KINDS,
    LANGUAGES,
    NEAR_KINDS,
    PRESET_HOLDER,
    PRESET_OTHER,
    SET_PATH,
    UNANSWERABLE_KINDS,
    EvalSet,
    Probe,
    load_blind,
    load_set,
)

__all__ = [
    "ANSWERABLE_KINDS",
    "BLIND_2_CHART_PATH",
    "BLIND_3_CHART_PATH",
    "BLIND_CHART_PATH",
    "BLIND_SET_2_PATH",
    "BLIND_SET_3_PATH",
    "BLIND_SET_PATH",
    "CHART_PATH",
    "COMPARE_ROWS",
    "KINDS",
    "LANGUAGES",
    "MODEL_PATH",
    "NEAR_KINDS",
    "PRESET_HOLDER",
    "PRESET_OTHER",
    "ROWS",
    "SET_PATH",
    "TODAY_THRESHOLD",
    "UNANSWERABLE_KINDS",
    "EvalSet",
    "Outcome",
    "Probe",
    "Report",
    "Scored",
    "auroc",
    "build_scorer",
    "evaluate",
    "fit",
    "fit_logistic",
    "half_split_figures",
    "judge",
    "load_blind",
    "load_set",
    "metrics",
    "pr_curve",
    "render_chart",
    "render_comparison",
    "render_table",
    "run",
    "score_set",
    "without_rule",
    "write_model",
]
