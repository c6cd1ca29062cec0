"""What the benchmarks share: a real `bureau serve` process on a loopback port, sign-in, percentiles,
progress lines, the machine's load, and a small SVG bar chart for docs/performance.md.

No plotting library is a dependency of the project, so the charts are plain SVG written here.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import html
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from bureau.answering.local_model import free_port  # one definition, shared with the local model server

REPO = Path(__file__).resolve().parents[1]
CHART_DIR = REPO / "docs" / "img"
READY_DEADLINE_S = 120.0
OPERATOR_PASSCODE = "bench-operator-passcode"
STAGE_PASSCODE = "bench-stage-passcode"
PASSCODE_MODE = {"BUREAU_OPERATOR_PASSCODE": OPERATOR_PASSCODE, "BUREAU_STAGE_PASSCODE": STAGE_PASSCODE}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def p50_ms(call: Callable[[], Awaitable[Any]], reads: int) -> float:
    """The p50 of `reads` awaited calls, in ms, one after another."""
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 0.5)


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} cores"


def own_cpu_ms() -> float:
    """CPU time (user + system) this benchmark process has used so far: what its clients cost."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def progress(message: str) -> None:
    """Progress goes to stderr, so stdout stays the result table."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def scratch_dir(prefix: str) -> Path:
    """A data directory for one benchmark run, removed when the script exits (each holds a ~200 MB store), with
    its vault beside it (`vault_beside`), removed too."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    atexit.register(shutil.rmtree, vault_beside(path), ignore_errors=True)
    return path


def vault_beside(data_dir: Path) -> Path:
    """A benchmark data directory's vault: its sibling `<name>-vault` (never inside the data directory)."""
    return data_dir.with_name(f"{data_dir.name}-vault")


def scratch_vault(settings: Any) -> Any:
    """A new vault where `settings` name it, for a benchmark of the store below the game (no ledger)."""
    from bureau.bootstrap.vault_binding import location_of
    from bureau.vault.opening import create_vault

    return create_vault(location_of(settings), "bench")


async def grant_over(vault: Any, *scopes: Any, writes: bool = True) -> Any:
    """A grant that reads (and writes, if asked) the spaces of one case, in one generation, its keys made first:
    what the game's keys (game/keys.py) mint for a command, for a benchmark that drives the store directly."""
    from bureau.scope.vocabulary import Purpose

    case_id, generation = scopes[0].case_id, scopes[0].generation
    await vault.create_case(case_id, generation or "")
    return await vault.grant(case_id, generation, Purpose.OPERATOR, reads=scopes, writes=scopes if writes else ())


@dataclass(frozen=True)
class Checkout:
    """A checkout of the project whose backend a `Server` runs: with its own `.venv` when it has one,
    else with this benchmark's Python and `PYTHONPATH=<checkout>/backend` (the shared venv's editable
    install yields to it)."""

    path: Path
    label: str = ""

    @property
    def backend(self) -> Path:
        return self.path / "backend"

    @property
    def python(self) -> Path:
        own = self.path / ".venv" / "bin" / "python"
        return own if own.exists() else Path(sys.executable)

    def commit(self) -> str:
        """The short commit of the checkout, `+` when its backend has uncommitted changes."""
        head = _output(["git", "-C", str(self.path), "rev-parse", "--short", "HEAD"])
        dirty = _output(["git", "-C", str(self.path), "status", "--porcelain", "--", "backend"])
        return (head or "?") + ("+" if dirty else "")

    @property
    def has_vault(self) -> bool:
        """Whether this checkout's code keeps its keys in a vault (`--vault-dir`), as code since issue 34 does."""
        return (self.backend / "bureau" / "vault").is_dir()

    def served_code(self) -> Path:
        """Where the `bureau` package that a server of this checkout imports lives (checked, not assumed)."""
        code = "import bureau, pathlib; print(pathlib.Path(bureau.__file__).resolve().parents[1])"
        return Path(_output([str(self.python), "-c", code], PYTHONPATH=str(self.backend)))


