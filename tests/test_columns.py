"""The node columns against the checks node by node (tests/reference_funnel.py), on random clusters (hypothesis).

Each example is a cluster of random nodes (labels, zones, hostnames, taints, cordon, capacity and allocatable of
cpu, memory, pods and GPUs, some absent or 0, some GPUs as nvidia.com/gpu.shared (`resource-name-mismatch`), rarely an amount beyond
int64) with pods bound there, and a random
pod shape (nodeSelector, required node affinity with every operator and matchFields, tolerations, requests,
sometimes spec.nodeName, a priority), and sometimes pending pods nominated to nodes by preemption with their own
priorities (counted as used where their priority is at least the pod's), and sometimes a DeviceClass serving
an extended resource the pod may ask for (devices per node, some in use: `_Serving`). For that shape every funnel stage (nodes kept, nodes removed and why), the fit
evidence (every row, and the 3 closest with the counts of the rest), the nearest nodes and the rebuilt scheduler
message are the same from the columns as from each stage's rule node by node, on any number of nodes.
"""

from __future__ import annotations

from typing import cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.evidence import scheduler_message
from analyzer.evidence.fit import fit_evidence
from analyzer.evidence.nearest import Nearest
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.columns import NodeColumns
from analyzer.model.dra.outcomes import ExtendedOffer
from analyzer.model.dra.world import Dra
from analyzer.model.matching import Taint
from analyzer.model.node_index import NodeIndex
from analyzer.model.nominated import Nominated
from analyzer.model.placement import NominatedRow
from analyzer.model.podspec import priority_of
from analyzer.model.nodes import NodeView
from analyzer.model.node_conditions import NodeConditionSeen
from analyzer.model.views import BoundPod, Cluster
from analyzer.rules import columnar
from analyzer.rules.checks import PodFacts, node_policy
from analyzer.rules.funnel import STAGES, run_funnel
from analyzer.rules.funnel_text import stages_as_data
from reference_funnel import fit_by_node, funnel_by_node, judge_by_node, nearest_by_node, rebuild_by_node

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"  # the vendor's devices under another name (`resource-name-mismatch`): judged once per capacity
KEYS = {"pool": ["a", "b", "c"], "gpu": ["h100", "a100"], "tier": ["1", "2", "10", "x"]}
ZONES = ["z1", "z2", "z3"]
# Condition taints (node-unhealthy) beside user taints: the stage's word depends on which kinds remain.
TAINTS = [Taint(GPU, "present", "NoSchedule"), Taint("dedicated", "ml", "NoExecute"), Taint("soft", "1", "PreferNoSchedule"),
          Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"), Taint("node.kubernetes.io/memory-pressure", "", "NoSchedule"),
          Taint("node.kubernetes.io/not-ready", "", "NoSchedule"), Taint("node.kubernetes.io/not-ready", "", "NoExecute")]
