"""Opening and closing the one PowerMem client of a process: its environment, its configuration, and its
loggers kept quiet (they would carry card text)."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from bureau.config import Settings

# Their errors carry SQL parameters and store messages, i.e. card text and questions. Our own log lines
# name the failed operation and the exception class instead.
_STORE_LOGGERS = ("powermem", "pyobvector", "pyseekdb", "sqlglot", "sqlalchemy.engine", "sqlalchemy.pool")


@contextlib.contextmanager
def _isolated_from_working_directory() -> Iterator[None]:
    """Import PowerMem from an empty directory: it auto-loads the first `.env` found from the cwd upwards,
    which would be the project's own `.env`, and it would write `./audit.log` and `./logs/` there."""
    previous = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="bureau-powermem-") as empty:
        os.chdir(empty)
        try:
            yield
        finally:
            os.chdir(previous)


def silence_store_loggers() -> None:
    for name in _STORE_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [logging.NullHandler()]  # no handler at all would fall back to stderr
        logger.propagate = False
        logger.setLevel(logging.CRITICAL + 1)


def configure_powermem_environment(worker_slot: int) -> None:
    # PowerMem logs at DEBUG into ./logs by default, including memory text: keep it quiet and out of cwd.
    os.environ["LOGGING_FILE"] = ""
    os.environ["LOGGING_CONSOLE_ENABLED"] = "false"
    os.environ["LOGGING_LEVEL"] = "WARNING"
    # Snowflake ids: a distinct (datacenter, worker) pair per process, or two writers overwrite each other.
    os.environ["SNOWFLAKE_DATACENTER_ID"] = str(worker_slot // 32)
    os.environ["SNOWFLAKE_WORKER_ID"] = str(worker_slot % 32)
    os.environ.setdefault("TELEMETRY_ENABLED", "false")


def _vector_store_config(settings: Settings, dims: int) -> dict[str, Any]:
    data_dir = settings.data_dir  # absolute: resolved when the settings were loaded
    if settings.memory_backend == "sqlite":
        return {
            "provider": "sqlite",
            "config": {
                "database_path": str(data_dir / "memory.sqlite"),
                "collection_name": settings.memory_collection,
                "embedding_model_dims": dims,
                "enable_wal": True,
            },
        }
    return {
        "provider": "oceanbase",
        "config": {
            "host": settings.seekdb_host,  # empty: embedded seekdb at ob_path
            "ob_path": str(data_dir / "seekdb"),
            "port": str(settings.seekdb_port),
            "user": settings.seekdb_user,
            "password": settings.seekdb_password.get_secret_value(),
            "db_name": settings.seekdb_database,
            "collection_name": settings.memory_collection,
            "embedding_model_dims": dims,
            "hybrid_search": False,  # vector-only: scores stay similarities, usable with a threshold
            "vidx_metric_type": "cosine",
        },
    }


def open_client(settings: Settings, embedder: Embeddings, dims: int, logs: Path) -> Any:
    """A new PowerMem client: no LLM, no audit file, no telemetry; the embedder is the bureau's own."""
    with _isolated_from_working_directory():
        from powermem import Memory

        config = {
            "vector_store": _vector_store_config(settings, dims),
            "llm": {"provider": "noop", "config": {}},
            "embedder": {
                "provider": "langchain",
                "config": {"model": embedder, "embedding_dims": dims},
            },
            "audit": {"enabled": False, "log_file": str(logs / "powermem-audit.log")},
            "intelligent_memory": {"enabled": False},
            "telemetry": {"enabled": False},
        }
        return Memory(config=config)


def close_quietly(memory: Any) -> None:
    """Close the client, and its embedded connection (the store may be gone: closing then fails quietly)."""
    close = getattr(memory, "close", None)
    if callable(close):
        close()
    engine = getattr(getattr(memory.storage.vector_store, "obvector", None), "engine", None)
    if engine is not None:
        engine.dispose()