def parse_checkout(text: str) -> Checkout:
    """`PATH` or `LABEL=PATH`: a checkout of the project (it must hold backend/bureau); for `--checkout`."""
    label, _, path = text.rpartition("=")
    checkout = Checkout(Path(path).expanduser().resolve(), label)
    if not (checkout.backend / "bureau" / "__init__.py").exists():
        raise argparse.ArgumentTypeError(f"{path}: not a checkout of the project (no backend/bureau)")
    return checkout


def named(checkout: Checkout) -> Checkout:
    """The checkout with its label completed by its commit: `main @ 96dd46b`, `wt-x @ 1a2b3c4+` (uncommitted)."""
    return Checkout(checkout.path, f"{checkout.label or checkout.path.name} @ {checkout.commit()}")


def _output(command: list[str], **env: str) -> str:
    done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, check=False)  # noqa: S603
    return done.stdout.strip()


@dataclass
class Server:
    """`bureau serve` on a free loopback port over its own data directory, `BUREAU_*` from `env` only.
    By default the code this benchmark imports is served; `checkout` serves another checkout's (`Checkout`)."""

    env: dict[str, str] = field(default_factory=dict)
    data_dir: Path = field(default_factory=lambda: scratch_dir("bureau-bench-"))
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    checkout: Checkout | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """Start the process and wait for `/api/ready`; returns the seconds that took."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")}
        environment.update(self.env)
        python = sys.executable
        if self.checkout is not None:
            # The checkout's code first; whatever this server's `env` adds to the path (a probe) after it.
            paths = [str(self.checkout.backend), *filter(None, [self.env.get("PYTHONPATH")])]
            python, environment["PYTHONPATH"] = str(self.checkout.python), os.pathsep.join(paths)
        command = [python, "-m", "bureau.cli", "serve", "--port", str(self.port)]
        command += ["--data-dir", str(self.data_dir)]
        if self.checkout is None or self.checkout.has_vault:  # code from before the vault has no such option
            command += ["--vault-dir", str(vault_beside(self.data_dir))]
        log = (self.data_dir / "server.log").open("ab")
        self.started_at = time.perf_counter()
        self.process = subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
        log.close()
        return self.wait_ready()

    def wait_ready(self) -> float:
        assert self.process is not None
        deadline = self.started_at + READY_DEADLINE_S
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"bureau serve exited early:\n{self.log_tail()}")
            try:
                if httpx.get(self.url + "/api/ready", timeout=2).status_code == 200:
                    return time.perf_counter() - self.started_at
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"bureau serve not ready after {READY_DEADLINE_S} s:\n{self.log_tail()}")

    def rss_mb(self) -> float:
        """Resident memory of the server process (Linux /proc), in MB."""
        return self.memory_mb("VmRSS")

    def memory_mb(self, name: str) -> float:
        """One memory line of the server process's /proc status (`VmRSS`, `VmHWM` the peak), in MB."""
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def reset_peak_rss(self) -> bool:
        """Reset the process's peak RSS (VmHWM) to its current RSS (Linux ≥ 4.0: `5` into clear_refs).
        False where the kernel or the container does not allow it: then only sampling tells the peak."""
        assert self.process is not None
        try:
            Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
        except OSError:
            return False
        return self.memory_mb("VmHWM") <= self.memory_mb("VmRSS") + 1

    def store_rss_mb(self) -> float:
        """Resident memory of the embedded seekdb server, a child process of `bureau serve`, in MB
        (0 when there is none: another store backend)."""
        assert self.process is not None
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if child.name() == "seekdb":
                        return child.memory_info().rss / 2**20
        return 0.0

    def cpu_ms(self) -> float:
        """CPU time (user + system) the server process has used so far, all its threads (Linux /proc)."""
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def tree_cpu_s(self) -> float:
        """CPU seconds used so far by the server and its children (embedded seekdb's server is one)."""
        assert self.process is not None
        root = psutil.Process(self.process.pid)
        total = 0.0
        for process in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def wait_quiet(self, share: float = 0.1, window_s: float = 2.0, deadline_s: float = 180.0) -> float:
        """Wait until the server and its store use under `share` of one CPU over a whole `window_s` (a fresh
        embedded store loads its system packages in the background for a while after it answers); returns
        the seconds waited. Past the deadline it goes on and says so."""
        started = time.perf_counter()
        while time.perf_counter() - started < deadline_s:
            before = self.tree_cpu_s()
            time.sleep(window_s)
            if (self.tree_cpu_s() - before) / window_s < share:
                return time.perf_counter() - started
        progress(f"the server still used over {share:.0%} of a CPU after {deadline_s:.0f} s; measuring anyway")
        return time.perf_counter() - started

    def log_text(self) -> str:
        path = self.data_dir / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def log_tail(self) -> str:
        return self.log_text()[-3000:]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def session_headers(http: httpx.AsyncClient, passcode: str) -> dict[str, str]:
    """One signed-in session: its cookie and CSRF token as headers (the client's own jar stays empty)."""
    response = await http.post("/api/session", headers={"X-Bureau-Passcode": passcode})
    response.raise_for_status()
    session, csrf = response.cookies["bureau_session"], response.cookies["bureau_csrf"]
    http.cookies.clear()
    return {"Cookie": f"bureau_session={session}; bureau_csrf={csrf}", "X-CSRF-Token": csrf}


