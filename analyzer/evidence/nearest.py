"""Nearest nodes (causes.md v2, Evidence): the nodes a pod fails on for exactly one reason, with that reason in
words a person acts on. Whatever the word, that is the change that would let the pod run soonest.

Every check runs on every node, not only the first failing one, but not for every pod shape: the checks that do
not depend on the selector (advertised, device selectors, cordon/taints, allocatable, fit) are counted once per
(tolerations, requests, claims) and node, and stop at two failures (only "none" and "exactly one" matter). Per
pod shape only the nodes the node index cannot rule out are looked at again. A node that lacks the resource is
one failure (restore the plugin), not three (advertised, allocatable and fit on the same resource).
"""

from __future__ import annotations

from analyzer.model.quantity import format_units
from analyzer.model.nodes import NodeView
from analyzer.model.views import Cluster
from analyzer.rules import dra_devices
from analyzer.evidence.filters import nearest_failures
from analyzer.rules.reason import Check, Reason
from analyzer.rules.checks import PodFacts, check_advertised, check_allocatable, check_device_selectors, check_policy, check_selector, shortages

SHOWN = 5  # nearest nodes listed per pod; the rest are counted
# Which one change is nearest to running: load first, then policy, health and neighbours, what a node has, and
# selection.
_ORDER = {Check.FIT: 0, Check.DEVICES: 0, Check.HOST_PORT: 0, Check.RWOP: 0, Check.VOLUME_LIMIT: 0,
          Check.TAINT: 1, Check.CORDON: 1, Check.DEVICE_TAINT: 1,
          Check.ZERO_ALLOCATABLE: 2, Check.POD_AFFINITY: 2, Check.TOPOLOGY_SPREAD: 2,
          Check.NOT_ADVERTISED: 3, Check.OTHER_NAME: 3, Check.NO_DEVICES: 3,
          Check.DEVICE_SELECTORS: 4, Check.DEVICE_CONSTRAINTS: 4, Check.VOLUME_TOPOLOGY: 4, Check.VOLUME_ZONE: 4,
          Check.VOLUME_BINDING: 4,
          Check.SELECTOR: 5, Check.NODE_NAME: 5, Check.CLAIM_PINNED: 5}


FIT_LATER = ""  # the fit text names who holds the units: built only for the nodes that are shown


def _fit_reason(pod: PodFacts, node: NodeView, cluster: Cluster, skip: set[str]) -> Reason | None:
    """Fit, leaving out the resources an earlier failure already explains (absent or allocatable 0)."""
    if any(s.resource not in skip for s in shortages(pod, node, cluster)):
        return Reason(check=Check.FIT, text=FIT_LATER)
    devices = dra_devices.devices_free(pod.claims, node, cluster)
    return Reason(check=Check.DEVICES, text="only " + devices.text) if devices else None


def _fit_text(pod: PodFacts, node: NodeView, cluster: Cluster) -> str:
    """For a node whose one failure is fit (nothing else explains a shortage there)."""
    short = shortages(pod, node, cluster)
    if short:
        s = short[0]
        holders = sorted(((h.requests.get(s.resource, 0), h.key) for h in cluster.pods_on.get(node.name, ())
                          if h.requests.get(s.resource)), reverse=True)
        held = ", ".join(f"{key} holds {format_units(s.resource, units)}" for units, key in holders[:3])
        more = f" and {len(holders) - 3} more" if len(holders) > 3 else ""
        text = (f"only {format_units(s.resource, max(s.free, 0))} of {format_units(s.resource, s.allocatable)} "
                f"{s.resource} free, {format_units(s.resource, s.requested)} asked"
                + (f": {held}{more}" if held else "")
                + (f" (and short of {', '.join(x.resource for x in short[1:])})" if len(short) > 1 else ""))
        return text
    return "only room: it does not fit"


def failures(pod: PodFacts, node: NodeView, cluster: Cluster) -> list[Reason]:
    """The checks other than the selector that fail on this node (at most two: enough to tell 0, 1, more)."""
    found, explained = _before_fit(pod, node, cluster)
    return found if len(found) > 1 else _with_fit(found, explained, pod, node, cluster)


def _before_fit(pod: PodFacts, node: NodeView, cluster: Cluster) -> tuple[list[Reason], set[str]]:
    """The failures before the fit check, and the resources they already explain. Without claims or
    DeviceClass-served resources these read only the node's capacity, allocatable, taints and cordon."""
    found: list[Reason] = []
    explained: set[str] = set()
    advertised = check_advertised(pod, node, cluster)
    if advertised is not None:
        advice = ("ask for the name it advertises, or change the device plugin's sharing or MIG configuration"
                  if advertised.check == "other-name" else "restore the device plugin or driver")
        found.append(Reason(check=advertised.check, text=f"only {advertised.text} ({advice})"))
        explained.update(pod.extended)
    for check in (check_device_selectors, check_policy):
        reason = check(pod, node, cluster)
        if reason is not None:
            text = reason.text.removeprefix("untolerated ")  # "only the taint k=v:NoSchedule"
            found.append(Reason(check=reason.check, text=f"only the {text}" if reason.check in (Check.TAINT, Check.CORDON)
                                else f"only: {text}"))
        if len(found) > 1:
            return found, explained
    if advertised is None:
        zero = check_allocatable(pod, node, cluster)
        if zero is not None:
            found.append(Reason(check=zero.check, text=f"only allocatable 0 ({zero.text}; repair the node)"))
            explained.update(r for r in pod.extended if node.allocatable.get(r, 0) == 0)
    return found, explained


