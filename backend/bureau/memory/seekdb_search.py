"""The scoped statements on seekdb: the vector search, one statement for every space of a question, and the
rows of a case's spaces, one statement for all of them.

PowerMem's search builds a SQLAlchemy statement for each call, compiles it with its literals inlined, parses
the result again as text and formats the query vector as text three times (pyobvector's `ann_search`); with
two spaces per question that was about 4 ms of Python per question before seekdb saw a statement
(docs/performance.md, "What changed (this session)"). Here the statement is written directly: the nearest
cards of each space are one part of a UNION ALL, each with its own top k, and the owner columns and the
vector (formatted once) are parameters. What comes back is what PowerMem's search returns for the same
filters: a test compares the two, card by card.

A snapshot lists four spaces. Through PowerMem that was four statements, each built and compiled again, each
reading every row's vector (which a list never uses) and parsing it in Python, so a list cost more for each
session record a role keeps (docs/performance.md, "Case growth"). `rows` reads the spaces of a case in one
statement without the vector column, in id order, a page at a time.

Used with embedded seekdb and with a seekdb server alike (both are OceanBase stores in PowerMem); PowerMem's
sqlite store keeps its own search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

NINE_DIGITS = "{:.9g}"  # every float32 reads back as itself from nine significant digits
_COLUMNS = ("part", "card_id", "document", "metadata", "user_id", "agent_id", "distance")
# PowerMem's table has no index on its owner columns, so every scoped statement filtered the whole table,
# whatever the space's own size (docs/performance.md, "Other cases' cards"). `bureau setup` creates this one;
# with embedded seekdb every start tries to (memory/gateway.py).
OWNER_INDEX = "bureau_owner"
# Whether it exists: the schema named, or (None) the connection's own database.
OWNER_INDEX_QUERY = (
    "SELECT 1 FROM information_schema.statistics WHERE table_schema = COALESCE(%(schema)s, DATABASE()) "
    "AND table_name = %(table)s AND index_name = %(index)s"
)


@dataclass(frozen=True, slots=True)
class SpaceQuery:
    """One space's part of a search: its owner columns (no agent: every agent's rows) and the query vector
    in that space's basis."""

    user_id: str
    agent_id: str | None
    vector: Sequence[float]


@dataclass(frozen=True, slots=True)
class Hit:
    """A row as the gateway reads it (the keys of PowerMem's search results) and its cosine similarity."""

    item: dict[str, Any]
    cosine: float