async def sign_in_many(http: httpx.AsyncClient, passcode: str, count: int) -> list[dict[str, str]]:
    sessions: list[dict[str, str]] = []
    for start in range(0, count, 50):
        batch = [session_headers(http, passcode) for _ in range(min(50, count - start))]
        sessions += await asyncio.gather(*batch)
        progress(f"signed in {len(sessions)}/{count} sessions")
    return sessions


def passcode_case(server: Server, screens: int) -> tuple[dict[str, str], list[dict[str, str]], str]:
    """An operator session, `screens` stage sessions and a new case on a passcode-mode server."""

    async def setup() -> tuple[dict[str, str], list[dict[str, str]], str]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            operator = await session_headers(http, OPERATOR_PASSCODE)
            stages = await sign_in_many(http, STAGE_PASSCODE, screens)
            created = await http.post("/api/cases", json={"scenario_id": "safe-combination"}, headers=operator)
            created.raise_for_status()
            return operator, stages, created.json()["case"]["id"]

    return asyncio.run(setup())


def verdict(what: str, value: float, target: float, unit: str) -> str:
    """One honest line per target: met or not, with the number reached."""
    return f"target {what} ≤ {target:g} {unit}: {'met' if value <= target else 'NOT met'} ({value:.1f} {unit})"


