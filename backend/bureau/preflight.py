"""`bureau preflight`: check a configuration before instances start, and say what is wrong.

Every check reads only (no migration, no schema creation, no lease). Messages name settings, hosts and
exception classes, never passwords, keys or store messages (those can quote SQL parameters).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from bureau.config import Settings, UnsafeSettingsError

if TYPE_CHECKING:
    from bureau.ledger.repository import Ledger

LLM_TIMEOUT_S = 5.0
SLOT_STALE_S = 120.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


def _failure(exc: BaseException) -> str:
    code = getattr(exc, "args", ())[:1]
    numeric = f" {code[0]}" if code and isinstance(code[0], int) else ""  # e.g. MySQL 1045, 1049
    return f"{type(exc).__name__}{numeric}"


def check_ledger(settings: Settings) -> list[Check]:
    from bureau.ledger.database import create_ledger_engine, printable_url, schema_revisions
    from bureau.ledger.repository import Ledger

    url = settings.effective_database_url
    where = printable_url(url)
    if not settings.shared_ledger and not Path(url.removeprefix("sqlite:///")).exists():
        first = Check("ledger", True, f"{where} does not exist yet: the first start creates and migrates it")
        return [first, check_vault(settings, None)]
    engine = create_ledger_engine(url)
    try:
        try:
            current, head = schema_revisions(engine)
        except Exception as exc:
            return [Check("ledger", False, f"{where} unreachable ({_failure(exc)})")]
        checks = [Check("ledger", True, f"{where} reachable")]
        if current == head:
            checks.append(Check("migrations", True, f"at {head}"))
        else:
            run = "bureau setup (or any instance's start-up)"
            checks.append(Check("migrations", False, f"database at {current or 'none'}, code at {head}: run {run}"))
            return checks
        ledger = Ledger(engine)
        checks.append(_check_worker_id(settings, ledger))
        checks.append(check_vault(settings, asyncio.run(ledger.vault_binding.vault_id())))
        return checks
    finally:
        engine.dispose()


def _check_worker_id(settings: Settings, ledger: Ledger) -> Check:
    if settings.worker_id is None:
        detail = "leased from the shared ledger" if settings.shared_ledger else "leased from the local ledger"
        return Check("worker id", True, detail)
    live = asyncio.run(ledger.slots.live_slots(SLOT_STALE_S))
    if settings.worker_id in live:
        return Check("worker id", False, f"BUREAU_WORKER_ID={settings.worker_id} is held by a live instance")
    return Check("worker id", True, f"BUREAU_WORKER_ID={settings.worker_id} is free")


def check_vault(settings: Settings, stamped: str | None) -> Check:
    """The vault the data is bound to (`stamped`: the id in the ledger, None before the first start) is there,
    and its KEK opens it. Read-only: a missing vault is never created here."""
    from bureau.bootstrap.vault_binding import location_of
    from bureau.vault import KekError
    from bureau.vault.opening import open_vault

    location = location_of(settings)
    where = location.describe()
    try:
        vault = open_vault(location)
    except KekError as exc:
        return Check("vault", False, str(exc))  # names paths, never a key
    except Exception as exc:
        return Check("vault", False, f"{where} unreachable ({_failure(exc)})")
    if vault is None:
        if stamped is not None:
            return Check("vault", False, f"missing at {where}: the data was sealed with the vault {stamped}")
        if settings.vault_kek_file is not None and not settings.vault_kek_file.exists():
            return Check("vault", False, f"the KEK file {settings.vault_kek_file} is missing: provide it")
        return Check("vault", True, f"{where} does not exist yet: the first start creates it")
    try:
        if stamped is not None and stamped != vault.vault_id:
            return Check("vault", False, f"{where} is the vault {vault.vault_id}; the data belongs to {stamped}")
        legacy = len(vault.legacy_cases())
        resealing = f"; {legacy} case(s) of an earlier version to re-seal: run bureau setup" if legacy else ""
        return Check("vault", True, f"{where}, vault {vault.vault_id}{resealing}")
    finally:
        vault.close()


def check_memory_store(settings: Settings) -> Check:
    if settings.memory_backend == "sqlite":
        return Check("memory store", True, f"sqlite under {settings.data_dir}")
    if not settings.remote_store:
        from bureau.memory.embedded_server import embedded_seekdb_available

        if not embedded_seekdb_available():
            return Check("memory store", False, "embedded seekdb needs pylibseekdb (no wheel here): use sqlite")
        return Check("memory store", True, f"embedded seekdb under {settings.data_dir}")
    from bureau.memory.remote_schema import schema_status

    where = f"seekdb at {settings.seekdb_host}:{settings.seekdb_port} as {settings.seekdb_user}"
    try:
        status = schema_status(settings)
    except Exception as exc:
        return Check("memory store", False, f"{where} unreachable or refused ({_failure(exc)})")
    if not status.database:
        return Check("memory store", False, f"{where}: no database {settings.seekdb_database!r}: run bureau setup")
    if not status.collection:
        name = settings.memory_collection
        return Check("memory store", False, f"{where}: no collection {name!r}: run bureau setup")
    if not status.owner_index:
        return Check("memory store", False, f"{where}: the collection has no owner index: run bureau setup")
    return Check("memory store", True, f"{where}, {settings.seekdb_database}.{settings.memory_collection}")


def check_embedder(settings: Settings) -> Check:
    from bureau.memory.embedders import build_embedder, self_check

    try:
        dims = self_check(build_embedder(settings))
    except Exception as exc:
        return Check("embedder", False, f"{settings.embedder}: {_failure(exc)}")
    return Check("embedder", True, f"{settings.embedder}, {dims} dims")


def check_llm(settings: Settings, get: Callable[..., httpx.Response] = httpx.get) -> Check | None:
    """An OpenAI-compatible server answers `GET /models`. Only when a model is configured."""
    if not settings.llm_configured:
        return None
    host = urlsplit(settings.llm_base_url).hostname or "?"
    key = settings.llm_api_key.get_secret_value()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = get(settings.llm_base_url.rstrip("/") + "/models", headers=headers, timeout=LLM_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Check("llm", False, f"{host} unreachable ({type(exc).__name__})")
    if response.status_code in (401, 403):
        return Check("llm", False, f"{host} refused the key (HTTP {response.status_code})")
    if response.status_code != 200:
        return Check("llm", False, f"{host} answered HTTP {response.status_code} to GET /models")
    return Check("llm", True, f"{host}, model {settings.llm_model}")


def load_settings(make: Callable[[], Settings]) -> tuple[Settings | None, Check]:
    try:
        settings = make()
    except UnsafeSettingsError as exc:
        return None, Check("settings", False, str(exc))  # our own message: names settings, never values
    except ValueError as exc:  # pydantic: which field, not its value
        fields = ", ".join(str(e["loc"][0]) for e in getattr(exc, "errors", list)() if e.get("loc")) or "?"
        return None, Check("settings", False, f"invalid value for {fields}")
    mode = "passcodes" if settings.passcodes_enabled else "open (loopback only)"
    return settings, Check("settings", True, f"{settings.env}, access {mode}")


def run_checks(settings: Settings) -> list[Check]:
    checks = check_ledger(settings)
    checks += [check_memory_store(settings), check_embedder(settings)]
    llm = check_llm(settings)
    return checks + ([llm] if llm else [])
