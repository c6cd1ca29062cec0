"""A reset in one process retires the record key of a generation another process's command still began in:
that command meets it as a generation moved (it runs again in the new one), never as a 500."""

from __future__ import annotations

from pathlib import Path

import pytest

from bureau.scope.keys import RECORD
from bureau.scope.vocabulary import Purpose
from bureau.vault import GenerationRetiredError
from bureau.vault.items import new_item_id
from bureau.vault.opening import VaultLocation, create_vault, open_vault

CASE = "c0ffee00c0ffee00c0ffee01"


async def test_a_record_key_retired_by_another_process_is_a_generation_moved(tmp_path: Path) -> None:
    location = VaultLocation(tmp_path, f"sqlite:///{tmp_path / 'vault.db'}", tmp_path / "kek")
    here = create_vault(location, "v1")
    there = open_vault(location)  # another process on the same vault
    assert there is not None
    try:
        await here.create_case(CASE, "g0")
        here.keyring.case(CASE)  # this process has the case's keys cached: record.g0's, not later ones
        await there.open_generation(CASE, "g1")  # a reset there commits g1 ...
        await there.open_generation(CASE, "g2")  # ... and another commits g2, retiring g1's record key
        await there.retire_generation(CASE, "g1")

        stale = await here.grant(CASE, "g1", Purpose.INTERROGATION, record_writes=True)  # began in g1
        with pytest.raises(GenerationRetiredError):
            stale.seal(RECORD, new_item_id(), "the body of an answer")
        stale.close()

        current = await here.grant(CASE, "g2", Purpose.OPERATOR, record_reads=True, record_writes=True)
        sealed = current.seal(RECORD, new_item_id(), "the body of an answer")  # g2's key, made there, read here
        current.store_new_keys()
        assert current.open(RECORD, sealed) == "the body of an answer"
        current.close()
    finally:
        here.close()
        there.close()
