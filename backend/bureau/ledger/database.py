"""Engine and schema: SQLite in WAL mode under the data dir by default, any SQLAlchemy URL otherwise."""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, make_url, text

from bureau.sqlite_files import sqlite_file_engine

MIGRATIONS = Path(__file__).parent / "migrations"
READ_ONLY = "bureau_read_only"  # execution option marking a transaction that only reads
BUSY_TIMEOUT_S = "bureau_busy_timeout_s"  # engine option: how long a SQLite writer waits for the lock
MIGRATION_LOCK = 0x6D696772  # advisory lock key ("migr") on PostgreSQL


def create_ledger_engine(url: str, busy_timeout_s: float = 15.0) -> Engine:
    """`busy_timeout_s`: how long a SQLite write waits for another writer's lock before it fails (busy)."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True, json_deserializer=orjson.loads)
    # A record page decodes three JSON values an entry: orjson is a third of its read.
    engine = sqlite_file_engine(
        url, busy_timeout_s, json_deserializer=orjson.loads, execution_options={BUSY_TIMEOUT_S: busy_timeout_s}
    )

    @event.listens_for(engine, "connect")
    def _ledger_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.execute("PRAGMA foreign_keys=ON")
        # Let SQLAlchemy's "begin" hook below own transactions instead of the sqlite3 module.
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:  # type: ignore[no-untyped-def]
        if connection.get_execution_options().get(READ_ONLY):
            connection.exec_driver_sql("BEGIN")  # a WAL snapshot read: takes no lock, waits for no writer
            return
        # Writes take the lock up front: a deferred transaction that reads and then writes fails with
        # SQLITE_BUSY_SNAPSHOT when another process committed in between, and busy_timeout cannot help.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def checkpoint_wal(engine: Engine, attempts: int = 3) -> bool:
    """Copy the WAL into the database file and truncate it, so pages an erase overwrote do not survive in
    the WAL. A reader holding an old snapshot blocks truncation; retried briefly. False if it never got
    through (the next erase, or SQLite's own auto-checkpoint, finishes it). No-op off SQLite."""
    if engine.dialect.name != "sqlite":
        return True
    for _ in range(attempts):
        raw = engine.raw_connection()
        try:
            busy, _log, _done = raw.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            raw.close()
        if busy == 0:
            return True
        time.sleep(0.05)  # back-off while a reader finishes its snapshot
    return False


@contextlib.contextmanager
def _migration_lock(lock_path: Path | None) -> Iterator[None]:
    """Two processes starting on one SQLite file must not both create the schema."""
    if lock_path is None:
        yield
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def migrate(engine: Engine, lock_path: Path | None = None, revision: str = "head") -> None:
    """Bring the schema to the newest Alembic revision (or to `revision`: the migration tests start older)."""
    config = _config()
    with _migration_lock(lock_path), engine.begin() as connection:
        if connection.dialect.name == "postgresql":  # two processes starting together: one migrates
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def schema_revisions(engine: Engine) -> tuple[str | None, str]:
    """(the revision the database is at, the newest this code knows): `bureau preflight` compares them.
    Reads only; raises SQLAlchemy errors when the database cannot be reached."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config()).get_current_head() or ""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision(), head


def printable_url(url: str) -> str:
    """The ledger URL with any password masked, for messages."""
    return make_url(url).render_as_string(hide_password=True)