TOLERATIONS = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}, {"key": "dedicated", "operator": "Equal", "value": "ml"},
               {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists"},
               {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
CONDITIONS = (NodeConditionSeen(type="MemoryPressure", status="True", reason="KubeletHasInsufficientMemory",
                                message="kubelet has insufficient memory available", since="2026-11-29T18:02:41Z"),
              NodeConditionSeen(type="Ready", status="False", reason="KubeletNotReady", message="", since=""))
AMOUNTS = {"cpu": [0, 500, 4000, 32000], "memory": [0, 2**30, 64 * 2**30], "pods": [0, 1, 110], GPU: [0, 1, 4, 8],
           SHARED: [0, 10]}
HUGE = 10**20  # beyond int64: the columns hold Python ints
SERVED = "example.com/served"  # no device plugin advertises it: only a DeviceClass may serve it


@st.composite
def nodes(draw) -> list[NodeView]:
    out = []
    for i in range(draw(st.integers(1, 14))):
        labels = {k: draw(st.sampled_from(v)) for k, v in KEYS.items() if draw(st.booleans())}
        labels.update({"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": draw(st.sampled_from(ZONES))})
        capacity, allocatable = {}, {}
        for r, values in AMOUNTS.items():
            if (r == GPU and not draw(st.booleans())) or (r == SHARED and draw(st.integers(0, 3))):
                continue
            capacity[r] = draw(st.sampled_from(values))
            allocatable[r] = min(capacity[r], draw(st.sampled_from(values)))
        if draw(st.integers(0, 30)) == 0:
            capacity["memory"] = allocatable["memory"] = HUGE
        taints = tuple(t for t in TAINTS if draw(st.integers(0, 3)) == 0)
        # The conditions behind condition taints, present or not (a taint may outlive its condition).
        conditions = tuple(CONDITIONS[: draw(st.integers(0, len(CONDITIONS)))])
        out.append(NodeView(name=f"n{i}", index=i, labels=labels, unschedulable=draw(st.integers(0, 4)) == 0,
                            taints=taints, capacity=capacity, allocatable=allocatable, conditions=conditions))
    return out


def _expr(draw) -> dict:
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"]))
    key = draw(st.sampled_from(list(KEYS) + ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]))
    values = draw(st.lists(st.sampled_from(["a", "b", "h100", "1", "2", "5", "z1", "n0", "n3"]), max_size=3))
    return {"key": key, "operator": op, "values": values}


@st.composite
def specs(draw) -> tuple[dict, str]:
    spec: dict = {}
    if draw(st.booleans()):
        spec["nodeSelector"] = {k: draw(st.sampled_from(v)) for k, v in KEYS.items() if draw(st.integers(0, 2)) == 0}
    if draw(st.booleans()):
        terms = []
        for _ in range(draw(st.integers(0, 2))):
            term: dict = {"matchExpressions": [_expr(draw) for _ in range(draw(st.integers(0, 2)))]}
            if draw(st.integers(0, 3)) == 0:
                term["matchFields"] = [{"key": "metadata.name", "operator": draw(st.sampled_from(["In", "NotIn"])),
                                        "values": [f"n{draw(st.integers(0, 12))}"]}]
            terms.append(term)
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    spec["tolerations"] = [t for t in TOLERATIONS if draw(st.integers(0, 2)) == 0]
    requests = {"cpu": draw(st.sampled_from(["100m", "2", "16"])), "memory": draw(st.sampled_from(["1Gi", "32Gi", "1Ti"]))}
    if draw(st.booleans()):
        requests[draw(st.sampled_from([GPU, GPU, GPU, SHARED]))] = str(draw(st.integers(1, 8)))
    if draw(st.integers(0, 3)) == 0:
        requests[SERVED] = str(draw(st.integers(1, 3)))
    spec["containers"] = [{"name": "c", "resources": {"requests": requests, "limits": {k: v for k, v in requests.items() if k in (GPU, SHARED)}}}]
    pin = f"n{draw(st.integers(0, 14))}" if draw(st.integers(0, 5)) == 0 else ""
    if draw(st.booleans()):
        spec["priority"] = draw(st.sampled_from(PRIORITIES))
    return spec, pin


class _Serving:
    """A DeviceClass serving one extended resource, as model/dra answers for it (DraWorld.extended_class and
    extended_offer): per node name its devices and how many are free; a node listing the resource in
    allocatable is served by its device plugin, unless `listed` (then the offer stands there too, to hold the
    two forms equal whatever the offer says). Claims-free pods ask the DRA model nothing else."""

    def __init__(self, resource: str, offers: dict[str, tuple[int, int]], listed: bool) -> None:
        self.resource, self.offers, self.listed = resource, offers, listed

    def extended_class(self, resource: str) -> str | None:
        return "served-class" if resource == self.resource else None

    def extended_offer(self, resource: str, node: NodeView) -> ExtendedOffer | None:
        if resource != self.resource or (resource in node.allocatable and not self.listed):
            return None
        offered, free = self.offers.get(node.name, (0, 0))
        return ExtendedOffer(device_class="served-class", offered=offered, free=free)


def cluster_of(ns: list[NodeView], held: list[dict[str, int]], nominated: list[NominatedRow] = (),
               serving: _Serving | None = None) -> Cluster:
    usage: dict[str, dict[str, int]] = {}
    pods_on: dict[str, list[BoundPod]] = {}
    for node, requests in zip(ns, held):
        if requests:
            pods_on[node.name] = [BoundPod(namespace="x", name=f"p-{node.name}", phase="Running", requests=requests)]
            usage[node.name] = {**requests, "pods": 1}
    promised = Nominated(list(nominated)) if nominated else None
    return Cluster(config=AcceleratorConfig(), nodes=ns, nodes_by_name={n.name: n for n in ns}, usage=usage,
                   pods_on=pods_on, unknown_usage={}, pod_targets=[], pod_keys=frozenset(), runtimeclasses=None,
                   quotas=None, scheduler_events={}, server_minor=36, missing={}, node_index=NodeIndex(ns),
                   columns=NodeColumns(ns, usage, promised.totals() if promised else None), nominated=promised,
                   dra=cast(Dra, serving))


@st.composite
def clusters(draw) -> Cluster:
    ns = draw(nodes())
    held = [{"cpu": draw(st.sampled_from([0, 1000, 30000])), GPU: draw(st.integers(0, 8))} if draw(st.booleans()) else {}
            for _ in ns]
    nominated = [("x", f"nominated-{i}", f"n{draw(st.integers(0, 15))}", draw(st.sampled_from(PRIORITIES)),
                  {"cpu": draw(st.sampled_from([0, 2000, 30000])), GPU: draw(st.integers(0, 8))}, ())
                 for i in range(draw(st.integers(0, 3)))]  # n14, n15: perhaps no such node
    serving = None
    if draw(st.integers(0, 2)) == 0:  # a DeviceClass serving an extended resource: devices, some in use
        offers = {}
        for n in ns:
            offered = draw(st.integers(0, 3))
            offers[n.name] = (offered, draw(st.integers(0, offered)))
        serving = _Serving(draw(st.sampled_from([SERVED, SERVED, GPU, SHARED])), offers, draw(st.booleans()))
    return cluster_of(ns, held, nominated, serving)


PRIORITIES = [0, 100, 1000]


def facts(c: Cluster, spec: dict, pin: str = "") -> PodFacts:
    """As the classifier makes them: the nominated pods of at least the pod's priority count, unless pinned."""
    counting = c.nominated.counting(priority_of(spec), "x/nominated-0") if c.nominated is not None and not pin else ()
    return PodFacts.of(spec, pin, nominated=counting)


def _stages(funnel) -> list:
    return [(s.name, s.nodes_in, s.kept_at.tolist(), s.removed) for s in funnel.stages]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=clusters(), shape=specs())