class NearestCards:
    def __init__(self, vector_store: Any) -> None:
        self._store = vector_store  # its `obvector.engine` is read per call: a shared connection replaces it
        self._table_name = vector_store.collection_name
        self.table = _identifier(self._table_name)  # quoted; public for a bench that drops the owner index
        self._text = _identifier(vector_store.text_field)
        self._metadata = _identifier(vector_store.metadata_field)
        self._vector = _identifier(vector_store.vector_field)
        self._id = _identifier(vector_store.primary_field)

    @classmethod
    def of(cls, memory: Any) -> NearestCards:
        """For a PowerMem client over seekdb, configured as the gateway configures it (cosine distance on
        raw vectors, no hybrid search); anything else would make the scores wrong, so it is refused."""
        store = memory.storage.vector_store
        if store.vidx_metric_type != "cosine" or store.normalize or store.hybrid_search:
            raise ValueError("the seekdb store must search by cosine distance, unnormalised, without hybrid search")
        return cls(store)

    def ensure_owner_index(self) -> None:
        """Create the owner index if it is missing. Two processes sharing one embedded server may both try at
        once: a failed attempt is fine if the index is there afterwards."""
        if self.has_owner_index():
            return
        try:
            self.execute(f"CREATE INDEX IF NOT EXISTS {OWNER_INDEX} ON {self.table} (user_id, agent_id)")
        except Exception:
            if not self.has_owner_index():
                raise

    def has_owner_index(self) -> bool:
        found = self.execute(OWNER_INDEX_QUERY, {"schema": None, "table": self._table_name, "index": OWNER_INDEX})
        return bool(found)

    def search(self, queries: Sequence[SpaceQuery], limit: int) -> list[list[Hit]]:
        """The `limit` nearest rows of each space, nearest first, in the order the spaces were asked."""
        if not queries or limit < 1:
            return [[] for _ in queries]
        parts, params = [], {}
        for n, query in enumerate(queries):
            owner = f"user_id = %(user_{n})s"
            params[f"user_{n}"] = query.user_id
            if query.agent_id:
                owner += f" AND agent_id = %(agent_{n})s"
                params[f"agent_{n}"] = query.agent_id
            params[f"vector_{n}"] = vector_text(query.vector)
            parts.append(self._part(n, owner, int(limit)))
        rows = self.execute(" UNION ALL ".join(parts), params)
        hits: list[list[Hit]] = [[] for _ in queries]
        for part, card_id, document, metadata, user_id, agent_id, distance in sorted(rows, key=_part_then_distance):
            item = {"id": card_id, "memory": document, "metadata": _parsed(metadata)}
            item |= {"user_id": user_id, "agent_id": agent_id}
            hits[int(part)].append(Hit(item, 1.0 - _distance(distance)))
        return hits

    def rows(self, user_id: str, agent_ids: Sequence[str], after: int, limit: int) -> list[dict[str, Any]]:
        """The rows of some spaces of one owner whose ids follow `after`, at most `limit`, in id order, as
        PowerMem's list returns them (a test compares the two) but without the vector."""
        if not agent_ids or limit < 1:
            return []
        params: dict[str, Any] = {"user": user_id, "after": int(after)}
        params |= {f"agent_{n}": agent for n, agent in enumerate(agent_ids)}
        agents = ", ".join(f"%(agent_{n})s" for n in range(len(agent_ids)))
        statement = (
            f"SELECT {self._id}, {self._text}, {self._metadata}, user_id, agent_id FROM {self.table} "  # noqa: S608
            f"WHERE user_id = %(user)s AND agent_id IN ({agents}) AND {self._id} > %(after)s "
            f"ORDER BY {self._id} LIMIT {int(limit)}"
        )
        return [
            {"id": card_id, "memory": document, "metadata": _parsed(metadata), "user_id": user, "agent_id": agent}
            for card_id, document, metadata, user, agent in self.execute(statement, params)
        ]

    def owners(self) -> set[str]:
        """Every owner (user id) with rows in the store, in one statement: the retention sweep asks each
        minute, and a scan of every row held the one memory worker for 260 ms at fifty live cases."""
        return {str(user_id or "") for (user_id,) in self.execute(f"SELECT DISTINCT user_id FROM {self.table}")}  # noqa: S608

    def rows_with_vectors(self, user_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Every space's rows of one owner whose ids follow `after`, with their vectors (a re-seal's read)."""
        statement = (
            f"SELECT {self._id}, {self._text}, {self._metadata}, user_id, agent_id, {self._vector} "  # noqa: S608
            f"FROM {self.table} WHERE user_id = %(user)s AND {self._id} > %(after)s ORDER BY {self._id} "
            f"LIMIT {int(limit)}"
        )
        return [
            {
                "id": card_id,
                "memory": document,
                "metadata": _parsed(metadata),
                "user_id": user,
                "agent_id": agent,
                "vector": _vector_values(vector),
            }
            for card_id, document, metadata, user, agent, vector in self.execute(
                statement, {"user": user_id, "after": int(after)}
            )
        ]

    def compacting(self) -> bool:
        """Whether a major compaction is under way (memory/compaction.py)."""
        found = self.execute("SELECT status FROM oceanbase.DBA_OB_MAJOR_COMPACTION")
        return any(str(status).upper() != "IDLE" for (status,) in found)

    def start_major_compaction(self) -> None:
        """Ask seekdb to compact: its background threads rewrite the data without the deleted rows."""
        self.execute("ALTER SYSTEM MAJOR FREEZE")

    def execute(self, statement: str, params: dict[str, Any] | None = None) -> list[Any]:
        """One statement on a connection of the store's engine, straight through its DBAPI cursor. Nothing
        but parameters is %-formatted, on either driver: no statement here holds a literal `%`. Public as a
        test and bench seam: they read seekdb's own tables (an index, the compaction's version) through it."""
        connection = self._store.obvector.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(statement, params)
                return list(cursor.fetchall())
            finally:
                cursor.close()
        finally:
            connection.close()

    def _part(self, n: int, owner: str, limit: int) -> str:
        # Each part is wrapped in a SELECT of its own: seekdb takes APPROXIMATE LIMIT per part that way, and
        # a statement must begin with SELECT for the embedded driver to return its rows. Formatted in: checked
        # identifiers and integers. The owners and the vector are parameters, so the statement's text is the
        # same for every question (the embedded driver parses it when no row comes back).
        distance = f"cosine_distance({self._vector}, %(vector_{n})s)"
        columns = f"{n} AS part, {self._id} AS card_id, {self._text} AS document, {self._metadata} AS metadata"
        inner = (
            f"SELECT {columns}, user_id, agent_id, {distance} AS distance FROM {self.table} "  # noqa: S608
            f"WHERE {owner} ORDER BY {distance} APPROXIMATE LIMIT {limit}"
        )
        return f"SELECT {', '.join(_COLUMNS)} FROM ({inner}) AS space_{n}"  # noqa: S608


def _distance(value: Any) -> float:
    """A row without a vector has no distance: the farthest there is (PowerMem scores it 0, i.e. cosine -1)."""
    return 2.0 if value is None else float(value)


def _part_then_distance(row: Sequence[Any]) -> tuple[int, float]:
    return int(row[0]), _distance(row[6])


def vector_text(vector: Sequence[float]) -> str:
    """The vector as seekdb reads it, finite numbers only: each component with nine significant digits, which
    reads back as exactly the same float32 (what the store compares), in a third of the time of its shortest
    text (numpy's float32 repr, as pyobvector writes it: 0.3 ms for 512 numbers, twice per question)."""
    values = np.asarray(vector, dtype=np.float32)
    if not np.isfinite(values).all():
        raise ValueError("query vector is not finite")
    return "[" + ",".join(map(NINE_DIGITS.format, values.tolist())) + "]"


def _vector_values(value: Any) -> list[float] | None:
    """A vector column as the driver returns it (text like "[0.1,0.2]", or bytes of it)."""
    if value is None:
        return None
    text = value.decode() if isinstance(value, bytes | bytearray) else str(value)
    return [float(x) for x in json.loads(text)]


def _parsed(metadata: Any) -> dict[str, Any]:
    """The metadata column: a dict through SQLAlchemy's JSON type, JSON text through a raw cursor (twice
    encoded in rows of PowerMem's older versions, which its own reader decodes again too)."""
    value = metadata
    for _ in range(2):
        if not isinstance(value, str | bytes):
            break
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _identifier(name: str) -> str:
    """A table or column name from PowerMem's configuration, refused unless it is a plain identifier."""
    if not name.replace("_", "").isalnum() or not name.isascii():
        raise ValueError(f"not a plain SQL identifier: {name!r}")
    return f"`{name}`"
