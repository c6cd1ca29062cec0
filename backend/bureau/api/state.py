"""The one place that reads and writes the application's state: the services (once started) and where
start-up is. Routes reach the services through `api/deps.py`, middleware through `services_of`."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.applications import Starlette

from bureau.api.events import EventHub
from bureau.api.security import AccessControl
from bureau.bootstrap.phases import Startup
from bureau.bootstrap.runtime import Runtime


@dataclass(kw_only=True)
class Services(Runtime):
    """The process's runtime (bootstrap) plus the API's own parts. Defined here, with the state that holds
    it, so the dependencies and the middleware both import it from below."""

    hub: EventHub
    access: AccessControl


def services_of(app: Starlette) -> Services | None:
    """None while the service is starting (the start-up gate answers 503 STARTING meanwhile)."""
    return getattr(app.state, "services", None)


def startup_of(app: Starlette) -> Startup | None:
    return getattr(app.state, "startup", None)


def publish_services(app: Starlette, services: Services | None) -> None:
    app.state.services = services


def publish_startup(app: Starlette, startup: Startup) -> None:
    app.state.startup = startup
