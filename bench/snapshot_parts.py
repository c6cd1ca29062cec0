"""Where a snapshot read's time goes as one case grows (issue 27): each part of `Bureau.snapshot`, timed alone,
and a page of the record.

An in-process app (open mode, evidence mode, embedded seekdb) over a scratch data directory; one case of
safe-combination (en) grown by real interrogations through the game (`Bureau.interrogate`, the roles
rotating, the questions cycling through the scenario's presets). At each size in `--sizes`, the p50 of
`--reads` calls of each part:

- `case row`: `require_case` (the ledger's case row);
- `list <space>`: the memory store's list of each space (the cards the snapshot shows; session records are
  trimmed to the newest few, so the cards stay few however many questions were asked);
- `list detective, a new case`: the same list for a case created at that size in the same store (no history
  of its own): tells a list slowed by its own space's history from one slowed by the table's size;
- `list all spaces`: the four spaces in one store call, as the snapshot reads them (on seekdb one statement);
- `case view`: the snapshot's one ledger read (`case_view`): the case row, the newest record entry of each
  kind, the matrix and latest answers the ledger keeps;
- `whole snapshot`: `Bureau.snapshot`, all of the above and the view;
- `record page (50)`: `Bureau.record_page`, the newest 50 entries opened (what `/record` reads, before JSON).

Stdout is the table, stderr the progress.

    .venv/bin/python bench/snapshot_parts.py                      # 0, 1 000, 10 000 questions
    .venv/bin/python bench/snapshot_parts.py --sizes 0,300 --reads 10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from harness import load_line, markdown_table, p50_ms, progress, scratch_dir, vault_beside

QUESTIONS = (
    "What is the safe combination?",
    "Where is the safe hidden?",
    "What time was the break-in?",
    "What is your alibi for the night of the break-in?",
)
ROLES = ("detective", "informant", "suspect")


def lister(services: Any, case_id: str, *spaces: str) -> Callable[[], Awaitable[Any]]:
    """Spaces of a case listed as the operator's views list them: a grant minted per call, as per request."""
    from bureau.scope.keys import space_scope
    from bureau.scope.vocabulary import Purpose

    async def listed() -> Any:
        generation = (await services.ledger.cases.get_case(case_id)).generation
        scopes = [space_scope(case_id, space, generation) for space in spaces]
        grant = await services.vault.grant(case_id, generation, Purpose.OPERATOR, reads=scopes)
        try:
            return await services.gateway.list_spaces(grant)
        finally:
            grant.close()

    return listed


async def measure(sizes: list[int], reads: int) -> list[list[str]]:
    for name in [n for n in os.environ if n.startswith("BUREAU_")]:
        del os.environ[name]
    from bureau.api.app import create_app
    from bureau.bootstrap.collector import settle_after_start
    from bureau.config import Settings
    from bureau.scope.keys import SPACES

    data = scratch_dir("bench-parts-")
    app = create_app(Settings(_env_file=None, data_dir=data, vault_dir=vault_beside(data)))
    rows: list[list[str]] = []
    async with app.router.lifespan_context(app):
        settle_after_start()
        services = app.state.services
        bureau, ledger = services.bureau, services.ledger
        cases, questions, access = bureau.case_service, bureau.question_service, bureau.case_access
        case_id = (await cases.create_case("safe-combination", "en")).case.id
        await questions.cross_examine(case_id, ["informant", "suspect"], QUESTIONS[0])
        asked = 0
        for size in sizes:
            while asked < size:
                await questions.interrogate(case_id, ROLES[asked % 3], QUESTIONS[asked % len(QUESTIONS)])  # type: ignore[arg-type]
                asked += 1
                if asked % 500 == 0:
                    progress(f"{asked:,}/{size:,} questions")
            fresh_case = (await cases.create_case("safe-combination", "en")).case.id

            async def case_view() -> Any:  # with the operator's grant, as the snapshot reads it
                case = await access.require_case(case_id)
                async with bureau.keys.operator(case) as grant:
                    return await ledger.cases.case_view(
                        case_id, grant=grant, steps=bureau.catalogue.knowledge_steps(case)
                    )

            parts: dict[str, Callable[[], Awaitable[Any]]] = {
                "case row": lambda: access.require_case(case_id),
                **{f"list {space}": lister(services, case_id, space) for space in SPACES},
                # The same list for a case created just now in the same store: is a slow list the owner's own
                # history (rows written and deleted under that case and space) or the table's?
                "list detective, a new case": lister(services, fresh_case, "detective"),
                # What the snapshot reads: every space of the case in one store call.
                "list all spaces": lister(services, case_id, *SPACES),
                "case view": case_view,
                "whole snapshot": lambda: access.snapshot(case_id),
                "record page (50)": lambda: bureau.record_service.record_page(case_id, None, 50),
            }
            timed = {name: await p50_ms(call, reads) for name, call in parts.items()}
            rows.append([f"{size:,}", *(f"{ms:.2f}" for ms in timed.values())])
            progress(f"{size:,} questions measured")
    return [["N questions", *parts.keys()], *rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0,1000,10000", help="questions in the case at each measurement")
    parser.add_argument("--reads", type=int, default=30, help="calls of each part at each size")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"before: {load_line()}")
    header, *rows = asyncio.run(measure(sizes, args.reads))
    print(f"after: {load_line()}")
    print(f"p50 ms of {args.reads} calls per part; in-process, evidence mode, embedded seekdb")
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
