"""What the benchmarks share: a real `bureau serve` process on a loopback port, sign-in, percentiles,
progress lines, the machine's load, and a small SVG bar chart for docs/performance.md.

No plotting library is a dependency of the project, so the charts are plain SVG written here.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import html
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


@dataclass
class Server:
    """`bureau serve` on a free loopback port over its own data directory, `BUREAU_*` from `env` only."""

    env: dict[str, str] = field(default_factory=dict)
    data_dir: Path = field(default_factory=lambda: scratch_dir("bureau-bench-"))
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """Start the process and wait for `/api/ready`; returns the seconds that took."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")}
        environment.update(self.env)
        command = [sys.executable, "-m", "bureau.cli", "serve", "--port", str(self.port)]
        command += ["--data-dir", str(self.data_dir), "--vault-dir", str(vault_beside(self.data_dir))]
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
