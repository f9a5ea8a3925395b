#!/usr/bin/env python3
"""The layers of lib/ and src/DISTSPEC, read from their #include lines; ctest `layers.folders`.

    scripts/check_layers.py [REPO]

Each folder is a unit with a rank (README.md's "Layout"); an include may point down or across,
never up:

    4  src/DISTSPEC                 the LAMMPS glue: applies the plan
    3  lib/models/factory           the one file that knows every model kind
    2  lib/models/<kind>, plan      the model kinds (eam, lj, ewald, pme, mpnn, dftd3, torch, mace)
                                    and the decision layer; cuda/ is shared by the kinds' CUDA files
    1  lib/models (top level)       the model interface, the file reader, the edge toolkit
    0  lib/distspec                 the framework-generic core (no LAMMPS, no model)

Fails, naming each include, on: an include of a higher rank (an arrow running back up); a LAMMPS
header in lib/; a cycle among the folders of one rank (pme -> ewald is fine, ewald -> pme as
well would not be); a cycle among files. Prints the folder graph it read.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = {".h", ".hpp", ".cpp", ".cu", ".cuh", ".inl"}


def unit_of(path: str) -> tuple[str, int]:
    """(folder unit, rank) of a path relative to the repository."""
    parts = path.split("/")
    if parts[0] == "src":
        return "src/DISTSPEC", 4
    if parts[:2] == ["lib", "distspec"]:
        return "lib/distspec", 0
    if parts[:2] == ["lib", "models"]:
        if len(parts) == 3:
            return "lib/models", 1
        folder = "lib/models/" + parts[2]
        if parts[2] == "factory":
            return folder, 3
        if parts[2] == "cuda":
            return folder, 1
        return folder, 2
    return "/".join(parts[:-1]), -1


def resolve(repo: Path, source: Path, name: str) -> str | None:
    """The repository path an include names, or None for a header outside lib/ and src/ (LAMMPS',
    torch's, the system's)."""
    for base in (source.parent, repo / "lib", repo / "src" / "DISTSPEC"):
        candidate = (base / name).resolve()
        if candidate.is_file() and repo in candidate.parents:
            return candidate.relative_to(repo).as_posix()
    return None


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph, as its nodes in order, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def main(repo: Path) -> int:
    files = sorted(p for root in ("lib", "src/DISTSPEC") for p in (repo / root).rglob("*")
                   if p.suffix in SOURCES and "build" not in p.relative_to(repo).parts)
    lammps_headers = {p.name for p in (repo / "src" / "DISTSPEC").glob("*.h")}
    problems: list[str] = []
    file_graph: dict[str, set[str]] = defaultdict(set)
    folder_graph: dict[str, set[str]] = defaultdict(set)
    ranks: dict[str, int] = {}  # folder unit -> rank, as unit_of gave it
    arrows = 0
    for source in files:
        path = source.relative_to(repo).as_posix()
        unit, rank = unit_of(path)
        ranks[unit] = rank
        for name in INCLUDE.findall(source.read_text(errors="replace")):
            target = resolve(repo, source, name)
            if target is None:
                if path.startswith("lib/") and (name in ("lammps.h", "pointers.h", "comm.h", "atom.h", "force.h")
                                               or name in lammps_headers):
                    problems.append(f"{path}: includes LAMMPS' \"{name}\" (lib/ includes no LAMMPS header)")
                continue
            arrows += 1
            file_graph[path].add(target)
            other, other_rank = unit_of(target)
            ranks[other] = other_rank
            if other == unit:
                continue
            folder_graph[unit].add(other)
            if other_rank > rank:
                problems.append(f"{path} (rank {rank}, {unit}) includes {target} (rank {other_rank}, {other}): "
                                "an arrow running back up")
    by_rank: dict[int, dict[str, set[str]]] = defaultdict(dict)
    for unit, targets in folder_graph.items():
        by_rank[ranks[unit]][unit] = {t for t in targets if ranks[t] == ranks[unit]}
    for rank, graph in sorted(by_rank.items()):
        if found := cycle(graph):
            problems.append(f"folders of rank {rank} include each other in a cycle: {' -> '.join(found)}")
    if found := cycle(file_graph):
        problems.append(f"files include each other in a cycle: {' -> '.join(found)}")
    print(f"{len(files)} files, {arrows} includes within lib/ and src/DISTSPEC; folder graph:")
    for unit in sorted(folder_graph):
        print(f"  {unit} -> {', '.join(sorted(folder_graph[unit]))}")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"{'FAILED' if problems else 'PASSED'}: {len(problems)} arrows up, folder or file cycles, LAMMPS headers in lib/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()))
