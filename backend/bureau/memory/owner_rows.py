"""Rows by owner, below any scope: paged reads, batched deletes, a case's erase, the owners; and the nearest
rows of each space. The callers (the gateway) re-check every row against the scope asked for."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bureau.memory.seekdb_search import Hit, NearestCards, SpaceQuery
from bureau.memory.types import MemoryUnavailableError

_PAGE_SIZE = 500  # rows per store round trip; every listing, count, reset and erase pages through all of them
_DELETE_BATCH = 500


def rows(store: Any, user_id: str | None, agent_id: str | None = None, **filters: str) -> Iterator[dict[str, Any]]:
    """All rows matching, page by page in id order (a stable order, so no row is skipped or repeated)."""
    offset = 0
    while True:
        page = (
            store.get_all(
                user_id=user_id,
                agent_id=agent_id,
                filters=filters or None,
                limit=_PAGE_SIZE,
                offset=offset,
                sort_by="id",
                order="asc",
            ).get("results")
            or []
        )
        yield from page
        if len(page) < _PAGE_SIZE:
            return
        offset += len(page)


def space_rows(statements: NearestCards, user_id: str, agent_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Every row of some spaces of one owner on seekdb, without vectors, a page at a time after the last id
    read (a row deleted meanwhile cannot shift a page, as it would an offset)."""
    after = 0
    while True:
        page = statements.rows(user_id, agent_ids, after, _PAGE_SIZE)
        yield from page
        if len(page) < _PAGE_SIZE:
            return
        after = int(page[-1]["id"])


def delete_ids(
    store: Any, user_id: str, agent_id: str | None, card_ids: Sequence[str], deleted: Callable[[list[str]], None]
) -> None:
    """Batched deletes by id, restricted to the case (and the space, when given) in the store itself; each
    batch done is reported to `deleted`."""
    ids = [int(i) for i in card_ids if i.isascii() and i.isdigit() and len(i) <= 20]
    vector_store = store.storage.vector_store
    client = getattr(vector_store, "obvector", None)
    owner = {"user_id": user_id, **({"agent_id": agent_id} if agent_id else {})}
    for start in range(0, len(ids), _DELETE_BATCH):
        batch = ids[start : start + _DELETE_BATCH]
        if client is not None:  # seekdb: one statement per batch
            name = vector_store.collection_name
            if name not in client.metadata_obj.tables:
                client.delete(table_name=name, ids=[])  # deletes nothing; loads the table object it uses
            # The filter must name that same table object, or the DELETE becomes a cartesian product.
            where = vector_store._generate_where_clause(owner, table=client.metadata_obj.tables[name])
            client.delete(table_name=name, ids=batch, where_clause=where)
        else:  # the sqlite store deletes row by row; its delete_memory checks the owner first
            for card_id in batch:
                store.storage.delete_memory(card_id, user_id, agent_id)
        deleted([str(i) for i in batch])


def erase_owner(store: Any, user_id: str, delete: Callable[[list[str]], None]) -> None:
    """Delete (with `delete`) every row of one owner, in every space, however many."""
    previous_first: str | None = None
    while True:
        # Always the first page: what was deleted is gone, so an offset would skip rows.
        page = store.get_all(user_id=user_id, limit=_PAGE_SIZE, sort_by="id", order="asc")
        ids = [str(row["id"]) for row in page.get("results") or [] if row.get("user_id") == user_id]
        if not ids:
            return
        if ids[0] == previous_first:
            raise MemoryUnavailableError("cards survived an erase")
        previous_first = ids[0]
        delete(ids)


def owners(store: Any) -> set[str]:
    """Every owner (user id) with rows in the store."""
    # Paged scan instead of PowerMem's get_users(), which returns nothing on seekdb (it reads user_id
    # from the metadata JSON, where seekdb rows do not keep it).
    return {str(item.get("user_id") or "") for item in rows(store, None)}


def nearest_hits(
    store: Any, nearest: NearestCards | None, queries: Sequence[tuple[str, str | None, list[float]]], limit: int
) -> list[list[Hit]]:
    """The nearest rows of each space (`queries`: user id, agent id, vector); seekdb (`nearest`) answers for
    all of them in one statement, the sqlite store (`nearest` None) space by space."""
    if nearest is not None:
        return nearest.search([SpaceQuery(user_id, agent_id, vector) for user_id, agent_id, vector in queries], limit)
    storage = store.storage
    return [
        [
            Hit(row, float(row.get("score", 0.0)))  # the sqlite store reports cosine similarity itself
            for row in storage.search_memories(
                query_embedding=vector,
                user_id=user_id,
                agent_id=agent_id,
                filters=None,
                limit=limit,
                query=None,  # no query text: the sqlite store would otherwise switch to hybrid RRF scores
            )
            or []
        ]
        for user_id, agent_id, vector in queries
    ]


def raw_rows(store: Any, nearest: NearestCards | None, user_id: str, after: int = 0) -> Iterator[dict[str, Any]]:
    """Every row of one owner with its stored vector whose id is above `after`, in id order, a page at a time:
    what a re-seal rewrites (keys: id, memory, metadata, user_id, agent_id, vector)."""
    if nearest is not None:
        while True:
            page = nearest.rows_with_vectors(user_id, after, _PAGE_SIZE)
            yield from page
            if len(page) < _PAGE_SIZE:
                return
            after = int(page[-1]["id"])
    vector_store = store.storage.vector_store
    for row in sorted(rows(store, user_id), key=lambda r: int(r["id"])):
        if int(row["id"]) <= after:
            continue
        found = vector_store.connection.execute(
            f"SELECT vector FROM {vector_store.collection_name} WHERE id = ?",  # noqa: S608 (a configured identifier)
            (int(row["id"]),),
        ).fetchone()
        yield {**row, "vector": json.loads(found[0]) if found else None}


def rewrite_row(store: Any, row_id: str, sealed: str, metadata: dict[str, Any], vector: list[float]) -> None:
    """Replace a row's text, metadata and vector in place, keeping its id (a card id the ledger refers to)."""
    vector_store = store.storage.vector_store
    digest = hashlib.md5(sealed.encode(), usedforsecurity=False).hexdigest()
    client = getattr(vector_store, "obvector", None)
    if client is not None:
        with _no_index_refresh(client):
            vector_store.update(
                int(row_id), vector=vector, payload={"data": sealed, "metadata": metadata, "hash": digest}
            )
        return
    existing = vector_store.get(int(row_id))
    if existing is None or existing.payload is None:
        raise MemoryUnavailableError("a row to re-seal vanished")
    payload = {**existing.payload, "data": sealed, "metadata": metadata, "hash": digest}
    vector_store.update(int(row_id), vector=vector, payload=payload)


@contextlib.contextmanager
def _no_index_refresh(client: Any) -> Iterator[None]:
    """PowerMem's update ends with pyobvector's vector index refresh (`CALL dbms_index_manager.refresh()`), which
    took about 10 s a row on embedded seekdb: a re-seal of a case's few rows ran past the store call's deadline.
    Inserts never refresh (the index takes rows in as they are written), so a rewrite does not either."""
    client._flush_seekdb_index = lambda: None  # shadows the method on this client only, for this one call
    try:
        yield
    finally:
        del client._flush_seekdb_index
