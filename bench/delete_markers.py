"""What seekdb's delete markers cost a space's list, and what a compaction gives back (memory/compaction.py).

One gateway (embedded seekdb, the hashing embedder: the store is what is measured) over a scratch data
directory. Three cards in each of four spaces: the detective's, the informant's and the board of one case, and
the detective's of another case. Then, as each question does, a session record is written into the
detective's space and the retention trims it to the newest five, `--cycles` times; the automatic compaction
is off (`BUREAU_STORE_COMPACT_AFTER_DELETES=0`), so the markers stay until this script asks for one.

At the start, after the cycles, and after a major compaction (started as maintenance starts it, then waited
for), the p50 of `--reads` lists of each space, two ways:

- `SQL`: the statement the snapshot runs (memory/seekdb_search.py `rows`), alone: what the markers cost;
- `gateway`: `MemoryGateway.list`, the cards opened and re-checked.

The detective's space holds 8 cards after the cycles (3 + 5 session records), the others 3.
Stdout is the table, stderr the progress.

    .venv/bin/python bench/delete_markers.py                    # 2 000 cycles
    .venv/bin/python bench/delete_markers.py --cycles 500 --reads 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from harness import grant_over, load_line, markdown_table, p50_ms, progress, scratch_dir, scratch_vault, vault_beside

COMPACTION_DEADLINE_S = 300


async def measure(cycles: int, reads: int) -> list[list[str]]:
    for name in [n for n in os.environ if n.startswith("BUREAU_")]:
        del os.environ[name]
    from bureau.config import Settings
    from bureau.memory.embedders import HashingEmbeddings
    from bureau.memory.gateway import MemoryGateway
    from bureau.memory.types import CardDraft
    from bureau.scope.keys import MemoryScope
    from bureau.scope.memory_policy import WritePath
    from bureau.scope.vocabulary import CreatedBy, Kind, MemoryType, Trust

    settings = Settings(
        _env_file=None,
        data_dir=(data := scratch_dir("bench-markers-")),
        vault_dir=vault_beside(data),
        store_compact_after_deletes=0,
    )
    vault = scratch_vault(settings)  # keys without a ledger: the store is what is measured
    gateway = MemoryGateway(settings, HashingEmbeddings())
    await gateway.start()
    try:
        nearest = gateway.runner.nearest
        assert nearest is not None, "a seekdb store"
        case, other = "markers" + "a" * 6, "markers" + "b" * 6
        spaces = {
            "detective": MemoryScope(case, "detective", generation=""),
            "informant": MemoryScope(case, "informant", generation=""),
            "board": MemoryScope(case, "bulletin_board", generation=""),
            "detective, other case": MemoryScope(other, "detective", generation=""),
        }
        for scope in spaces.values():
            await gateway.write_many(
                await grant_over(vault, scope),
                [CardDraft(f"Note {i} of {scope.space}.", "note", Kind.NOTE) for i in range(3)],
            )

        rows: list[list[str]] = []

        async def row(label: str) -> None:
            sql = {
                name: await p50_ms(
                    lambda s=scope: gateway.runner.run(nearest.rows, s.user_id, [s.agent_id], 0, 500), reads
                )
                for name, scope in spaces.items()
            }
            grants = {name: await grant_over(vault, scope, writes=False) for name, scope in spaces.items()}
            listed = {name: await p50_ms(lambda g=grants[name]: gateway.list(g), reads) for name in spaces}
            rows.append([label, *(f"{sql[n]:.2f} / {listed[n]:.2f}" for n in spaces)])
            progress(f"{label}: measured")

        await row("start")
        for n in range(cycles):
            detective = await grant_over(vault, spaces["detective"])  # one grant per question, as the game mints
            draft = CardDraft(
                content=f"I was asked: question {n}?",
                index_text=f"question {n}?",
                topic="session",
                kind=Kind.NOTE,
                memory_type=MemoryType.SESSION,
                trust=Trust.LOW,
                created_by=CreatedBy.SYSTEM,
                path=WritePath.SYSTEM,
            )
            await gateway.write(detective, draft)
            await gateway.trim(detective, MemoryType.SESSION, 5)
            if (n + 1) % 500 == 0:
                progress(f"{n + 1:,}/{cycles:,} session records written and trimmed")
        await row(f"after {cycles:,} written and trimmed")

        gateway.runner.compaction.after_deletes = 1
        gateway.runner.compaction.deleted(1)
        started = time.perf_counter()
        before = await gateway.runner.run(nearest.execute, "SELECT frozen_scn FROM oceanbase.DBA_OB_MAJOR_COMPACTION")
        assert await gateway.compact_if_due(), "seekdb did not start a compaction"
        frozen = before
        while frozen == before or await gateway.runner.run(nearest.compacting):
            if time.perf_counter() - started > COMPACTION_DEADLINE_S:
                raise RuntimeError(f"the compaction did not end within {COMPACTION_DEADLINE_S} s")
            await asyncio.sleep(0.5)
            frozen = await gateway.runner.run(
                nearest.execute, "SELECT frozen_scn FROM oceanbase.DBA_OB_MAJOR_COMPACTION"
            )
        took = time.perf_counter() - started
        progress(f"the compaction took {took:.1f} s")
        await row(f"after a compaction ({took:.0f} s)")
        return [["", *spaces], *rows]
    finally:
        await gateway.close()
        vault.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=2000, help="session records written and trimmed")
    parser.add_argument("--reads", type=int, default=30, help="lists of each space at each step")
    args = parser.parse_args()
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"before: {load_line()}")
    header, *rows = asyncio.run(measure(args.cycles, args.reads))
    print(f"after: {load_line()}")
    print(f"p50 ms of {args.reads} lists per space, SQL statement / gateway list; embedded seekdb, hashing embedder")
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