def markdown_table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def bar_chart(path: Path, title: str, bars: list[tuple[str, float]], unit: str, target: float | None = None) -> Path:
    """Horizontal bars with their values, and the target as a dashed line; written to `path` as SVG."""
    label_w, bar_w, row_h, top = 260, 420, 28, 48
    scale_max = max([v for _, v in bars] + [target or 0]) * 1.1 or 1.0
    height = top + row_h * len(bars) + 40
    width = label_w + bar_w + 110
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="12" y="24" font-size="15" font-weight="bold">{html.escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(bars):
        y = top + i * row_h
        length = bar_w * value / scale_max
        over = target is not None and value > target
        colour = "#c0392b" if over else "#2e86c1"
        parts.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{html.escape(label)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{length:.1f}" height="{row_h - 10}" fill="{colour}"/>')
        parts.append(f'<text x="{label_w + length + 6:.1f}" y="{y + 17}">{value:,.1f} {html.escape(unit)}</text>')
    if target is not None:
        x = label_w + bar_w * target / scale_max
        bottom = top + row_h * len(bars)
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{bottom}" stroke="#27ae60" '
            'stroke-width="2" stroke-dasharray="6,4"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{bottom + 18}" text-anchor="middle" fill="#27ae60">'
            f"target {target:,.0f} {html.escape(unit)}</text>"
        )
    parts.append(f'<text x="12" y="{height - 8}" font-size="11" fill="#666">{html.escape(load_line())}</text>')
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n")
    return path


@dataclass(frozen=True)
class Series:
    """One line of a `line_chart`: its points (x, y) in x order, drawn solid or dashed."""

    label: str
    colour: str
    points: list[tuple[float, float]]
    dashed: bool = False


def _log_ticks(low: float, high: float) -> list[float]:
    """1, 2 and 5 times the powers of ten from below `low` to above `high`."""
    ticks, power = [], 10.0 ** math.floor(math.log10(low))
    while power <= high * 10:
        ticks += [power * m for m in (1, 2, 5) if low <= power * m <= high]
        power *= 10
    return ticks


def line_chart(
    path: Path, title: str, x_label: str, y_unit: str, series: list[Series], targets: list[tuple[str, float]]
) -> Path:
    """Lines over a logarithmic y axis (latencies that span milliseconds to seconds), each point marked
    with its value, the targets as dashed horizontal lines; written to `path` as SVG."""
    width, left, top, plot_w, plot_h = 840, 70, 40, 470, 320
    legend_x = left + plot_w + 40
    height = top + plot_h + 70
    xs = sorted({x for s in series for x, _ in s.points})
    ys = [y for s in series for _, y in s.points if y > 0] + [value for _, value in targets]
    low, high = min(ys) / 1.5, max(ys) * 1.5
    x_min, x_max = xs[0], xs[-1] if xs[-1] > xs[0] else xs[0] + 1

    def x_at(x: float) -> float:
        return left + 20 + (x - x_min) / (x_max - x_min) * (plot_w - 40)

    def y_at(y: float) -> float:
        return top + plot_h - (math.log10(max(y, low)) - math.log10(low)) / math.log10(high / low) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="12" y="24" font-size="15" font-weight="bold">{html.escape(title)}</text>',
    ]
    for tick in _log_ticks(low, high):
        y = y_at(tick)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:,g}</text>')
    for x in xs:
        parts.append(f'<text x="{x_at(x):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{x:,g}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 34}" text-anchor="middle">{html.escape(x_label)}</text>'
    )
    parts.append(
        f'<text transform="translate(16,{top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{html.escape(y_unit)} (log scale)</text>"
    )
    target_style = 'stroke="#27ae60" stroke-width="1.5" stroke-dasharray="6,4"'
    for i, (label, value) in enumerate(targets):
        y = y_at(value)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" {target_style}/>')
        parts.append(f'<text x="{left + plot_w + 4}" y="{y + 4:.1f}" font-size="10" fill="#27ae60">{value:,g}</text>')
        y = top + 10 + (len(series) + i) * 20
        parts.append(f'<line x1="{legend_x}" x2="{legend_x + 22}" y1="{y}" y2="{y}" {target_style}/>')
        parts.append(f'<text x="{legend_x + 28}" y="{y + 4}" font-size="11">{html.escape(label)}</text>')
    for i, line in enumerate(series):
        dash = ' stroke-dasharray="4,3"' if line.dashed else ""
        points = " ".join(f"{x_at(x):.1f},{y_at(y):.1f}" for x, y in line.points)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{line.colour}" stroke-width="2"{dash}/>')
        for x, y in line.points:
            parts.append(f'<circle cx="{x_at(x):.1f}" cy="{y_at(y):.1f}" r="3.5" fill="{line.colour}"/>')
            parts.append(
                f'<text x="{x_at(x) + 6:.1f}" y="{y_at(y) - 6:.1f}" font-size="10" fill="{line.colour}">{y:,.0f}</text>'
            )
        y = top + 10 + i * 20
        parts.append(
            f'<line x1="{legend_x}" x2="{legend_x + 22}" y1="{y}" y2="{y}" stroke="{line.colour}" '
            f'stroke-width="2.5"{dash}/>'
        )
        parts.append(f'<text x="{legend_x + 28}" y="{y + 4}" font-size="11">{html.escape(line.label)}</text>')
    parts.append(f'<text x="12" y="{height - 8}" font-size="11" fill="#666">{html.escape(load_line())}</text>')
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n")
    return path
