"""Nodes indexed for the selector stage, so the funnel costs pods + nodes, not pods × nodes.

A stuck DaemonSet rollout is 5,000 Pending pods, each pinned to its own node by
`matchFields metadata.name In [node]`: every pod has its own shape, and checking every node for every pod
is 25 million checks. The index answers "which nodes can this selector possibly match" from labels and names
(a superset); the exact rule (model/matching.py) then runs on that superset only. What it cannot narrow
(NotIn, DoesNotExist, Gt, Lt alone) falls back to every node, so the answer is always exact.
"""

from __future__ import annotations

from analyzer.model.nodes import NodeView

Positions = frozenset[int]


class NodeIndex:
    def __init__(self, nodes: list[NodeView]) -> None:
        self.nodes = nodes
        self.everything: Positions = frozenset(range(len(nodes)))
        self._by_name: dict[str, int] = {}
        self._by_label: dict[tuple[str, str], set[int]] = {}
        self._by_key: dict[str, set[int]] = {}
        for i, n in enumerate(nodes):
            self._by_name.setdefault(n.name, i)
            for k, v in n.labels.items():
                self._by_label.setdefault((k, v), set()).add(i)
                self._by_key.setdefault(k, set()).add(i)

    def _label(self, key: str, value: str) -> Positions:
        return frozenset(self._by_label.get((key, value), ()))

    def _expression(self, expr: dict) -> Positions | None:
        """Nodes that can satisfy one matchExpressions requirement; None: cannot narrow (every node)."""
        op, key, values = expr.get("operator"), str(expr.get("key", "")), expr.get("values") or []
        if op == "In":
            return frozenset().union(*(self._label(key, str(v)) for v in values)) if values else frozenset()
        if op == "Exists":
            return frozenset(self._by_key.get(key, ()))
        return None

    def _field(self, expr: dict) -> Positions | None:
        if expr.get("key") == "metadata.name" and expr.get("operator") == "In":
            return frozenset(self._by_name[v] for v in expr.get("values") or () if v in self._by_name)
        return None

    def _term(self, term: dict) -> Positions:
        found: Positions | None = None
        for expr in term.get("matchExpressions") or ():
            narrowed = self._expression(expr)
            if narrowed is not None:
                found = narrowed if found is None else found & narrowed
        for expr in term.get("matchFields") or ():
            narrowed = self._field(expr)
            if narrowed is not None:
                found = narrowed if found is None else found & narrowed
        return self.everything if found is None else found

    def possible(self, node_selector: tuple[tuple[str, str], ...], terms: list[dict] | None, pin: str) -> Positions:
        """A superset of the nodes that satisfy nodeSelector, required node affinity and spec.nodeName."""
        found = self.everything
        if pin:
            found = frozenset((self._by_name[pin],)) if pin in self._by_name else frozenset()
        for k, v in node_selector:
            found = found & self._label(k, v)
        if terms is not None:
            found = found & frozenset().union(*(self._term(t) for t in terms)) if terms else frozenset()
        return found
