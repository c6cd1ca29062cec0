"""A remote seekdb / OceanBase server as a shared deployment: its database and collection are created once,
by `bureau setup`, never by instances racing at start-up (two processes creating one collection at the
same moment can crash with error 1235; a missing database fails with 1049)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pymysql
from pydantic import SecretStr

from bureau.config import Settings
from bureau.memory.seekdb_search import OWNER_INDEX, OWNER_INDEX_QUERY

_CONNECT_TIMEOUT_S = 5
_ACCESS_DENIED = 1045
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class StoreNotPreparedError(RuntimeError):
    """The remote database or collection does not exist yet: run `bureau setup` once first."""


@dataclass(frozen=True, slots=True)
class RemoteSchema:
    database: bool
    collection: bool
    owner_index: bool = False  # without it every search reads the whole table (memory/seekdb_search.py)

    @property
    def ready(self) -> bool:
        return self.database and self.collection


def _identifier(name: str, setting: str) -> str:
    """Database and collection names go into DDL, which cannot take them as parameters."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"{setting} must be a plain identifier (letters, digits, underscore)")
    return name


def _connect(settings: Settings, database: str | None = None) -> pymysql.Connection:
    return pymysql.connect(
        host=settings.seekdb_host,
        port=settings.seekdb_port,
        user=settings.seekdb_user,
        password=settings.seekdb_password.get_secret_value(),
        database=database,
        connect_timeout=_CONNECT_TIMEOUT_S,
        read_timeout=30,
        write_timeout=30,
    )


def schema_status(settings: Settings) -> RemoteSchema:
    """Whether the configured database and collection exist. Raises pymysql errors if unreachable."""
    database = _identifier(settings.seekdb_database, "BUREAU_SEEKDB_DATABASE")
    collection = _identifier(settings.memory_collection, "BUREAU_MEMORY_COLLECTION")
    connection = _connect(settings)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (database,))
            if cursor.fetchone() is None:
                return RemoteSchema(database=False, collection=False)
            cursor.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                (database, collection),
            )
            if cursor.fetchone() is None:
                return RemoteSchema(database=True, collection=False)
            cursor.execute(OWNER_INDEX_QUERY, {"schema": database, "table": collection, "index": OWNER_INDEX})
            return RemoteSchema(database=True, collection=True, owner_index=cursor.fetchone() is not None)
    finally:
        connection.close()


def secure_fresh_server(settings: Settings) -> bool:
    """A fresh seekdb server has a passwordless `root` on every interface. When the configured password is
    refused but an empty one is accepted, set the configured one (`bureau setup` only). True if it did."""
    password = settings.seekdb_password.get_secret_value()
    if not password:
        return False
    try:
        _connect(settings).close()
        return False
    except pymysql.err.OperationalError as exc:
        if not exc.args or exc.args[0] != _ACCESS_DENIED:
            raise
    fresh = _connect(settings.model_copy(update={"seekdb_password": SecretStr("")}))
    try:
        with fresh.cursor() as cursor:
            cursor.execute("ALTER USER %s IDENTIFIED BY %s", (settings.seekdb_user, password))
        fresh.commit()
    finally:
        fresh.close()
    return True


def create_database(settings: Settings) -> None:
    secure_fresh_server(settings)
    database = _identifier(settings.seekdb_database, "BUREAU_SEEKDB_DATABASE")
    connection = _connect(settings)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        connection.commit()
    finally:
        connection.close()


def require_prepared(settings: Settings) -> None:
    """At instance start-up: refuse, with the fix, instead of racing to create the schema."""
    status = schema_status(settings)
    where = f"{settings.seekdb_host}:{settings.seekdb_port}"
    if not status.database:
        raise StoreNotPreparedError(
            f"The database {settings.seekdb_database!r} does not exist on the seekdb server at {where}: "
            "run `bureau setup` once (before starting instances)."
        )
    if not status.collection:
        raise StoreNotPreparedError(
            f"The collection {settings.memory_collection!r} does not exist in {settings.seekdb_database!r} at "
            f"{where}: run `bureau setup` once (before starting instances)."
        )
