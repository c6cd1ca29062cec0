"""`bureau serve | setup | preflight | vault rotate-kek | erase | clear`: run the game, prepare and check a
deployment, rotate the vault's key-encryption key, clean up."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import uvicorn

from bureau.bootstrap.collector import settle_after_start
from bureau.bootstrap.phases import PHASE_LABELS, STEPS, Phase, Startup
from bureau.config import Settings, UnsafeSettingsError

if TYPE_CHECKING:
    from bureau.bootstrap.runtime import Runtime

ANNOUNCE_DEADLINE_S = 30.0  # how long the URL line waits for the port to answer /api/ready


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    for name in ("host", "port", "data_dir", "vault_dir"):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    return Settings(**overrides)


def serve(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if not settings.loopback_only and not settings.passcodes_enabled and not args.insecure_open:
        print(
            f"Refusing to serve on {settings.host} without passcodes: anyone on the network could read every "
            "private memory. Set BUREAU_OPERATOR_PASSCODE and BUREAU_STAGE_PASSCODE, or pass --insecure-open.",
            file=sys.stderr,
        )
        return 2
    with contextlib.ExitStack() as local:
        if settings.llm_local:
            started = _start_local_model(settings, local)
            if started is None:
                return 1
            settings = started
        return _serve(settings)


def _start_local_model(settings: Settings, stack: contextlib.ExitStack) -> Settings | None:
    """`BUREAU_LLM_LOCAL=1`: llama.cpp's server with SmolLM2-135M in a child process (never in this one), warmed,
    and the role voice pointed at it; stopped when `bureau serve` ends."""
    from bureau.answering.local_model import LocalModelError, LocalModelServer, local_settings

    server = LocalModelServer(settings.llm_local_model)
    print(f"starting the local model ({settings.llm_local_model.name}) ...", flush=True)
    try:
        server.start()
    except LocalModelError as exc:
        print(f"The local model did not start: {exc}", file=sys.stderr)
        return None
    stack.callback(server.stop)
    print(
        f"local model on {server.base_url}: loaded in {server.load_s:.1f} s, warmed in {server.warm_s:.2f} s; "
        "role voice on for English cases",
        flush=True,
    )
    return local_settings(settings, server.base_url)


def _serve(settings: Settings) -> int:
    servers: list[_Server] = []

    def progress(phase: Phase, elapsed_s: float) -> None:
        print_phase(phase, elapsed_s)
        if phase is Phase.FAILED and servers:
            servers[0].should_exit = True  # failed after the port opened: stop, and say why below

    startup = Startup(progress)
    startup.enter(Phase.SETTINGS)
    servers.append(_Server(settings, startup))
    servers[0].run()
    if startup.error is None:
        return 0
    if isinstance(startup.error, UnsafeSettingsError):
        raise startup.error
    print(f"Start-up failed ({startup.failed_in}): {type(startup.error).__name__}: {startup.error}", file=sys.stderr)
    return 1


def print_phase(phase: Phase, elapsed_s: float) -> None:
    if phase in STEPS:
        step = f"[{STEPS.index(phase) + 1}/{len(STEPS)}]"
        print(f"starting {step} {PHASE_LABELS[phase]}  (+{elapsed_s:.1f} s)", flush=True)
    elif phase is Phase.FAILED:
        print(f"start-up failed after {elapsed_s:.1f} s", flush=True)


def local_url(host: str, port: int) -> str:
    """Where this machine reaches the server: a wildcard bind answers on loopback."""
    if host in ("0.0.0.0", ""):  # noqa: S104 - recognising the wildcard, not binding it
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Server(uvicorn.Server):
    """uvicorn's server that tells start-up when the port is open, and prints the URL only once the server
    answers `/api/ready` (uvicorn's own "running on" line would come before the service exists)."""

    def __init__(self, settings: Settings, progress: Startup) -> None:
        progress.enter(Phase.CODE)
        from bureau.api.app import create_app
        from bureau.api.state import services_of

        self.settings, self.progress = settings, progress
        self.app = create_app(settings, progress)
        self._services_of = services_of
        self._announcer: asyncio.Task[None] | None = None
        super().__init__(
            uvicorn.Config(
                self.app,
                host=settings.host,
                port=settings.port,
                log_level="info",
                # Only a proxy you name may set the client address (passcode throttling is per client).
                proxy_headers=bool(settings.trusted_proxies),
                forwarded_allow_ips=settings.trusted_proxies or None,
                timeout_graceful_shutdown=5,
            )
        )

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.should_exit:
            self.progress.enter(Phase.LISTENING)
            self._announcer = asyncio.create_task(self._announce(), name="announce-url")

    def _log_started_message(self, listeners: Sequence[socket.SocketType]) -> None:
        """Silenced: the URL is printed by `_announce`, once the service answers."""

    async def _announce(self) -> None:
        if not await self.progress.finished():
            return
        settle_after_start()  # before the first client: nothing that start-up made is ever walked again
        url = local_url(self.settings.host, self.settings.port)
        deadline = time.monotonic() + ANNOUNCE_DEADLINE_S
        async with httpx.AsyncClient(timeout=2.0) as http:
            while time.monotonic() < deadline and not self.should_exit:
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(url + "/api/ready")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
        took = self.progress.elapsed_s
        print(f"AI Intelligence Bureau on {url}  (ready in {took:.1f} s; data: {self.settings.data_dir})", flush=True)

    def handle_exit(self, sig: int, frame: Any) -> None:
        # End live SSE streams at once, or graceful shutdown would wait on them.
        services = self._services_of(self.app)
        if services is not None:
            services.hub.close()
        super().handle_exit(sig, frame)


async def _with_services(
    settings: Settings, action: Callable[[Runtime], Awaitable[int]], *, prepare: bool = False
) -> int:
    from bureau.bootstrap.runtime import running

    async with running(settings, prepare=prepare) as runtime:
        return await action(runtime)


async def _known_case_ids(svc: Runtime) -> tuple[set[str], set[str]]:
    """(cases the ledger knows, cases with cards in the store): a crash can leave cards the ledger forgot."""
    return {c.id for c in await svc.ledger.cases.list_cases()}, set(await svc.gateway.list_case_ids())


def erase(args: argparse.Namespace) -> int:
    from bureau.scope.keys import is_valid_case_id

    if not is_valid_case_id(args.case):
        print("That is not a case id.", file=sys.stderr)
        return 2

    async def action(svc: Runtime) -> int:
        in_ledger, in_store = await _known_case_ids(svc)
        if args.case not in in_ledger | in_store:
            print(f"No case {args.case} here: nothing erased.", file=sys.stderr)
            return 1
        await svc.bureau.case_service.purge(args.case, announce=args.case in in_ledger)
        print(f"Erased case {args.case}: every card, board copy, ledger row, event and trace.")
        return 0

    return asyncio.run(_with_services(_settings(args), action))


def clear(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    async def action(svc: Runtime) -> int:
        in_ledger, in_store = await _known_case_ids(svc)
        case_ids = sorted(in_ledger | in_store)
        if not args.confirm:
            print(f"Dry run: {len(case_ids)} case(s) would be erased. Re-run with --confirm to erase them.")
            return 0
        with Progress() as progress:
            task = progress.add_task("Erasing cases", total=len(case_ids))
            for case_id in case_ids:
                await svc.bureau.case_service.purge(case_id, announce=case_id in in_ledger)
                progress.advance(task)
        print(f"Erased {len(case_ids)} case(s).")
        return 0

    return asyncio.run(_with_services(_settings(args), action))


def setup(args: argparse.Namespace) -> int:
    """Once per deployment, before instances start: migrate the ledger, create the store's schema, bind the
    vault, and re-seal every case an earlier version sealed under one key into its compartments."""

    async def action(svc: Runtime) -> int:
        where = svc.gateway.backend_name
        resealed = await svc.bureau.keys.resealer.reseal_all()
        print(f"Ledger migrated; memory store ready ({where}, collection {svc.settings.memory_collection}).")
        print(f"Vault {svc.vault.vault_id} at {svc.vault.where}; {resealed} case(s) re-sealed into compartments.")
        return 0

    return asyncio.run(_with_services(_settings(args), action, prepare=True))


def rotate_kek(args: argparse.Namespace) -> int:
    """Re-wrap every key of the vault under a new KEK; the data is not touched (vault/rotation.py)."""
    from rich.progress import Progress

    from bureau.bootstrap.vault_binding import location_of
    from bureau.vault.opening import open_vault
    from bureau.vault.rotation import rotate_kek as rotate

    settings = _settings(args)
    vault = open_vault(location_of(settings))
    if vault is None:
        print(f"No vault at {location_of(settings).describe()}: nothing to rotate.", file=sys.stderr)
        return 1
    try:
        with Progress() as progress:
            task = progress.add_task("Re-wrapping keys", total=None)
            moved = rotate(vault, lambda done, total: progress.update(task, completed=done, total=total))
    finally:
        vault.close()
    print(f"Rotated the KEK of {vault.where}: {moved} key(s) re-wrapped; the old KEK is gone.")
    return 0


def preflight(args: argparse.Namespace) -> int:
    """Check a configuration without changing anything; exit 1 if anything is wrong (for CI and deploys)."""
    from bureau.preflight import load_settings, run_checks

    settings, first = load_settings(lambda: _settings(args))
    checks = [first] + (run_checks(settings) if settings is not None else [])
    for check in checks:
        print(f"{'ok  ' if check.ok else 'FAIL'}  {check.name:<13} {check.detail}")
    problems = sum(not c.ok for c in checks)
    print("Ready." if not problems else f"{problems} problem(s): fix them before starting instances.")
    return 1 if problems else 0


def eval_retrieval(args: argparse.Namespace) -> int:
    from bureau.evaluation import (
        BLIND_2_CHART_PATH,
        BLIND_3_CHART_PATH,
        BLIND_CHART_PATH,
        BLIND_SET_2_PATH,
        BLIND_SET_3_PATH,
        BLIND_SET_PATH,
        CHART_PATH,
        run,
    )

    chart = None if args.no_chart else (args.chart or CHART_PATH)
    run(
        args.embedder,
        refit=args.fit,
        split=args.split,
        chart=chart,
        half_splits=args.half_splits,
        blind_path=None if args.no_blind else (args.blind or BLIND_SET_PATH),
        blind_chart=None if args.no_chart else BLIND_CHART_PATH,
        blind2_path=None if args.no_blind_2 else (args.blind_2 or BLIND_SET_2_PATH),
        blind2_chart=None if args.no_chart else BLIND_2_CHART_PATH,
        blind3_path=None if args.no_blind_3 else (args.blind_3 or BLIND_SET_3_PATH),
        blind3_chart=None if args.no_chart else BLIND_3_CHART_PATH,
        cross_sets=args.cross_sets,
        cross_sets_weights=_languages(args.cross_sets_weights),
    )
    return 0


def _languages(raw: str | None) -> tuple[str, ...] | None:
    if raw is None:
        return None
    return tuple(x for x in raw.split(",") if x and x != "none")


def quiet_third_party_loggers() -> None:
    """The model clients log request bodies (evidence text, questions) at DEBUG: keep them at WARNING.
    The memory store's loggers are silenced by the gateway itself."""
    for name in ("openai", "httpx", "httpcore", "langchain", "langgraph", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bureau", description="AI Intelligence Bureau")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", type=Path, default=None, help="data directory (BUREAU_DATA_DIR)")
        p.add_argument("--vault-dir", type=Path, default=None, help="vault directory (BUREAU_VAULT_DIR)")

    run = commands.add_parser("serve", help="serve the API and the web app on one port")
    run.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=None, help="port (default 8000)")
    run.add_argument("--insecure-open", action="store_true", help="allow a non-loopback bind without passcodes")
    common(run)
    run.set_defaults(handler=serve)

    prepare = commands.add_parser("setup", help="once per deployment: migrate the ledger, create the store schema")
    common(prepare)
    prepare.set_defaults(handler=setup)

    check = commands.add_parser("preflight", help="check a configuration (read-only); exit 1 on problems")
    common(check)
    check.set_defaults(handler=preflight)

    vault = commands.add_parser("vault", help="the vault of keys (docs/operations.md)")
    vault_commands = vault.add_subparsers(dest="vault_command", required=True)
    rotate = vault_commands.add_parser("rotate-kek", help="re-wrap every key under a new key-encryption key")
    common(rotate)
    rotate.set_defaults(handler=rotate_kek)

    one = commands.add_parser("erase", help="erase one case completely")
    one.add_argument("--case", required=True, help="case id")
    common(one)
    one.set_defaults(handler=erase)

    every = commands.add_parser("clear", help="erase every case (dry run unless --confirm)")
    every.add_argument("--confirm", action="store_true", help="really erase")
    common(every)
    every.set_defaults(handler=clear)

    evaluate = commands.add_parser("eval-retrieval", help="measure known / uncertain / unknown on the labelled set")
    evaluate.add_argument("--embedder", choices=["local", "hashing"], default="local")
    evaluate.add_argument("--split", choices=["test", "calibration", "all"], default="test")
    evaluate.add_argument("--fit", action="store_true", help="refit the model on the calibration half first")
    evaluate.add_argument(
        "--half-splits",
        type=int,
        default=0,
        metavar="N",
        help="also fit on one random half of the calibration facts and measure on the other, N times "
        "(held-out figures for choosing signals without the test half)",
    )
    evaluate.add_argument("--chart", type=Path, default=None, help="precision-recall SVG (docs/img/…)")
    evaluate.add_argument("--no-chart", action="store_true", help="do not write the charts")
    evaluate.add_argument("--blind", type=Path, default=None, help="the blind set (default tests/data/blind_…)")
    evaluate.add_argument("--no-blind", action="store_true", help="leave the blind set out")
    evaluate.add_argument("--blind-2", type=Path, default=None, help="blind set 2 (default tests/data/blind_…_2.yaml)")
    evaluate.add_argument("--no-blind-2", action="store_true", help="leave blind set 2 out")
    evaluate.add_argument("--blind-3", type=Path, default=None, help="blind set 3 (default tests/data/blind_…_3.yaml)")
    evaluate.add_argument("--no-blind-3", action="store_true", help="leave blind set 3 out")
    evaluate.add_argument(
        "--cross-sets",
        action="store_true",
        help="fit on two of calibration half / blind set 1 / blind set 2 and measure on the third",
    )
    evaluate.add_argument(
        "--cross-sets-weights",
        default=None,
        metavar="LANGS",
        help="with --cross-sets: languages (comma-separated, or 'none') whose weights are fitted on the "
        "development sets too (default: as shipped)",
    )
    evaluate.set_defaults(handler=eval_retrieval)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_third_party_loggers()
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except UnsafeSettingsError as exc:
        print(str(exc), file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
