"""The occupancy picture from an analysis that already read the bundle (streamed): the report and `nodes`
share it, so neither parses pods.json a second time nor holds it whole."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import replace

from analyzer.bundle.catalog import PODS
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.dra.extended import IMPLICIT_EXTENDED_PREFIX
from analyzer.model.dra.reading import pod_claims
from analyzer.model.matching import tolerations_of
from analyzer.model.podspec import effective_requests
from analyzer.occupancy.compute import compute
from analyzer.occupancy.records import Occupancy, PodUse, SharedCard
from analyzer.occupancy.queues import queue_rows

if TYPE_CHECKING:
    from analyzer.model.vgpu import VgpuWorld
    from analyzer.pipeline import Analysis


def occupancy_of(analysis: "Analysis", config: AcceleratorConfig | None = None) -> "Occupancy | None":
    """analyzer.occupancy's picture, fed from what the analysis already built: raw node items (few), the
    effective requests of every counted pod per node (not parsed again: 150,000 pods cost seconds), the
    nodes whose usage an invalid pod hides, and the unbound targets with their own requests. `config`: the
    accelerators counted (the analysis's own unless given)."""
    c = analysis.cluster
    counted = config = config or c.config
    if c.nodes is None or not analysis.loaded.has(PODS.name):
        return None
    # Nodes the model left out are findings of the analysis already (file and JSON path): not repeated here.
    facts = list(c.nodes)
    uses = []
    accelerator: dict[str, bool] = {}  # resource name -> is it an accelerator (asked once per name)

    def holds_accelerator(requests: dict[str, int]) -> bool:
        for r, units in requests.items():
            if units > 0:
                known = accelerator.get(r)
                if known is None:
                    known = accelerator[r] = counted.is_accelerator(r)
                if known:
                    return True
        return False
    # Only pods holding an accelerator can appear in the picture: the DaemonSet and CPU pods (most of
    # 150,000) are not turned into records at all.
    for node, held in c.pods_on.items():
        for h in held:
            if not holds_accelerator(h.requests):
                continue
            uses.append(PodUse(namespace=h.namespace, name=h.name, node=node, phase=h.phase, requests=h.requests))
    for node in c.unknown_usage:
        uses.append(PodUse(namespace="?", name="?", node=node, readable=False))
    for t in c.pod_targets:
        if t.spec is not None and not t.node_name and not t.invalid:
            try:
                requests = effective_requests(t.spec)
            except Exception:  # noqa: BLE001 - the target's own verdict already names the unusable quantity
                continue
            selector = t.spec.get("nodeSelector") or {}
            uses.append(PodUse(namespace=t.namespace, name=t.name, phase=t.phase, requests=requests,
                               node_selector={str(k): str(v) for k, v in selector.items()} if isinstance(selector, dict) else {},
                               tolerations=_tolerations(t.spec)))
    if c.dra is not None:
        facts, uses, config = _with_devices(analysis, facts, uses, config)
    return replace(compute(facts, uses, config), not_started=_not_started(analysis),
                   queues=tuple(queue_rows(c.queues, config)), shared=_shared(c.vgpu))


def _shared(world: "VgpuWorld | None") -> tuple[SharedCard, ...]:
    if world is None:
        return ()
    out = []
    for vendor, regs in world.registrations.items():
        for node, reg in sorted(regs.items()):
            for u in world.cards(vendor, node):
                out.append(SharedCard(node=node, scheduler=vendor, card=u.card.uuid, type=u.card.type,
                                      memory=u.card.memory, memory_free=u.free_memory, cores=u.card.cores,
                                      cores_free=u.free_cores, shares=u.card.split, shares_used=u.count,
                                      healthy=u.card.healthy, handshake_age=reg.handshake_age, problem=reg.problem,
                                      pods=tuple(u.pods)))
            if not reg.cards:
                out.append(SharedCard(node=node, scheduler=vendor, card="-", type="-", memory=0, memory_free=0, cores=0,
                                      cores_free=0, shares=0, shares_used=0, healthy=False,
                                      handshake_age=reg.handshake_age, problem=reg.problem))
    return tuple(out)


def _not_started(analysis: "Analysis") -> dict[str, tuple[tuple[str, str], ...]]:
    """Node -> the pods bound there that have not started, with their word (the node-side words): the analysis's verdicts
    when it has them, else these few targets are classified here (their rule reads only the pod and its events)."""
    bound = [t for t in analysis.cluster.pod_targets if t.node_name and t.kind == "Pod"]
    if not bound:
        return {}
    known = {v.key: v.word for v in analysis.verdicts}
    clf = None
    out: dict[str, list[tuple[str, str]]] = {}
    for t in bound:
        word = known.get(t.key)
        if word is None:
            if clf is None:
                from analyzer.classify import Classifier  # only when needed: `nodes` classifies nothing else
                clf = Classifier(analysis.cluster)
            word = clf.classify(t).word
        out.setdefault(t.node_name, []).append((t.key, word))
    return {node: tuple(sorted(pods)) for node, pods in sorted(out.items())}


def _tolerations(spec: dict) -> tuple:
    """The pod's tolerations; none when the list cannot be read (its verdict names that)."""
    try:
        return tolerations_of(spec) if isinstance(spec.get("tolerations") or [], list) else ()
    except (AttributeError, TypeError):
        return ()


def _with_devices(analysis: "Analysis", facts: list, uses: list,
                  config: AcceleratorConfig) -> tuple[list, list, AcceleratorConfig]:
    """DRA devices per DeviceClass, as a resource named the way Kubernetes names a class's implicit extended
    resource (deviceclass.resource.kubernetes.io/<class>): offered devices are its allocatable, devices named by
    a claim's allocation are used, by the pods the claim is reserved for."""
    c = analysis.cluster
    assert c.dra is not None  # called only when the bundle has DRA objects
    world = c.dra.world
    out = []
    uses = list(uses)  # extended below, once per node: not copied per node
    for f in facts:
        node = c.nodes_by_name.get(f.name)
        offers = world.class_devices(node) if node is not None else {}
        if not offers:
            out.append(f)
            continue
        extra = {IMPLICIT_EXTENDED_PREFIX + name: count for name, (count, _) in offers.items()}
        out.append(replace(f, capacity={**f.capacity, **extra}, allocatable={**f.allocatable, **extra}))
        held: dict[tuple[str, str], dict[str, int]] = {}
        for name, (_, holders) in offers.items():
            for h in holders:
                for pod in h.pods or (f"{h.claim} (claim)",):
                    ns, _, pod_name = pod.partition("/")
                    requests = held.setdefault((ns, pod_name), {})
                    requests[IMPLICIT_EXTENDED_PREFIX + name] = requests.get(IMPLICIT_EXTENDED_PREFIX + name, 0) + 1
        uses.extend(PodUse(namespace=ns, name=name, node=f.name, phase=None, requests=req)
                    for (ns, name), req in held.items())
    # Pending pods with claims want devices of the classes their requests name.
    for t in c.pod_targets:
        if t.spec is None or t.node_name or t.invalid or not t.spec.get("resourceClaims"):
            continue
        pc = pod_claims({"metadata": {"namespace": t.namespace, "name": t.name}, "spec": t.spec, "status": t.status})
        if pc is None:
            continue
        wants: dict[str, int] = {}
        for rc in world.resolve(pc).claims:
            if not rc.allocated:
                for _, name in rc.spec.class_names():
                    wants[IMPLICIT_EXTENDED_PREFIX + name] = wants.get(IMPLICIT_EXTENDED_PREFIX + name, 0) + 1
        if wants:
            uses.append(PodUse(namespace=t.namespace, name=t.name, phase=t.phase, requests=wants,
                               tolerations=_tolerations(t.spec)))
    return out, uses, config.with_additions([IMPLICIT_EXTENDED_PREFIX + "*"])
