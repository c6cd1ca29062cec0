"""How the gateway drives embedded seekdb through pyobvector: one reused connection, and a start that does not
race seekdb's own start-up DDL (docs/faults.md, "A new store's schema and seekdb's own start-up DDL")."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, text
from sqlalchemy.pool import StaticPool

log = logging.getLogger("bureau.memory")
T = TypeVar("T")

# A new embedded store answers before seekdb has loaded its system packages: it does that afterwards, in the
# background (job LOAD_MYSQL_SYS_PACKAGE), as a burst of DDL, each statement under the one DDL lock. A vector
# index is built by a DDL task that asks for that lock with a 2 s timeout (seekdb.log: `origin_timeout_us_`);
# on a starved CPU it lost, and PowerMem's index statement failed with 1205 after its table was created.
# The start logs how long it waited; the deadline stays under a reopen's own (store_runner.py).
START_UP_DDL_DEADLINE_S = 60.0
_SYS_PACKAGE_JOB = "SELECT JOB_STATUS FROM oceanbase.DBA_OB_ROOTSERVICE_JOBS WHERE JOB_TYPE = 'LOAD_MYSQL_SYS_PACKAGE'"
_POLL_S = 0.2
# Lock conflicts can still come from seekdb's other background work: retried, a bounded number of times.
DDL_ATTEMPTS = 3
_DDL_RETRY_PAUSE_S = 2.0
_INDEX_QUERY = (
    "SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() "
    "AND table_name = :table AND index_name = :index"
)


class StoreSchemaError(RuntimeError):
    """The store's schema could not be completed: the process refuses to start instead of serving on it."""


def share_one_connection(memory: Any) -> None:
    """Embedded seekdb: one connection for every statement. pyobvector builds its embedded engine without a
    pool, so each statement opened a connection (running the MySQL dialect's `SET NAMES` round trip) and
    closing it closed the embedded client's connection too: about a seventh of the memory worker's time.
    Safe because every store call of a gateway runs on its one worker thread. A remote server keeps
    pyobvector's own connection pool."""
    client = getattr(memory.storage.vector_store, "obvector", None)
    if client is None:
        return  # PowerMem's sqlite store
    engine = client.engine
    server = engine.get_execution_options().get("seekdb_server")
    if server is None:
        return
    shared = create_engine(engine.url, creator=engine.pool._creator, poolclass=StaticPool)
    shared.update_execution_options(seekdb_server=server)
    client.engine = shared
    engine.dispose()


