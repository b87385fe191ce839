"""Node state as columns: arrays over nodes (nodes.json order), built once per bundle, that the funnel's stages
and the evidence read with vector operations (rules/columnar.py) instead of a Python loop per pod shape × node.

- amounts per resource (capacity, allocatable, used by non-terminated pods, free = allocatable - used) as exact
  int64 in the scheduler's units (cpu in millicores, memory in bytes: 2**63 bytes is 8 EiB, far beyond any node).
  A resource with an amount beyond int64 (hostile, or absurd) is held as Python ints (an object array): slower,
  never rounded, and the same vector operations read it;
- kinds: nodes with the same taints and cordon (`taint_kind`) are one row for the taint and cordon checks, and
  nodes with the same capacity (`capacity_kind`) one row for the advertised check;
- label columns (`label(key)`): per node the code of its value for one label key (0: absent), made for the keys
  pods select on when first asked; node names are a column too (`names_column`, for matchFields metadata.name).
  Zone and hostname are label columns like any other (`domains(key)`: the topology domains of a key).

Derived columns are memoised (the same answer every time); the node records themselves are never changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from analyzer.model.nodes import NodeView

if TYPE_CHECKING:
    from analyzer.model.dra.allocate import DraWorld

INT64_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True, slots=True, kw_only=True)
class Amounts:
    """One resource over every node; absent counts as 0 (has_capacity tells absent from 0)."""

    capacity: np.ndarray
    allocatable: np.ndarray
    used: np.ndarray
    has_capacity: np.ndarray  # bool: the resource is a key of status.capacity

    @property
    def free(self) -> np.ndarray:
        return self.allocatable - self.used


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelColumn:
    """One label key over every node: codes[i] is 1 + the index of node i's value in `values`, 0 when absent."""

    codes: np.ndarray  # int32
    values: list[str]
    code: dict[str, int]  # value -> its code

    def codes_of(self, values: object) -> np.ndarray:
        """The codes of the listed values that some node has (strings only: a label value is a string)."""
        wanted = [self.code[v] for v in values if isinstance(v, str) and v in self.code] if isinstance(values, list) else []
        return np.array(sorted(set(wanted)), dtype=np.int32)


def distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(values, return_index=True, return_counts=True) of a 1-d array: the sorted distinct values, where
    each first occurs, how often each occurs. Without np.unique's cost per call on the small arrays a pod's stage
    has, and without its import of numpy.ma (20 ms, at its first call in numpy 2)."""
    if not len(values):
        empty = np.zeros(0, dtype=np.int64)
        return values[:0], empty, empty
    order = np.argsort(values, kind="stable")  # stable: the first of equal values comes first
    ranked = values[order]
    new = np.empty(len(ranked), dtype=bool)
    new[0] = True
    np.not_equal(ranked[1:], ranked[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return ranked[starts], order[starts], np.diff(starts, append=len(ranked))


def _fits(value: int) -> bool:
    return -INT64_MAX <= value <= INT64_MAX


class NodeColumns:
    def __init__(self, nodes: list[NodeView], usage: dict[str, dict[str, int]],
                 nominated: dict[str, dict[str, int]] | None = None) -> None:
        """`nominated`: per node what pods nominated there ask (model/nominated.py); used plus that must stay
        exact too, as fit adds it for the pods it counts for."""
        self.nodes = nodes
        self.n = len(nodes)
        self.names = [n.name for n in nodes]
        self.position = {name: i for i, name in enumerate(self.names)}  # node names are unique (model/build_nodes.py)
        names: set[str] = set()
        for n in nodes:
            names.update(n.capacity)
            names.update(n.allocatable)
        for used in usage.values():
            names.update(used)
        for asked in (nominated or {}).values():
            names.update(asked)
        self.resources = sorted(names)  # every resource some node has or some pod uses
        self._amounts: dict[str, Amounts] = {}
        zero = np.zeros(self.n, dtype=np.int64)
        for r in sorted(names):
            cap = [n.capacity.get(r, 0) for n in nodes]
            alloc = [n.allocatable.get(r, 0) for n in nodes]
            held = [(usage.get(n.name) or {}).get(r, 0) for n in nodes]
            most = [h + ((nominated or {}).get(n.name) or {}).get(r, 0) for h, n in zip(held, nodes)] if nominated else held
            # Python ints where some amount (or used plus what is nominated there) passes int64: exact either way.
            fits = all(map(_fits, cap)) and all(map(_fits, alloc)) and all(map(_fits, most))
            dtype = np.int64 if fits else object
            self._amounts[r] = Amounts(capacity=np.array(cap, dtype=dtype), allocatable=np.array(alloc, dtype=dtype),
                                       used=np.array(held, dtype=dtype),
                                       has_capacity=np.array([r in n.capacity for n in nodes], dtype=bool))
        self._absent = Amounts(capacity=zero, allocatable=zero, used=zero, has_capacity=np.zeros(self.n, dtype=bool))
        self.taint_kind, self.taint_kinds = self._kinds([(n.taints, n.unschedulable) for n in nodes])
        self.capacity_kind = self._kinds([tuple(n.capacity.items()) for n in nodes])[0]
        self._labels: dict[str, LabelColumn] = {}
        self._names_column: LabelColumn | None = None
        # Node positions as int32: a funnel keeps its stages' removed positions with its shape, and 5,000 pinned
        # DaemonSet pods keep 5,000 arrays of 4,999 positions each (half the memory, and less of it to fault in).
        self.everything = np.arange(self.n, dtype=np.int32)
        # Answers derived from the columns for one key (e.g. a set of tolerations per taint kind), kept by the
        # stages that make them (rules/columnar.py): the same key always gives the same answer.
        self.memo: dict[tuple, object] = {}

    @staticmethod
    def _kinds(keys: list[tuple]) -> tuple[np.ndarray, list[int]]:
        """Per node the id of its kind, and per kind its first node (the one the check runs on)."""
        ids: dict[tuple, int] = {}
        first: list[int] = []
        out = np.empty(len(keys), dtype=np.int32)
        for i, key in enumerate(keys):
            k = ids.get(key)
            if k is None:
                k = ids[key] = len(first)
                first.append(i)
            out[i] = k
        return out, first

    def amounts(self, resource: str) -> Amounts:
        return self._amounts.get(resource, self._absent)

    def label(self, key: str) -> LabelColumn:
        column = self._labels.get(key)
        if column is None:
            column = self._labels[key] = self._column([n.labels.get(key) for n in self.nodes])
        return column

    def domains(self, topology_key: str) -> LabelColumn:
        """The topology domains of a key (zone, hostname …): nodes with the same code share a domain; 0 has none."""
        return self.label(topology_key)

    def device_counts(self, world: DraWorld, class_name: str) -> np.ndarray:
        """Per node, the devices of a DeviceClass its ResourceSlices offer it (the class's selectors match;
        devices the model cannot judge left out), counted once per class."""
        key = ("devices", class_name)
        found = self.memo.get(key)
        if not isinstance(found, np.ndarray):
            found = self.memo[key] = np.array([world.class_devices(n).get(class_name, (0, ()))[0] for n in self.nodes],
                                              dtype=np.int64)
        return found

    @property
    def names_column(self) -> LabelColumn:
        if self._names_column is None:
            self._names_column = self._column(self.names)
        return self._names_column

    @staticmethod
    def _column(values: list[str | None]) -> LabelColumn:
        code: dict[str, int] = {}
        out = np.zeros(len(values), dtype=np.int32)
        for i, v in enumerate(values):
            if v is None:
                continue
            c = code.get(v)
            if c is None:
                c = code[v] = len(code) + 1
            out[i] = c
        return LabelColumn(codes=out, values=list(code), code=code)
