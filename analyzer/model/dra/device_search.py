"""The allocation search on one node, as k8s.io/dynamic-resource-allocation/structured does it
(internal/stable/allocator_stable.go, `allocateOne`): claims, then requests (firstAvailable in order),
then one device at a time, first solution wins, bounded by a step budget; and the ladder of searches
that names the first step at which a pod's claims cannot be met (dra.md steps 1-5). Separate from the
world (allocate.py), which builds the per-step device lists this only searches: the backtracking and
its budget are the one exponential part of the model and are read and tested on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.model.dra.outcomes import CelError
from analyzer.model.dra.views import ALL, ALLOCATION_RESULTS_MAX, DeviceAsk, DeviceRef, Request, TaintsUnknown


@dataclass(slots=True, kw_only=True)
class IndexedDevice:
    """One device the world indexes (its position in the world's list is `index`). Not frozen: the world adds
    what DeviceTaintRules say and compiles the CEL view on first use, once, while it is built."""

    index: int
    ref: DeviceRef
    raw: dict
    taints: tuple  # the slice's own, then those DeviceTaintRules add (taint_rules.py)
    unmodelled: str | None
    cel: Any = None
    taints_unknown: tuple[TaintsUnknown, ...] = ()  # rules that may taint it but cannot be judged, in rule order


@dataclass(slots=True, kw_only=True)
class AskLists:
    """One request alternative on one node: the device indices left after each step."""

    ask: DeviceAsk
    owner: str
    lists: dict[str, list[int]]  # step -> device indices left
    errors: list[CelError] = field(default_factory=list)
    unmodelled: str | None = None
    unevaluable: str | None = None
    why: str | None = None
    # A device passing the selectors whose taints a rule leaves unknown: an unreadable rule (taints_unknown), or a
    # rule selector the CEL library cannot evaluate (taints_unevaluable, with taints_why).
    taints_unknown: str | None = None
    taints_unevaluable: str | None = None
    taints_why: str | None = None


class _Budget(Exception):
    pass


class DeviceSearch:
    """Searches the world's devices (shared list, indexed by position) for an allocation, within
    `budget` device picks per search; `steps` counts the picks of all searches (for measurement)."""

    def __init__(self, *, devices: list[IndexedDevice], budget: int) -> None:
        self._devices = devices
        self._budget = budget
        self.steps = 0

    def first_failing(self, pending: list, lists: list) -> tuple[str, bool, dict[int, tuple[int, ...]]]:
        """The first step at which the pod's claims cannot all be met on this node (dra.md steps 1-5)."""
        def every_alternative_empty(step: str) -> bool:
            return any(all(not a.lists[step] for a in req) for claim in lists for req in claim)

        if every_alternative_empty("class"):
            return "class", False, {}
        if every_alternative_empty("selectors"):
            return "selectors", False, {}
        try:
            # The common answer first: one search when the pod fits; the ladder below only explains a failure.
            chosen = self._search(pending, lists, "free", constraints=True)
            if chosen is not None:
                return "ok", False, chosen
            if self._search(pending, lists, "selectors", constraints=False) is None:
                return "enough", True, {}  # even an empty node has too few matching devices
            if self._search(pending, lists, "selectors", constraints=True) is None:
                return "constraints", False, {}
            if self._search(pending, lists, "taints", constraints=True) is None:
                return "taints", False, {}
        except _Budget:
            return "budget", False, {}
        return ("free" if every_alternative_empty("free") else "enough"), False, {}

    def _search(self, pending: list, lists: list, step: str, *, constraints: bool) -> dict[int, tuple[int, ...]] | None:
        """Backtracking over claims, requests (firstAvailable in order) and devices, like allocateOne.

        Returns id(AskLists) -> chosen device indices, or None when no allocation exists at this step.
        """
        slots: list[tuple[int, Request, list[AskLists]]] = [
            (ci, req, lists[ci][ri]) for ci, rc in enumerate(pending) for ri, req in enumerate(rc.spec.requests)]
        used: set[int] = set()
        chosen: dict[int, tuple[int, ...]] = {}
        # matchAttribute state per (claim, constraint): [value, number of devices]
        state = {(ci, k): [None, 0] for ci, rc in enumerate(pending) for k in range(len(rc.spec.constraints))}

        def applies(ci: int, k: int, ask: DeviceAsk, request: str) -> bool:
            names = pending[ci].spec.constraints[k].requests
            return not names or request in names or ask.name in names

        def try_add(ci: int, ask: DeviceAsk, request: str, index: int) -> list[tuple[int, int]] | None:
            if not constraints:
                return []
            added = []
            for k, c in enumerate(pending[ci].spec.constraints):
                if not applies(ci, k, ask, request):
                    continue
                value = _attribute(self._devices[index], c.match_attribute or "")
                st = state[(ci, k)]
                if value is None or (st[1] and st[0] != value):
                    for kk in added:
                        state[kk][1] -= 1
                    return None
                if not st[1]:
                    st[0] = value
                st[1] += 1
                added.append((ci, k))
            return added

        def undo(added: list[tuple[int, int]]) -> None:
            for kk in added:
                state[kk][1] -= 1

        def candidates(a: AskLists) -> list[int]:
            pool = a.lists[step]
            if a.ask.mode != ALL:
                return pool
            # All: every device passing class, selectors and taints; at the free step they must all be free.
            everything = a.lists["taints" if step == "free" else step]
            return everything if step != "free" or len(pool) == len(everything) else []

        def place(s: int) -> bool:
            if s == len(slots):
                return True
            ci, req, alternatives = slots[s]
            for a in alternatives:
                pool = candidates(a)
                need = len(pool) if a.ask.mode == ALL else a.ask.count
                if need == 0 or need > ALLOCATION_RESULTS_MAX:
                    continue
                picked: list[int] = []

                def pick(start: int) -> bool:
                    if len(picked) == need:
                        chosen[id(a)] = tuple(picked)
                        if place(s + 1):
                            return True
                        del chosen[id(a)]
                        return False
                    for pos in range(start, len(pool)):
                        if len(pool) - pos < need - len(picked):
                            return False
                        index = pool[pos]
                        self.steps += 1
                        if self.steps > budget_end:
                            raise _Budget
                        if index in used and not a.ask.admin_access:
                            continue
                        added = try_add(ci, a.ask, req.name, index)
                        if added is None:
                            continue
                        picked.append(index)
                        if not a.ask.admin_access:
                            used.add(index)
                        if pick(pos + 1):
                            return True
                        picked.pop()
                        if not a.ask.admin_access:
                            used.discard(index)
                        undo(added)
                    return False

                if pick(0):
                    return True
            return False

        # Necessary condition first, so a hopeless case never enters the exponential search:
        # the smallest need of every request together cannot exceed the devices any of them could use.
        union = {i for _, _, alts in slots for a in alts for i in candidates(a)}
        least = sum(min((len(candidates(a)) if a.ask.mode == ALL else a.ask.count) for a in alts) for _, _, alts in slots)
        if least > len(union) and not any(a.ask.admin_access for _, _, alts in slots for a in alts):
            return None
        budget_end = self.steps + self._budget
        return chosen if place(0) else None


def _attribute(dev: IndexedDevice, qualified: str) -> tuple[str, Any] | None:
    """allocator_stable.go lookupAttribute: the fully qualified name, or the bare name when the domain is the driver."""
    attrs = dev.raw.get("attributes") or {}
    value = attrs.get(qualified)
    if value is None and "/" in qualified:
        domain, _, short = qualified.partition("/")
        if domain == dev.ref.driver:
            value = attrs.get(short)
    if not isinstance(value, dict) or len(value) != 1:
        return None
    kind, v = next(iter(value.items()))
    return (kind, v) if kind in ("bool", "int", "string", "version") else None
