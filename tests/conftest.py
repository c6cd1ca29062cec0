"""One real store per test session: PowerMem over embedded seekdb, the SQLite ledger, the ASGI app.

Tests isolate themselves by case ids (every case id is fresh and unguessable), never by new store paths:
embedded seekdb allows one path per process.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

# The developer's own environment must not steer the tests.
for _name in [n for n in os.environ if n.startswith("BUREAU_")]:
    del os.environ[_name]

from bureau.api.app import create_app  # noqa: E402
from bureau.api.deps import Services  # noqa: E402
from bureau.api.state import services_of  # noqa: E402
from bureau.config import Settings  # noqa: E402
from contract import OpenApiContract  # noqa: E402
from helpers import NewCase  # noqa: E402
from live_server import LiveServer, passcode_mode, vault_beside  # noqa: E402


def test_settings(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "env": "test",
        "data_dir": data_dir,
        "vault_dir": vault_beside(data_dir),
        "heartbeat_s": 1.0,
        "publication_lease_s": 1.0,
        # The app's own retention sweeper runs once at start-up; tests that sweep run a sweeper themselves.
        "retention_sweep_s": 3600.0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bureau-data")


@pytest.fixture(scope="session")
def settings(data_dir: Path) -> Settings:
    return test_settings(data_dir)


@pytest_asyncio.fixture(scope="session")
async def app(settings: Settings) -> AsyncIterator[Any]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture(scope="session")
def services(app: Any) -> Services:
    return services_of(app)


@pytest.fixture(scope="session")
def contract(app: Any) -> OpenApiContract:
    return OpenApiContract(app.openapi())


@pytest_asyncio.fixture(scope="session")
async def client(app: Any, contract: OpenApiContract) -> AsyncIterator[httpx.AsyncClient]:
    """The in-process client. Every response it receives is checked against the OpenAPI document."""

    async def check_contract(response: httpx.Response) -> None:
        await response.aread()
        contract.check(response)

    transport = httpx.ASGITransport(app=app)
    hooks = {"response": [check_contract]}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=60, event_hooks=hooks
    ) as http:
        yield http


@pytest.fixture
def new_case(client: httpx.AsyncClient) -> NewCase:
    async def create(scenario_id: str = "safe-combination", language: str = "en") -> dict[str, Any]:
        response = await client.post("/api/cases", json={"scenario_id": scenario_id, "language": language})
        assert response.status_code == 201, response.text
        return response.json()

    return create


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A real `bureau serve` process (open mode) for tests that need real HTTP streaming or processes."""
    with LiveServer(tmp_path_factory.mktemp("live-data")) as server:
        yield server


@pytest.fixture(scope="module")
def passcode_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A real `bureau serve` process in passcode mode, one per test module (its sessions and throttle are the
    module's own). A module that needs more settings overrides this fixture with its own `passcode_mode`."""
    with passcode_mode(tmp_path_factory.mktemp("passcode-data")) as server:
        yield server
