"""The vault's own database: wrapped keys, never anything else. SQLite under the vault directory by default
(WAL, `secure_delete`, the WAL truncated after a case's keys are destroyed), or any SQLAlchemy URL (a separate
PostgreSQL database in a shared deployment). Never the ledger's database, never the data directory.

Tables: `vault_meta` (the vault id, the KEK a rotation is moving to), `compartment_keys` (per case and
compartment, wrapped under a KEK named by its fingerprint) and `item_keys` (per case and item, wrapped under
its compartment's key). Every statement here is blocking: callers run it off the event loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Index,
    LargeBinary,
    MetaData,
    String,
    Table,
    and_,
    bindparam,
    create_engine,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from bureau.sqlite_files import sqlite_file_engine
from bureau.vault.errors import VaultUnavailableError

ITEM_BATCH = 500  # item ids per statement (an IN list)

metadata = MetaData()
vault_meta = Table(
    "vault_meta",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", String(128), nullable=False),
)
compartment_keys = Table(
    "compartment_keys",
    metadata,
    Column("case_id", String(64), primary_key=True),
    Column("compartment", String(32), primary_key=True),
    Column("wrapped", LargeBinary, nullable=False),
    Column("kek_id", String(32), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
item_keys = Table(
    "item_keys",
    metadata,
    Column("case_id", String(64), primary_key=True),
    Column("item_id", String(48), primary_key=True),
    Column("compartment", String(32), nullable=False),
    Column("wrapped", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_item_keys_case_compartment", "case_id", "compartment", "created_at"),
)


# The statements every request makes (a search's, a view's keys; a trim's destruction), built once.
ITEMS_OF_CASE = select(item_keys.c.item_id, item_keys.c.compartment, item_keys.c.wrapped).where(
    item_keys.c.case_id == bindparam("case_id"), item_keys.c.item_id.in_(bindparam("item_ids", expanding=True))
)
DROP_ITEMS = delete(item_keys).where(
    item_keys.c.case_id == bindparam("case_id"), item_keys.c.item_id.in_(bindparam("item_ids", expanding=True))
)
DROP_COMPARTMENT_ITEMS = DROP_ITEMS.where(item_keys.c.compartment == bindparam("compartment"))


@dataclass(frozen=True, slots=True)
class WrappedKey:
    compartment: str
    wrapped: bytes
    kek_id: str = ""  # compartment keys: the KEK's fingerprint; item keys: "" (wrapped by the compartment key)


def _engine(url: str, busy_timeout_s: float) -> Engine:
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    return sqlite_file_engine(url, busy_timeout_s)


class VaultStore:
    def __init__(self, url: str, busy_timeout_s: float = 15.0) -> None:
        self.url = url
        self.engine = _engine(url, busy_timeout_s)

    def close(self) -> None:
        self.engine.dispose()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        try:
            with self.engine.begin() as connection:
                yield connection
        except SQLAlchemyError as exc:
            raise VaultUnavailableError(type(exc).__name__) from exc

    def create_schema(self) -> None:
        with self._transaction() as connection:
            metadata.create_all(connection)

    def has_schema(self) -> bool:
        try:
            with self.engine.connect() as connection:
                return bool(self.engine.dialect.has_table(connection, "vault_meta"))
        except SQLAlchemyError as exc:
            raise VaultUnavailableError(type(exc).__name__) from exc

    # ----- meta ------------------------------------------------------------------------------------------

    def meta(self, name: str) -> str | None:
        with self._transaction() as connection:
            return connection.scalar(select(vault_meta.c.value).where(vault_meta.c.name == name))

    def set_meta(self, name: str, value: str | None) -> None:
        with self._transaction() as connection:
            connection.execute(delete(vault_meta).where(vault_meta.c.name == name))
            if value is not None:
                connection.execute(insert(vault_meta).values(name=name, value=value))

    def claim_meta(self, name: str, value: str) -> str:
        """Set `name` unless it is set: the value that holds afterwards (two processes creating one vault)."""
        try:
            with self.engine.begin() as connection:
                connection.execute(insert(vault_meta).values(name=name, value=value))
        except IntegrityError:
            pass
        except SQLAlchemyError as exc:
            raise VaultUnavailableError(type(exc).__name__) from exc
        found = self.meta(name)
        if found is None:
            raise VaultUnavailableError("vault meta vanished")
        return found

    # ----- compartment keys ------------------------------------------------------------------------------

    def compartments(self, case_id: str) -> list[WrappedKey]:
        stmt = select(compartment_keys.c.compartment, compartment_keys.c.wrapped, compartment_keys.c.kek_id).where(
            compartment_keys.c.case_id == case_id
        )
        with self._transaction() as connection:
            return [WrappedKey(c, bytes(w), k) for c, w, k in connection.execute(stmt)]

    def compartment_ages(self, case_id: str) -> dict[str, datetime]:
        """When each compartment key of a case was made (the retirement of a record key waits on it)."""
        stmt = select(compartment_keys.c.compartment, compartment_keys.c.created_at).where(
            compartment_keys.c.case_id == case_id
        )
        with self._transaction() as connection:
            return {c: made if made.tzinfo else made.replace(tzinfo=UTC) for c, made in connection.execute(stmt)}

    def add_compartments(self, case_id: str, keys: Sequence[WrappedKey]) -> None:
        """Insert the keys a case lacks; one it has already is kept (idempotent, safe across processes)."""
        now = datetime.now(UTC)
        for key in keys:
            try:
                with self.engine.begin() as connection:
                    connection.execute(
                        insert(compartment_keys).values(
                            case_id=case_id,
                            compartment=key.compartment,
                            wrapped=key.wrapped,
                            kek_id=key.kek_id,
                            created_at=now,
                        )
                    )
            except IntegrityError:
                continue
            except SQLAlchemyError as exc:
                raise VaultUnavailableError(type(exc).__name__) from exc

    def drop_compartment(self, case_id: str, compartment: str) -> None:
        with self._transaction() as connection:
            connection.execute(
                delete(compartment_keys).where(
                    compartment_keys.c.case_id == case_id, compartment_keys.c.compartment == compartment
                )
            )

    def drop_compartment_items(self, case_id: str, compartment: str) -> int:
        """Every item key a compartment wrapped (useless once its key is gone)."""
        with self._transaction() as connection:
            stmt = delete(item_keys).where(item_keys.c.case_id == case_id, item_keys.c.compartment == compartment)
            return int(connection.execute(stmt).rowcount)

    def cases(self, older_than: timedelta | None = None) -> list[str]:
        """Every case the vault holds a key of, however many (only those whose keys are all older than
        `older_than`, when given: a case being created is never swept)."""
        found = select(compartment_keys.c.case_id, func.max(compartment_keys.c.created_at)).group_by(
            compartment_keys.c.case_id
        )
        items = select(item_keys.c.case_id, func.max(item_keys.c.created_at)).group_by(item_keys.c.case_id)
        cutoff = datetime.now(UTC) - older_than if older_than is not None else None
        newest: dict[str, datetime] = {}
        with self._transaction() as connection:
            for case_id, made in [*connection.execute(found), *connection.execute(items)]:
                made = made if made is None or made.tzinfo else made.replace(tzinfo=UTC)
                newest[case_id] = max(filter(None, (newest.get(case_id), made)), default=datetime.now(UTC))
        return sorted(case for case, made in newest.items() if cutoff is None or made < cutoff)

    def wrapped_under(self, kek_id: str, limit: int) -> list[tuple[str, WrappedKey]]:
        """Up to `limit` compartment keys wrapped under `kek_id` (a rotation's next batch)."""
        stmt = (
            select(
                compartment_keys.c.case_id,
                compartment_keys.c.compartment,
                compartment_keys.c.wrapped,
                compartment_keys.c.kek_id,
            )
            .where(compartment_keys.c.kek_id == kek_id)
            .order_by(compartment_keys.c.case_id, compartment_keys.c.compartment)
            .limit(limit)
        )
        with self._transaction() as connection:
            return [(case, WrappedKey(c, bytes(w), k)) for case, c, w, k in connection.execute(stmt)]

    def rewrap(self, rows: Sequence[tuple[str, str, str, bytes, str]]) -> int:
        """(case, compartment, old KEK id, new wrapped key, new KEK id) in one transaction; a row whose KEK
        changed meanwhile is left alone. Returns how many were re-wrapped."""
        changed = 0
        with self._transaction() as connection:
            for case_id, compartment, old_kek, wrapped, new_kek in rows:
                stmt = (
                    update(compartment_keys)
                    .where(
                        compartment_keys.c.case_id == case_id,
                        compartment_keys.c.compartment == compartment,
                        compartment_keys.c.kek_id == old_kek,
                    )
                    .values(wrapped=wrapped, kek_id=new_kek)
                )
                changed += connection.execute(stmt).rowcount
        return changed

    def count_under(self) -> dict[str, int]:
        """How many compartment keys each KEK wraps."""
        stmt = select(compartment_keys.c.kek_id, func.count()).group_by(compartment_keys.c.kek_id)
        with self._transaction() as connection:
            return {kek: int(n) for kek, n in connection.execute(stmt)}

    # ----- item keys -------------------------------------------------------------------------------------

    def add_items(self, case_id: str, rows: Sequence[tuple[str, str, bytes]]) -> None:
        """(item id, compartment, wrapped key) of new items, in one statement."""
        if not rows:
            return
        now = datetime.now(UTC)
        values = [
            {"case_id": case_id, "item_id": item, "compartment": c, "wrapped": w, "created_at": now}
            for item, c, w in rows
        ]
        with self._transaction() as connection:
            connection.execute(insert(item_keys), values)

    def items(self, case_id: str, item_ids: Iterable[str]) -> dict[str, WrappedKey]:
        """The wrapped keys of some items of a case, one statement per 500 ids (a search asks one)."""
        wanted = sorted(set(item_ids))
        found: dict[str, WrappedKey] = {}
        with self._transaction() as connection:
            for start in range(0, len(wanted), ITEM_BATCH):
                batch = {"case_id": case_id, "item_ids": wanted[start : start + ITEM_BATCH]}
                found |= {item: WrappedKey(c, bytes(w)) for item, c, w in connection.execute(ITEMS_OF_CASE, batch)}
        return found

    def compartment_items(self, case_id: str, compartment: str) -> dict[str, bytes]:
        """Every item key of one compartment of a case (an operator's listing of a whole space)."""
        stmt = select(item_keys.c.item_id, item_keys.c.wrapped).where(
            item_keys.c.case_id == case_id, item_keys.c.compartment == compartment
        )
        with self._transaction() as connection:
            return {item: bytes(w) for item, w in connection.execute(stmt)}

    def drop_items(self, case_id: str, item_ids: Iterable[str], compartment: str | None = None) -> int:
        """Destroy item keys of a case (of one compartment only, when named). Returns how many were there."""
        wanted = sorted(set(item_ids))
        dropped = 0
        stmt = DROP_ITEMS if compartment is None else DROP_COMPARTMENT_ITEMS
        with self._transaction() as connection:
            for start in range(0, len(wanted), ITEM_BATCH):
                batch = {"case_id": case_id, "item_ids": wanted[start : start + ITEM_BATCH], "compartment": compartment}
                dropped += connection.execute(stmt, batch).rowcount
        return dropped

    def items_older_than(self, case_id: str, age: timedelta, after: str, limit: int) -> list[tuple[str, str]]:
        """(item id, compartment) of a case's items made before now - `age`, in id order after `after`."""
        cutoff = datetime.now(UTC) - age
        stmt = (
            select(item_keys.c.item_id, item_keys.c.compartment)
            .where(and_(item_keys.c.case_id == case_id, item_keys.c.created_at < cutoff, item_keys.c.item_id > after))
            .order_by(item_keys.c.item_id)
            .limit(limit)
        )
        with self._transaction() as connection:
            return [(item, c) for item, c in connection.execute(stmt)]

    def drop_case(self, case_id: str) -> None:
        """Every key of a case: its compartments' and its items'."""
        with self._transaction() as connection:
            connection.execute(delete(item_keys).where(item_keys.c.case_id == case_id))
            connection.execute(delete(compartment_keys).where(compartment_keys.c.case_id == case_id))
        self.checkpoint()

    def checkpoint(self) -> None:
        """SQLite: the WAL copied into the file and truncated, so destroyed keys' pages do not survive in it."""
        if self.engine.dialect.name != "sqlite":
            return
        with contextlib.suppress(SQLAlchemyError), self.engine.connect() as connection:
            connection.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
