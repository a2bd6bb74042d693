"""Connector cycles: pipelines that feed themselves through connectors,
reported as upstream's graph reports them when it builds the pipelines.

Upstream's graph has a node per pipeline's entry (its capabilities node),
per processor of a pipeline, per pipeline's fan-out, and per connector and
(exporting signal, receiving signal) pair; its node ids are FNV-1a hashes
of their names. Of its cycles it reports the first one Johnson's algorithm
finds (through the node with the least id), from its first connector:
``cycle detected: connector "c" (traces to traces) -> processor "p" in
pipeline "traces" -> connector "c" (traces to traces)``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluice.collector.component import SIGNAL_NAMES, ComponentID
from sluice.policy import Signal

if TYPE_CHECKING:
    from sluice.collector.config import Pipeline

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class Node:
    parts: tuple[str, ...]
    """Upstream's seed and names, hashed into the node's id."""
    shown: str = ""
    """How the cycle message names it ("" for nodes it leaves out)."""
    connector: bool = False

    @property
    def id(self) -> int:
        """Upstream's ``newNodeID``: FNV-1a (64 bits) of the parts joined with
        ``|``, as a signed integer."""
        value = _FNV_OFFSET
        for byte in "|".join(self.parts).encode():
            value = ((value ^ byte) * _FNV_PRIME) & _MASK
        return value - (1 << 64) if value >> 63 else value


def cycle_message(
    pipelines: Iterable[Pipeline],
    connector_routes: Mapping[ComponentID, Collection[tuple[Signal, Signal]]],
) -> str | None:
    """Upstream's ``cycle detected: ...`` for the first cycle, or None."""
    edges: dict[Node, list[Node]] = {}

    def edge(source: Node, target: Node) -> None:
        edges.setdefault(source, []).append(target)
        edges.setdefault(target, [])

    pipelines = list(pipelines)
    for pipeline in pipelines:
        pid = str(pipeline.id)
        previous = Node(("capabilities", pid))
        for cid in pipeline.processors:
            node = Node(("processor", pid, str(cid)), f'processor "{cid}" in pipeline "{pid}"')
            edge(previous, node)
            previous = node
        edge(previous, Node(("fanout_to_exporters", pid)))
    for cid, routes in connector_routes.items():
        for source in pipelines:
            if cid not in source.exporters:
                continue
            for target in pipelines:
                if cid not in target.receivers or (source.signal, target.signal) not in routes:
                    continue
                names = SIGNAL_NAMES[source.signal], SIGNAL_NAMES[target.signal]
                node = Node(
                    ("connector", str(cid), *names),
                    f'connector "{cid}" ({names[0]} to {names[1]})',
                    connector=True,
                )
                edge(Node(("fanout_to_exporters", str(source.id))), node)
                edge(node, Node(("capabilities", str(target.id))))
    cycle = _first_cycle(edges)
    if cycle is None:
        return None
    start = next(i for i, node in enumerate(cycle) if node.connector)
    cycle = cycle[start:] + cycle[:start]
    cycle.append(cycle[0])
    return "cycle detected: " + " -> ".join(node.shown for node in cycle if node.shown)


def _first_cycle(edges: Mapping[Node, list[Node]]) -> list[Node] | None:
    """The first cycle Johnson's algorithm finds: through the node with the
    least id of those on any cycle, following successors in id order
    (upstream's order among several is a Go map's, so not fixed)."""
    on_cycles = [
        node for component in _components(edges) if len(component) > 1 for node in component
    ]
    if not on_cycles:
        return None
    start = min(on_cycles, key=lambda node: node.id)
    path = [start]
    seen = {start}
    branches = [iter(sorted(edges[start], key=lambda node: node.id))]
    while branches:
        following = next(branches[-1], None)
        if following is None:
            branches.pop()
            path.pop()
        elif following == start:
            return path
        elif following not in seen:
            seen.add(following)
            path.append(following)
            branches.append(iter(sorted(edges[following], key=lambda node: node.id)))
    return None  # unreachable: start is on a cycle


def _components(edges: Mapping[Node, list[Node]]) -> list[list[Node]]:
    """Strongly connected components (Tarjan's, without recursion)."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    stack: list[Node] = []
    on_stack: set[Node] = set()
    found: list[list[Node]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            following = next(successors, None)
            if following is not None:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, iter(edges[following])))
                elif following in on_stack:
                    low[node] = min(low[node], index[following])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
    return found
