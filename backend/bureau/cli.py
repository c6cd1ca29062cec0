"""`bureau serve | setup | preflight | erase | clear`: run the game, prepare and check a deployment, clean up."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bureau.config import Settings, UnsafeSettingsError

if TYPE_CHECKING:
    from bureau.api.deps import Services


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    for name in ("host", "port", "data_dir"):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    return Settings(**overrides)


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from bureau.api.app import create_app

    settings = _settings(args)
    if not settings.loopback_only and not settings.passcodes_enabled and not args.insecure_open:
        print(
            f"Refusing to serve on {settings.host} without passcodes: anyone on the network could read every "
            "private memory. Set BUREAU_OPERATOR_PASSCODE and BUREAU_STAGE_PASSCODE, or pass --insecure-open.",
            file=sys.stderr,
        )
        return 2
    app = create_app(settings)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # End live SSE streams at once, or graceful shutdown would wait on them.
            services = getattr(app.state, "services", None)
            if services is not None:
                services.hub.close()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="info",
        # Only a proxy you name may set the client address (passcode throttling is per client).
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=settings.trusted_proxies or None,
        timeout_graceful_shutdown=5,
    )
    print(f"AI Intelligence Bureau on http://{settings.host}:{settings.port}  (data: {settings.data_dir})")
    Server(config).run()
    return 0


async def _with_services(
    settings: Settings, action: Callable[[Services], Awaitable[int]], *, prepare: bool = False
) -> int:
    from bureau.api.app import start_services, stop_services

    svc, slot, owner = await start_services(settings, prepare=prepare)
    try:
        return await action(svc)
    finally:
        await stop_services(svc, slot, owner)


async def _known_case_ids(svc: Services) -> tuple[set[str], set[str]]:
    """(cases the ledger knows, cases with cards in the store): a crash can leave cards the ledger forgot."""
    return {c.id for c in await svc.ledger.list_cases()}, set(await svc.gateway.list_case_ids())


def erase(args: argparse.Namespace) -> int:
    from bureau.scope.keys import is_valid_case_id

    if not is_valid_case_id(args.case):
        print("That is not a case id.", file=sys.stderr)
        return 2

    async def action(svc: Services) -> int:
        in_ledger, in_store = await _known_case_ids(svc)
        if args.case not in in_ledger | in_store:
            print(f"No case {args.case} here: nothing erased.", file=sys.stderr)
            return 1
        await svc.bureau.purge(args.case, announce=args.case in in_ledger)
        print(f"Erased case {args.case}: every card, board copy, ledger row, event and trace.")
        return 0

    return asyncio.run(_with_services(_settings(args), action))


def clear(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    async def action(svc: Services) -> int:
        in_ledger, in_store = await _known_case_ids(svc)
        case_ids = sorted(in_ledger | in_store)
        if not args.confirm:
            print(f"Dry run: {len(case_ids)} case(s) would be erased. Re-run with --confirm to erase them.")
            return 0
        with Progress() as progress:
            task = progress.add_task("Erasing cases", total=len(case_ids))
            for case_id in case_ids:
                await svc.bureau.purge(case_id, announce=case_id in in_ledger)
                progress.advance(task)
        print(f"Erased {len(case_ids)} case(s).")
        return 0

    return asyncio.run(_with_services(_settings(args), action))


def setup(args: argparse.Namespace) -> int:
    """Once per deployment, before instances start: migrate the ledger, create the store's schema."""

    async def action(svc: Services) -> int:
        where = svc.gateway.backend_name
        print(f"Ledger migrated; memory store ready ({where}, collection {svc.settings.memory_collection}).")
        return 0

    return asyncio.run(_with_services(_settings(args), action, prepare=True))


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
    from bureau.retrieval_eval import CHART_PATH, run

    chart = None if args.no_chart else (args.chart or CHART_PATH)
    run(args.embedder, refit=args.fit, split=args.split, chart=chart)
    return 0


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
    evaluate.add_argument("--chart", type=Path, default=None, help="precision-recall SVG (docs/img/…)")
    evaluate.add_argument("--no-chart", action="store_true", help="do not write the chart")
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
