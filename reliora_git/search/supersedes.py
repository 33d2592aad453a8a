"""What ``check`` says about the ``supersedes`` lists of a store (SPEC.md §11). Pure.

Records that supersede one another hide each other from search, so ``check``
warns about them. A store is untrusted input: nine records naming each other
have 9! simple cycles, so cycles are not listed one by one; each group of
records that reach one another (a strongly connected component, found by
Tarjan's algorithm without recursion) is reported once, with one of its
shortest cycles as the example to break. Everything here is linear in the
number of records and ``supersedes`` entries.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from reliora_git.records.model import Problem

#: Ids named in one report line before "… and N more".
SHOWN_IDS = 10


def strongly_connected(edges: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """The components of more than one node, each sorted, ordered by their smallest id.

    Iterative Tarjan: a store's graph can be a path of 100,000 records, far deeper
    than Python's recursion limit.
    """
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges.get(root, ())))]
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges.get(target, ()))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], order[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    components.sort()
    return components


def shortest_cycle(edges: Mapping[str, Sequence[str]], start: str, within: set[str]) -> list[str]:
    """A shortest cycle from ``start`` back to it inside ``within`` (breadth first)."""
    came_from: dict[str, str] = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in edges.get(node, ()):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1]
            if target in within and target not in came_from:
                came_from[target] = node
                queue.append(target)
    return [start]  # not reached for a member of a component


def supersedes_problems(
    records: Iterable[tuple[str, str, Sequence[str]]],
) -> dict[str, list[Problem]]:
    """Warnings by locator for ``(id, locator, supersedes)`` of every record read.

    A ``supersedes`` id no record has, a record that supersedes itself, and each
    cycle group once, on the file of its smallest id.
    """
    listed = list(records)
    owner: dict[str, str] = {}
    for record_id, locator, _ in listed:
        owner.setdefault(record_id, locator)
    edges: dict[str, list[str]] = {}
    found: dict[str, list[Problem]] = {}
    for record_id, locator, supersedes in listed:
        targets = edges.setdefault(record_id, [])
        unknown: list[str] = []
        seen: set[str] = set()
        for old in supersedes:
            if old in seen:
                continue
            seen.add(old)
            if old == record_id:
                found.setdefault(locator, []).append(Problem("warning", "supersedes itself"))
            elif old in owner:
                targets.append(old)
            else:
                unknown.append(old)
        if unknown:
            message = f"supersedes {_names(unknown)}, which no record has"
            found.setdefault(locator, []).append(Problem("warning", message))
    for component in strongly_connected(edges):
        first = component[0]
        cycle = shortest_cycle(edges, first, set(component))
        message = f"is part of a supersedes cycle: {' → '.join([*cycle, first])}"
        if len(cycle) < len(component):
            message += f"; {len(component)} records supersede one another: {_names(component)}"
        found.setdefault(owner[first], []).append(Problem("warning", message))
    return found


def _names(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:SHOWN_IDS])
    more = len(ids) - SHOWN_IDS
    return f"{shown} … and {more} more" if more > 0 else shown