def is_ddl_lock_timeout(exc: BaseException) -> bool:
    """seekdb's "Lock wait timeout exceeded" (1205), however SQLAlchemy or PowerMem wrapped it."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if type(seen).__name__ == "SeekdbError" and "code=1205" in str(seen):
            return True
        if "(1205," in str(seen) and "Lock wait timeout" in str(seen):  # the MySQL driver's form, remote
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__ or seen.__context__
    return False


def retrying_ddl_lock_timeouts(what: str, action: Callable[[], T], settle: Callable[[], None]) -> T:
    """Run a schema step; on seekdb's DDL lock wait timeout let seekdb settle (its start-up DDL done) and run it
    again, at most DDL_ATTEMPTS times in all, saying so in the log. Any other error, or the last timeout,
    propagates. Nothing waits unless a timeout happened: a start that meets none pays nothing."""
    for attempt in range(1, DDL_ATTEMPTS + 1):
        try:
            return action()
        except Exception as exc:
            if attempt == DDL_ATTEMPTS or not is_ddl_lock_timeout(exc):
                raise
            log.warning(
                "memory start-up: %s met seekdb's DDL lock wait timeout (1205) on attempt %d of %d; waiting for "
                "seekdb's start-up DDL, then retrying",
                what,
                attempt,
                DDL_ATTEMPTS,
            )
            settle()
            time.sleep(_DDL_RETRY_PAUSE_S * attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def wait_for_start_up_ddl(store_dir: Path, *, new_store: bool, deadline_s: float = START_UP_DDL_DEADLINE_S) -> None:
    """Wait until embedded seekdb on the store directory has loaded its system packages, so a retried schema
    statement does not meet seekdb's start-up DDL again. A store whose start-up DDL is done says so at once.
    Past the deadline it only logs: the last attempt still runs."""
    import pylibseekdb

    pylibseekdb.open(db_dir=str(store_dir))  # a server this process already opened is reused as it is
    connection = pylibseekdb.connect(database="test", autocommit=True)
    started = time.monotonic()
    try:
        while not start_up_ddl_done(connection, new_store=new_store):
            if time.monotonic() - started > deadline_s:
                log.warning("memory start-up: seekdb's start-up DDL still runs after %.0f s; going on", deadline_s)
                return
            time.sleep(_POLL_S)
    except Exception as exc:  # a seekdb without that job list: the retries still apply
        log.warning("memory start-up: seekdb's start-up jobs could not be read (%s); going on", type(exc).__name__)
        return
    finally:
        connection.close()
    waited = time.monotonic() - started
    if waited >= _POLL_S:
        log.info("memory start-up: waited %.1f s for seekdb's start-up DDL (its system packages)", waited)


def start_up_ddl_done(connection: Any, *, new_store: bool) -> bool:
    """Whether seekdb's start-up job list says its system packages are loaded (a new store's list is empty
    for a moment: not yet). Public for its unit test, which feeds it the job lists seekdb reports."""
    cursor = connection.cursor()
    try:
        cursor.execute(_SYS_PACKAGE_JOB)
        statuses = [row[0] for row in cursor.fetchall()]
    finally:
        cursor.close()
    if not statuses:
        return not new_store  # a new store registers the job a moment after it answers
    return "INPROGRESS" not in statuses


def vector_index_present(memory: Any) -> bool:
    """Whether the store's table has PowerMem's vector index (its name as PowerMem configured it)."""
    store = memory.storage.vector_store
    with store.obvector.engine.connect() as connection:
        found = connection.execute(text(_INDEX_QUERY), {"table": store.collection_name, "index": store.vidx_name})
        return bool(found.fetchall())


def complete_vector_index(memory: Any, settle: Callable[[], None]) -> None:
    """A table without its vector index is what a start interrupted between PowerMem's two schema statements
    leaves, and PowerMem, finding the table, never adds the index. Create it as PowerMem would have, or refuse
    to start saying what is missing: searches must never silently run on a half-made schema."""
    if vector_index_present(memory):
        return
    store = memory.storage.vector_store
    log.warning(
        "memory start-up: the store's table %s has no vector index %s (an earlier start was interrupted while "
        "creating it); creating it now",
        store.collection_name,
        store.vidx_name,
    )
    try:
        retrying_ddl_lock_timeouts("creating the vector index", lambda: _create_vector_index(store), settle)
    except Exception as exc:
        raise StoreSchemaError(_half_made(store, f"creating it failed ({type(exc).__name__})")) from exc
    if not vector_index_present(memory):
        raise StoreSchemaError(_half_made(store, "it is still missing after creating it"))


def _create_vector_index(store: Any) -> None:
    from powermem.storage.oceanbase import constants

    params = store.obvector.prepare_index_params()
    params.add_index(
        field_name=store.vector_field,
        index_type=constants.OCEANBASE_SUPPORTED_VECTOR_INDEX_TYPES[store.index_type],
        index_name=store.vidx_name,
        metric_type=store.vidx_metric_type,
        params=store.vidx_algo_params,
    )
    for param in params:
        store.obvector.create_vidx_with_vec_index_param(store.collection_name, param)


def _half_made(store: Any, why: str) -> str:
    return (
        f"the store's table {store.collection_name} has no vector index {store.vidx_name}: {why}. Restart to "
        "try again; the cards in the table are kept"
    )
