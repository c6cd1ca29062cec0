"""Alembic environment: migrations run at start-up on the connection the ledger hands over."""

from alembic import context
from sqlalchemy import Connection, create_engine

from bureau.ledger.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is None:  # `alembic` CLI use: build an engine from the configured URL
        engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
        with engine.begin() as conn:
            _run(conn)
        return
    _run(connection)


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
