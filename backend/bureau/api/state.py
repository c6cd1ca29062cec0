"""The one place that reads and writes the application's state: the services (once started) and where
start-up is. Routes reach the services through `api/deps.py`, middleware through `services_of`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette

from bureau.bootstrap.phases import Startup

if TYPE_CHECKING:
    from bureau.api.deps import Services


def services_of(app: Starlette) -> Services | None:
    """None while the service is starting (the start-up gate answers 503 STARTING meanwhile)."""
    return getattr(app.state, "services", None)


def startup_of(app: Starlette) -> Startup | None:
    return getattr(app.state, "startup", None)


def publish_services(app: Starlette, services: Services | None) -> None:
    app.state.services = services


def publish_startup(app: Starlette, startup: Startup) -> None:
    app.state.startup = startup