def test_columns_give_what_the_checks_give_node_by_node(c, shape):
    spec, pin = shape
    pod = facts(c, spec, pin)
    fast, slow = run_funnel(pod, c.nodes, c), funnel_by_node(pod, c)
    assert _stages(fast) == _stages(slow)
    assert fast.word == slow.word
    assert stages_as_data(fast, c.nodes, 2) == stages_as_data(slow, c.nodes, 2)
    if fast.fit_at is not None:
        for limit in (None, 3):
            assert fit_evidence(c, pod, fast, limit) == fit_by_node(c, pod, slow, limit)
    assert Nearest(c).of(pod) == nearest_by_node(c).of(pod)
    at = c.columns.everything
    by_kind = columnar.judge_by_key(node_policy, c.columns.taint_kind, pod, c, at)
    one_by_one = judge_by_node(_POLICY, pod, c, at)
    assert by_kind.kept.tolist() == one_by_one.kept.tolist()
    assert [(g.reason, g.at.tolist()) for g in by_kind.removed] == [(g.reason, g.at.tolist()) for g in one_by_one.removed]
    for p in (pod, facts(c, spec)):  # the scheduler never sees spec.nodeName; the rebuild holds for it all the same
        assert scheduler_message.Rebuilder(c).rebuild(p) == rebuild_by_node(c, p)


_POLICY = next(s for s in STAGES if s.name == "taints")


def test_an_amount_beyond_int64_is_held_exactly_in_the_columns():
    node = NodeView(name="big", index=0, labels={}, unschedulable=False, taints=(), capacity={"memory": HUGE, "pods": 110},
                    allocatable={"memory": HUGE, "pods": 110})
    c = cluster_of([node], [{}])
    assert c.columns.amounts("memory").allocatable.tolist() == [HUGE]
    pod = PodFacts.of({"containers": [{"name": "c", "resources": {"requests": {"memory": "1Ei"}}}]})
    assert run_funnel(pod, c.nodes, c).word is None  # 2**60 bytes fit in 10**20: compared exactly
    full = cluster_of([node], [{"memory": HUGE - 2**60}])  # 1Ei free of 10**20 bytes
    too_big = PodFacts.of({"containers": [{"name": "c", "resources": {"requests": {"memory": "7Ei"}}}]})
    funnel = run_funnel(too_big, full.nodes, full)
    assert funnel.word == "exhausted" and _stages(funnel) == _stages(funnel_by_node(too_big, full))
    assert stages_as_data(funnel, full.nodes, 2)[-1]["removed"][0]["reason"].startswith("memory: 1048576Ti free of 95367431640625Mi")


def test_device_counts_per_deviceclass_are_what_each_node_is_offered():
    """The DRA recording: node dx1 is offered the two devices of class gpu.example.com its ResourceSlice lists."""
    from helpers import RECORDINGS

    from analyzer.pipeline import Options, analyse

    analysis = analyse(RECORDINGS / "dra-exhausted-v1.36", Options())
    with analysis.bundle:
        c = analysis.cluster
        counts = c.columns.device_counts(c.dra.world, "gpu.example.com")
        assert dict(zip(c.columns.names, counts.tolist())) == {n.name: 2 if n.name == "dx1" else 0 for n in c.nodes}
        assert not c.columns.device_counts(c.dra.world, "no-such-class").any()


@given(st.lists(st.integers(min_value=0, max_value=40), max_size=300))
def test_distinct_is_numpys_unique_with_first_positions_and_counts(values):
    import numpy as np

    from analyzer.model.columns import distinct

    a = np.array(values, dtype=np.int64)
    want = np.unique(a, return_index=True, return_counts=True)
    got = distinct(a)
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
