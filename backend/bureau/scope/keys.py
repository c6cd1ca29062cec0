"""Scope keys: which case and space a memory belongs to, and what a role may read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

# The role names are written here once: every other list of them (spaces, principals) is built from `Role`.
Role = Literal["detective", "informant", "suspect"]
Space = Literal[Role, "bulletin_board"]

ROLES: tuple[Role, ...] = get_args(Role)
BOARD: Space = "bulletin_board"
SPACES: tuple[Space, ...] = get_args(Space)
# A compartment is what one key opens: each space of a case, and the case record's operator compartment
# (record bodies, latest answers, finding claims). The findings mapping's pseudonyms have a purpose key of
# their own (`PSEUDONYMS`), which opens nothing.
Compartment = Literal[Space, "record"]
RECORD: Compartment = "record"
COMPARTMENTS: tuple[Compartment, ...] = (*SPACES, RECORD)
PSEUDONYMS = "findings"

TENANT = "case"
USER = "chief"
DEFAULT_THREAD = "main"
_CASE_ID = re.compile(r"^[A-Za-z0-9_-]{6,64}$")


class ScopeError(ValueError):
    """A scope that the server must never build (unknown space, malformed case id)."""


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """A resolved (case, space) pair. Only server code constructs these, from validated ids.

    `generation` is the case's generation when the command began (a token every reset replaces): a card is
    written with it, and a read admits only cards of it, so a reset is one atomic step for every reader and
    writer. None only for work on ids and metadata that spans generations (deletes, retention, erasure)."""

    case_id: str
    space: Space
    thread: str = DEFAULT_THREAD
    generation: str | None = None

    def __post_init__(self) -> None:
        if not _CASE_ID.match(self.case_id):
            raise ScopeError("malformed case id")
        if self.space not in SPACES:
            raise ScopeError("unknown space")

    @property
    def user_id(self) -> str:
        """PowerMem `user_id`: the case is the tenant boundary."""
        return f"{TENANT}:{self.case_id}"

    @property
    def agent_id(self) -> str:
        """PowerMem `agent_id`: the space inside the case."""
        return self.space

    @property
    def key(self) -> str:
        return composite_key(self.case_id, self.space, self.thread)

    @property
    def is_board(self) -> bool:
        return self.space == BOARD


def composite_key(case_id: str, space: str, thread: str = DEFAULT_THREAD) -> str:
    """`tenant:user:thread:agent`, stored in every card's metadata and re-checked on read."""
    return f"{TENANT}:{case_id}:{USER}:{thread}:{space}"


def space_scope(case_id: str, space: str, generation: str | None = None) -> MemoryScope:
    """A scope from a stored space name (a cleanup task's, a card's), checked like every other."""
    if space not in SPACES:
        raise ScopeError("unknown space")
    return MemoryScope(case_id, space, generation=generation)


def role_scope(case_id: str, role: Role, generation: str | None = None) -> MemoryScope:
    if role not in ROLES:
        raise ScopeError("not a role")
    return MemoryScope(case_id, role, generation=generation)


def board_scope(case_id: str, generation: str | None = None) -> MemoryScope:
    return MemoryScope(case_id, BOARD, generation=generation)


def case_scopes(case_id: str, generation: str | None = None) -> list[MemoryScope]:
    """Every space of a case."""
    return [MemoryScope(case_id, space, generation=generation) for space in SPACES]


def readable_scopes(case_id: str, role: Role, generation: str | None = None) -> tuple[MemoryScope, MemoryScope]:
    """Everything a role may read: its own private space and the board. Nothing else, ever."""
    return (role_scope(case_id, role, generation), board_scope(case_id, generation))


def is_valid_case_id(case_id: str) -> bool:
    return bool(_CASE_ID.match(case_id))