def _with_fit(found: list[Reason], explained: set[str], pod: PodFacts, node: NodeView, cluster: Cluster) -> list[Reason]:
    fit = _fit_reason(pod, node, cluster, explained)
    return found + [fit] if fit is not None else found


def _node_blind(pod: PodFacts, cluster: Cluster) -> bool:
    """Do the checks before fit read nothing of a node but its signature (capacity, allocatable, taints,
    cordon)? Not with claims, nor when a DeviceClass may serve a requested extended resource: those read
    the node's own devices."""
    if pod.claims is not None:
        return False
    dra = cluster.dra
    return dra is None or all(dra.world.extended_class(r) is None for r in pod.extended)


def _signatures(nodes: list[NodeView]) -> list[tuple]:
    return [(tuple(n.capacity.items()), tuple(n.allocatable.items()), n.taints, n.unschedulable) for n in nodes]


def _selector_text(pod: PodFacts, node: NodeView) -> str:
    if pod.pin and node.name != pod.pin:
        return f"only spec.nodeName ({pod.pin})"
    lacking = [f"{k}={v}" for k, v in pod.node_selector if node.labels.get(k) != v]
    if lacking:
        return "only the label " + ", ".join(lacking) + (" and the required node affinity" if pod.terms is not None else "")
    return "only the required node affinity (its labels or name do not match)"


class Nearest:
    """Per cluster: caches the selector-independent failures per (resource key, node)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._failures: dict[tuple, list[list[Reason]]] = {}
        self._signatures: list[tuple] | None = None

    def _all(self, pod: PodFacts) -> tuple[list[list[Reason]], list[int]]:
        """Per node, the failures other than the selector; and the nodes with none (in nodes.json order)."""
        key = (pod.tolerations, pod.requests, pod.claims_shape, bool(pod.pin))  # a pinned pod meets only NoExecute
        if pod.filters is not None:  # the volume, inter-pod, spread and port checks on top, per their own shape
            full = key + (pod.filters_key, pod.node_selector, pod.affinity)  # spread reads the selector
            found = self._failures.get(full)
            if found is None:
                base, _ = self._all(PodFacts.of_shape(pod))
                c = self.cluster
                per_node = [f + nearest_failures(pod, n, c, 2 - len(f)) if len(f) < 2 else f
                            for f, n in zip(base, c.nodes or [])]
                found = self._failures[full] = (per_node, [i for i, f in enumerate(per_node) if not f])
            return found
        found = self._failures.get(key)
        if found is None:
            c = self.cluster
            nodes = c.nodes or []
            if _node_blind(pod, c):
                # 5,000 nodes are a few dozen kinds of node: the checks before fit run once per kind.
                if self._signatures is None:
                    self._signatures = _signatures(nodes)
                before: dict[tuple, tuple[list[Reason], set[str]]] = {}
                per_node = []
                for n, sig in zip(nodes, self._signatures):
                    pre = before.get(sig)
                    if pre is None:
                        pre = before[sig] = _before_fit(pod, n, c)
                    per_node.append(pre[0] if len(pre[0]) > 1 else _with_fit(pre[0], pre[1], pod, n, c))
            else:
                per_node = [failures(pod, n, c) for n in nodes]
            found = self._failures[key] = (per_node, [i for i, f in enumerate(per_node) if not f])
        return found

    def of(self, pod: PodFacts) -> dict:
        """{"nearest": [{"node", "reason"}…] (at most SHOWN), "nearest_more": n}, or none and a sentence.
        Costs the nodes the index cannot rule out plus SHOWN, not every node, per pod shape."""
        c = self.cluster
        nodes = c.nodes or []
        if not nodes or c.node_index is None:
            return {}
        per_node, zero = self._all(pod)
        matching = {i for i in c.node_index.possible(pod.node_selector, pod.terms, pod.pin)
                    if check_selector(pod, nodes[i], c) is None}
        near = sorted(((_ORDER.get(per_node[i][0].check, 9), i, per_node[i][0]) for i in matching
                       if len(per_node[i]) == 1), key=lambda x: (x[0], x[1]))
        # Nodes failing only the selector: every node with no other failure that the selector does not match.
        selector_only = len(zero) - sum(1 for i in matching if not per_node[i])
        shown = []
        for i in zero:
            if len(near) + len(shown) >= SHOWN:
                break
            if i not in matching:
                shown.append((_ORDER[Check.SELECTOR], i, Reason(check=Check.SELECTOR, text=_selector_text(pod, nodes[i]))))
        near = near + shown
        if not near:
            return {"nearest": [], "nearest_none": "no node is one change away: every node fails two or more checks"}
        total = len(near) - len(shown) + selector_only
        out: dict = {"nearest": [{"node": nodes[i].name,
                                  "reason": _fit_text(pod, nodes[i], c) if r.check is Check.FIT else r.text}
                                 for _, i, r in near[:SHOWN]]}
        if total > SHOWN:
            out["nearest_more"] = total - SHOWN
        return out
