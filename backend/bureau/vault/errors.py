"""What the vault's callers may meet. None of these ever carries a key, or text a key opens."""

from __future__ import annotations


class VaultUnavailableError(RuntimeError):
    """The vault's database could not answer (503 VAULT_UNAVAILABLE)."""


class GrantError(PermissionError):
    """Asked for something the grant does not cover: a programming error, or a bug planted to test the walls."""


class GrantClosedError(GrantError):
    """The grant's request is over."""


class GenerationRetiredError(GrantError):
    """The record key of the generation the grant was minted for is gone: a later reset retired it (one made
    before its generation committed, and retired only once a newer one had). The command began before that
    reset: the ledger says so as a generation moved, and the command runs again in the case's new one."""


class CaseKeysGoneError(LookupError):
    """The vault holds no key of this case: it was erased (or never existed here). Its data is gone."""


class LegacyCaseError(LookupError):
    """The case is still sealed under one case key (an earlier version's): re-seal it first (game/reseal.py)."""


class KekError(RuntimeError):
    """The KEK file is missing, unreadable, malformed, or not the one the vault's keys are wrapped under. The
    message names the path, never the key."""
