"""Draw docs/architecture.md's pictures from the code's own imports (grimp, the graph import-linter reads).

Mermaid pictures, written between markers in the document:
- the layers: one node per package of `bureau`, one arrow per package that imports another, labelled with how
  many module-to-module imports it stands for;
- a room (the memory, the vault): its modules (a subpackage as one node), the imports between them, and which
  of them the rest of `bureau` imports (its doors).

`--check` writes nothing and exits 1 when the document's pictures are not what the code draws today
(`tests/unit/test_architecture_picture.py` runs it, so a new import that changes a picture fails until the
pictures are redrawn with `make architecture`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import grimp

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
ROOT = "bureau"
ROOMS = ("memory", "vault")  # the packages drawn room by room
INIT = "package"  # the node of a room's __init__.py
# Top to bottom, as the layers contract in pyproject.toml orders them; the modules beside the layers last.
LAYER_ORDER = ("cli", "api", "evaluation", "bootstrap", "game", "answering", "memory", "ledger", "vault", "scope")


def _owner(module: str, depth: int) -> str:
    """The name of the package (or module) `depth` levels below `bureau` that holds `module`."""
    return ".".join(module.split(".")[: depth + 1])


def _short(name: str, prefix: str) -> str:
    return name.removeprefix(prefix + ".")


def _crossings(graph: grimp.ImportGraph, group: dict[str, str]) -> Counter[tuple[str, str]]:
    """(importer's group, imported's group) -> how many direct module imports cross between the two."""
    counts: Counter[tuple[str, str]] = Counter()
    for importer in group:
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported in group and group[importer] != group[imported]:
                counts[group[importer], group[imported]] += 1
    return counts


def layers_picture(graph: grimp.ImportGraph) -> str:
    group = {m: _short(_owner(m, 1), ROOT) for m in graph.modules if m.startswith(ROOT + ".")}
    names = sorted(set(group.values()), key=lambda n: (LAYER_ORDER.index(n) if n in LAYER_ORDER else 99, n))
    lines = ["flowchart TD"]
    lines += [f"  {name}[{name}{'/' if _is_package(graph, ROOT + '.' + name) else '.py'}]" for name in names]
    for (source, target), count in sorted(_crossings(graph, group).items()):
        lines.append(f"  {source} -->|{count}| {target}")
    return "\n".join(lines)


def room_picture(graph: grimp.ImportGraph, room: str) -> str:
    package = f"{ROOT}.{room}"

    def node(module: str) -> str:
        if module == package:
            return INIT  # what `from bureau.<room> import …` reaches: the package's own names
        return _short(module, package).split(".")[0]  # a subpackage (memory's relevance) is one node

    members = {m: node(m) for m in graph.modules if m == package or m.startswith(package + ".")}
    outside = {m: _short(_owner(m, 1), ROOT) for m in graph.modules if m.startswith(ROOT + ".") and m not in members}
    lines = ["flowchart LR"]
    for name in sorted(set(members.values())):
        if name == INIT:
            shape = "__init__.py"
        else:
            shape = f"{name}/" if _is_package(graph, f"{package}.{name}") else f"{name}.py"
        lines.append(f"  {name}[{shape}]")
    for (source, target), _count in sorted(_crossings(graph, members).items()):
        lines.append(f"  {source} --> {target}")
    doors: set[tuple[str, str]] = set()
    for importer, caller in outside.items():
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported in members:
                doors.add((caller, members[imported]))
    for caller in sorted({c for c, _ in doors}):
        lines.append(f"  {caller}_caller([{caller}])")
    for caller, target in sorted(doors):
        lines.append(f"  {caller}_caller -.-> {target}")
    return "\n".join(lines)


def _is_package(graph: grimp.ImportGraph, module: str) -> bool:
    return bool(graph.find_children(module)) if module in graph.modules else False


def _replace(document: str, name: str, picture: str) -> str:
    start, end = f"<!-- picture:{name}:start -->", f"<!-- picture:{name}:end -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(document):
        raise SystemExit(f"{DOC.name} has no {start} … {end} markers")
    return pattern.sub(lambda _: f"{start}\n```mermaid\n{picture}\n```\n{end}", document)


def drawn(document: str) -> str:
    graph = grimp.build_graph(ROOT)
    document = _replace(document, "layers", layers_picture(graph))
    for room in ROOMS:
        document = _replace(document, room, room_picture(graph, room))
    return document


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the document's pictures are stale")
    args = parser.parse_args()
    current = DOC.read_text(encoding="utf-8")
    fresh = drawn(current)
    if args.check:
        if fresh != current:
            print(f"{DOC} is stale: run `make architecture`", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(fresh, encoding="utf-8")
    print(f"Drew the layers and the rooms ({', '.join(ROOMS)}) into {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
