"""The inter-pod, spread and host-port filters from the node columns (rules/filter_columns.py) against the checks
node by node (tests/reference_funnel.py), on random clusters (hypothesis).

Each example is a cluster of random nodes (test_columns.py's: labels, zones, hostnames, taints, cordon, amounts)
with bound pods of random namespaces and labels, some holding host port 9100, some with required anti-affinity
on hostname, zone or a label some nodes lack; and a random pending pod with required pod affinity and
anti-affinity (matchLabels, matchExpressions, namespaces), DoNotSchedule spread constraints (maxSkew, minDomains,
both node inclusion policies) and host ports, sometimes beside pods nominated to a node by preemption that hold
the port there. For it the funnel's stages, the nearest nodes and the rebuilt
scheduler message are the same from the columns as node by node, and spread's counts per domain the same.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_columns import cluster_of, nodes

from analyzer.evidence import scheduler_message
from analyzer.evidence.nearest import Nearest
from analyzer.model.placement import LabelSets, Placement, anti_terms_json, host_ports
from analyzer.model.pod_filters import pod_filters
from analyzer.rules import spread
from analyzer.rules.checks import PodFacts
from analyzer.rules.funnel import run_funnel
from analyzer.rules.funnel_text import stages_as_data
from reference_funnel import funnel_by_node, nearest_by_node, rebuild_by_node, spread_by_node

APPS = ["web", "train", "db"]
KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "pool", "gpu"]  # pool, gpu: some nodes lack them
PORT = {"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}


def _selector(draw) -> dict:
    if draw(st.booleans()):
        return {"matchLabels": {"app": draw(st.sampled_from(APPS))}}
    op = draw(st.sampled_from(["In", "NotIn", "Exists"]))
    expr = {"key": draw(st.sampled_from(["app", "tier"])), "operator": op}
    if op != "Exists":
        expr["values"] = draw(st.lists(st.sampled_from(APPS + ["1", "2"]), min_size=1, max_size=2))
    return {"matchExpressions": [expr]}


def _term(draw) -> dict:
    term = {"labelSelector": _selector(draw), "topologyKey": draw(st.sampled_from(KEYS))}
    if draw(st.integers(0, 3)) == 0:
        term["namespaces"] = [draw(st.sampled_from(["a", "b"]))]
    return term


def _labels(draw) -> dict[str, str]:
    labels = {"app": draw(st.sampled_from(APPS))}
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(["1", "2"]))
    return labels


@st.composite
def worlds(draw):
    ns = draw(nodes())
    # Pending pods nominated to a node by preemption hold their host ports there (for pods of lower priority).
    nominated = [("a", f"nominated-{i}", draw(st.sampled_from(ns)).name, draw(st.sampled_from([0, 100])), {},
                  draw(st.sampled_from([(), (("TCP", 9100, "0.0.0.0"),)]))) for i in range(draw(st.integers(0, 2)))]
    c = cluster_of(ns, [{} for _ in ns], nominated)
    sets = LabelSets()
    rows = []
    for k in range(draw(st.integers(0, 12))):
        spec: dict = {"containers": [{"name": "c"}]}
        if draw(st.booleans()):
            spec["containers"][0]["ports"] = [PORT]
        if draw(st.integers(0, 3)) == 0:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(draw)]}}
        node = draw(st.sampled_from(ns)).name
        rows.append((draw(st.sampled_from(["a", "b"])), f"p{k}", node, sets.id_of(_labels(draw)), (), host_ports(spec),
                     anti_terms_json(spec)))
    c.placement = Placement.build(sets.sets, rows, {"a": {"team": "a"}, "b": {"team": "b"}})
    return c


@st.composite
def pods(draw) -> dict:
    spec: dict = {"containers": [{"name": "c"}]}  # no requests: fit fails only where no pod slot is left
    if draw(st.booleans()):
        spec["nodeSelector"] = {"pool": draw(st.sampled_from(["a", "b"]))}
    if draw(st.integers(0, 3)) == 0:
        spec["tolerations"] = [{"operator": "Exists"}]
    affinity: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if draw(st.integers(0, 2)) == 0:
            affinity[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(draw) for _ in range(draw(st.integers(1, 2)))]}
    if affinity:
        spec["affinity"] = affinity
    if draw(st.booleans()):
        spec["topologySpreadConstraints"] = [
            {"maxSkew": draw(st.integers(1, 2)), "topologyKey": draw(st.sampled_from(KEYS)), "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": _selector(draw), "minDomains": draw(st.sampled_from([None, 2, 5])),
             "nodeAffinityPolicy": draw(st.sampled_from(["Honor", "Ignore"])),
             "nodeTaintsPolicy": draw(st.sampled_from(["Honor", "Ignore"]))}
            for _ in range(draw(st.integers(1, 2)))]
        for c in spec["topologySpreadConstraints"]:
            if c["minDomains"] is None:
                del c["minDomains"]
    if draw(st.booleans()):
        spec["containers"][0]["ports"] = [PORT]
    return {"namespace": draw(st.sampled_from(["a", "b"])), "labels": _labels(draw), "spec": spec}


def _stages(funnel) -> list:
    return [(s.name, s.nodes_in, s.kept_at.tolist(), s.removed) for s in funnel.stages]


def _facts(c, pod: dict) -> PodFacts:
    filters = pod_filters(namespace=pod["namespace"], name="pending", labels=pod["labels"], spec=pod["spec"], storage=None,
                          placement=c.placement)
    counting = c.nominated.counting(0, "a/pending") if c.nominated is not None else ()
    return PodFacts.of(pod["spec"], filters=filters, nominated=counting)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=worlds(), pod=pods())
def test_the_filters_from_columns_are_the_checks_node_by_node(c, pod):
    fast, slow = run_funnel(_facts(c, pod), c.nodes, c), funnel_by_node(_facts(c, pod), c)
    assert _stages(fast) == _stages(slow)
    assert fast.word == slow.word
    assert stages_as_data(fast, c.nodes, 2) == stages_as_data(slow, c.nodes, 2)
    assert Nearest(c).of(_facts(c, pod)) == nearest_by_node(c).of(_facts(c, pod))
    facts = _facts(c, pod)
    assert scheduler_message.Rebuilder(c).rebuild(facts) == rebuild_by_node(c, facts)
    facts = _facts(c, pod)
    assert spread.state(facts, c) == spread_by_node(facts, c)


def test_a_node_two_existing_pods_forbid_names_the_first_key_in_order():
    """Two existing pods' anti-affinity against the pod, by hostname and by zone, both on node n0: the columns
    and the node-by-node check name the same one (the keys are judged in sorted order)."""
    from analyzer.model.nodes import NodeView

    ns = [NodeView(name=f"n{i}", index=i, labels={"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": "z1"},
                   unschedulable=False, taints=(), capacity={"cpu": 4000, "pods": 10}, allocatable={"cpu": 4000, "pods": 10})
          for i in range(10)]
    c = cluster_of(ns, [{} for _ in ns])
    sets = LabelSets()
    rows = []
    for k, key in enumerate(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]):
        spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": key}]}}}
        rows.append(("a", f"guard{k}", "n0", sets.id_of({"app": "db"}), (), (), anti_terms_json(spec)))
    c.placement = Placement.build(sets.sets, rows, None)
    pod = {"namespace": "a", "labels": {"app": "web"}, "spec": {"containers": [{"name": "c"}]}}
    fast, slow = run_funnel(_facts(c, pod), c.nodes, c), funnel_by_node(_facts(c, pod), c)
    assert fast.word == slow.word == "pod-affinity"
    assert stages_as_data(fast, c.nodes, None) == stages_as_data(slow, c.nodes, None)
    reasons = [r["reason"] for st_ in stages_as_data(fast, c.nodes, None) for r in st_["removed"]]
    assert any("kubernetes.io/hostname=n0" in r for r in reasons)  # hostname sorts before zone
