"""SQLite file engines for the ledger and the vault: WAL, a busy timeout, zeroed deletes, and no connection
that stays read-only after the file accepts writes again.

SQLite opens a file it cannot write (a read-only filesystem, an immutable file, a full or failing disk that
refused the open) read-only, silently, and the connection stays read-only for its whole life. A pooled
connection opened during such a fault would refuse every write long after the fault is gone. So a connection
opened while its files were not writable is marked, and replaced at its next checkout once they are; and a
connection that reports SQLITE_READONLY is dropped from the pool either way (a fault that came and went
within one open).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DisconnectionError

OPENED_UNWRITABLE = "bureau_opened_unwritable"  # connection record info: SQLite may have opened it read-only
SQLITE_READONLY = 8  # the primary result code (the low byte of an extended one)


def sqlite_file_engine(url: str, busy_timeout_s: float, **engine_options: Any) -> Engine:
    """An engine on a SQLite URL with the pragmas both databases want; the caller adds its own hooks."""
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": busy_timeout_s}, **engine_options)
    files = database_files(url)

    @event.listens_for(engine, "do_connect")
    def _before_open(_dialect, record, _cargs, _cparams) -> None:  # type: ignore[no-untyped-def]
        record.info[OPENED_UNWRITABLE] = not writable(files)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
        if not writable(files):  # also after the open: a fault that began while SQLite opened the file
            record.info[OPENED_UNWRITABLE] = True
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={round(busy_timeout_s * 1000)}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # Deleted rows are overwritten with zeros, not just unlinked: an erased page is not left readable.
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.close()

    @event.listens_for(engine, "checkout")
    def _replace_if_writable_again(_dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
        if record.info.get(OPENED_UNWRITABLE) and writable(files):
            raise DisconnectionError("opened while the database refused writes")  # the pool opens a new one

    @event.listens_for(engine, "handle_error")
    def _drop_read_only(context: ExceptionContext) -> None:
        code = getattr(context.original_exception, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == SQLITE_READONLY:
            context.is_disconnect = True  # this connection goes; the others keep their snapshots
            context.invalidate_pool_on_disconnect = False

    return engine


def database_files(url: str) -> tuple[Path, ...]:
    """The database file and its write-ahead log; none for an in-memory database."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return ()
    path = Path(database)
    return path, path.with_name(path.name + "-wal")


def writable(files: tuple[Path, ...]) -> bool:
    """Whether SQLite could open these files for writing now (a file not made yet is made writable)."""
    return all(os.access(path, os.W_OK) or not path.exists() for path in files)
