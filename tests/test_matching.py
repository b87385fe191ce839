"""Tolerations and node selection as the scheduler matches them, through the whole pipeline.

Sources: k8s.io/api/core/v1 Toleration.ToleratesTaint (effect empty matches all, key empty with Exists
matches all keys, Equal compares values); k8s.io/component-helpers/scheduling/corev1/nodeaffinity
(nodeSelector AND required affinity; terms ORed, expressions ANDed; an empty term matches nothing;
Gt/Lt parse both sides with strconv.ParseInt(…, 10, 64) and fail to match when either does not parse;
matchFields supports metadata.name). Nodes and pods are the lab's, relabelled.
"""

from __future__ import annotations

import pytest

from conftest import stage_of, GPU_TAINT, funnel_table, gpu_node, gpu_pod, lab_node, make_bundle, verdict

# -- tolerations: the lab's gpu-tainted node (nvidia.com/gpu=present:NoSchedule) -------------------------


def _on_tainted(tmp_path, tolerations, taint=None):
    node = lab_node("gpu-tainted")
    if taint is not None:
        node["spec"]["taints"] = [taint]
    pod = gpu_pod("trainer-0", node_selector={"pool": "tainted"})
    pod["spec"]["tolerations"] = pod["spec"]["tolerations"] + tolerations
    return verdict(make_bundle(tmp_path, pods=[pod], nodes=[node]), "lab/trainer-0").word


TOLERATION_CASES = [
    # (id, tolerations, taint (None: the lab's), word)
    ("none", [], None, "untolerated-taint"),
    ("exists-empty-key-tolerates-everything", [{"operator": "Exists"}], None, "fits-now"),
    ("exists-empty-key-noexecute-taint", [{"operator": "Exists"}],
     {"effect": "NoExecute", "key": "example.com/maintenance", "value": "true"}, "fits-now"),
    ("exists-key", [{"key": "nvidia.com/gpu", "operator": "Exists"}], None, "fits-now"),
    ("equal-same-value", [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}],
     None, "fits-now"),
    ("operator-omitted-means-equal", [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}], None, "fits-now"),
    ("equal-other-value", [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "absent", "effect": "NoSchedule"}],
     None, "untolerated-taint"),
    ("equal-needs-value", [{"key": "nvidia.com/gpu", "operator": "Equal", "effect": "NoSchedule"}], None, "untolerated-taint"),
    ("empty-effect-matches-noschedule", [{"key": "nvidia.com/gpu", "operator": "Exists"}], None, "fits-now"),
    ("empty-effect-matches-noexecute", [{"key": "nvidia.com/gpu", "operator": "Exists"}],
     {"effect": "NoExecute", "key": "nvidia.com/gpu", "value": "present"}, "fits-now"),
    ("other-effect", [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}], None, "untolerated-taint"),
    ("other-key", [{"key": "nvidia.com/mig", "operator": "Exists"}], None, "untolerated-taint"),
    ("noexecute-taint-blocks", [], {"effect": "NoExecute", "key": "nvidia.com/gpu", "value": "present"}, "untolerated-taint"),
    ("prefer-no-schedule-never-blocks", [], {"effect": "PreferNoSchedule", "key": "nvidia.com/gpu", "value": "present"},
     "fits-now"),
    ("taint-without-value-equal-empty", [{"key": "dedicated", "operator": "Equal", "value": "", "effect": "NoSchedule"}],
     {"effect": "NoSchedule", "key": "dedicated"}, "fits-now"),
]


@pytest.mark.parametrize("tolerations, taint, word", [c[1:] for c in TOLERATION_CASES], ids=[c[0] for c in TOLERATION_CASES])
def test_toleration_tolerates_taint(tmp_path, tolerations, taint, word):
    assert _on_tainted(tmp_path, tolerations, taint) == word


def test_every_taint_must_be_tolerated(tmp_path):
    node = lab_node("gpu-tainted")
    node["spec"]["taints"].append({"effect": "NoExecute", "key": "example.com/drain", "value": "true"})
    pod = gpu_pod("trainer-0", node_selector={"pool": "tainted"})
    pod["spec"]["tolerations"].append({"key": "nvidia.com/gpu", "operator": "Exists"})
    v = verdict(make_bundle(tmp_path, pods=[pod], nodes=[node]), "lab/trainer-0")
    assert v.word == "untolerated-taint"
    reason = next(iter(stage_of(v, "taints")[3].values()))
    assert "example.com/drain=true:NoExecute" in reason and "nvidia.com/gpu" not in reason


# -- nodeSelector and required node affinity --------------------------------------------------------------

# Three GPU nodes with GPU-feature-discovery style labels.
NODES = {
    "a100": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/cuda.driver.major": "550",
             "nvidia.com/gpu.memory": "81920", "topology.kubernetes.io/zone": "zone-a"},
    "h100": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/cuda.driver.major": "560",
             "nvidia.com/gpu.memory": "81559", "topology.kubernetes.io/zone": "zone-b", "nvidia.com/mig.capable": "true"},
    "t4": {"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/cuda.driver.major": "535",
           "nvidia.com/gpu.memory": "15360", "topology.kubernetes.io/zone": "zone-a"},
}


def _nodes():
    return [gpu_node(name, labels=labels) for name, labels in NODES.items()]


def _affinity(*terms):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def _expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def _fits_on(tmp_path, *, node_selector=None, affinity=None, nodes=None):
    spec = {}
    if affinity is not None:
        spec["affinity"] = affinity
    pod = gpu_pod("trainer-0", node_selector=node_selector, **spec)
    v = verdict(make_bundle(tmp_path, pods=[pod], nodes=nodes or _nodes()), "lab/trainer-0")
    if v.word == "selector-mismatch":
        assert v.funnel[0]["nodes_out"] == 0
        return set()
    assert v.word == "fits-now", (v.word, v.reason)
    return set(v.evidence["fits_on"])


PRODUCT = "nvidia.com/gpu.product"
DRIVER = "nvidia.com/cuda.driver.major"

AFFINITY_CASES = [
    ("in", [{"matchExpressions": [_expr(PRODUCT, "In", "NVIDIA-A100-SXM4-80GB", "Tesla-T4")]}], {"a100", "t4"}),
    ("in-no-match", [{"matchExpressions": [_expr(PRODUCT, "In", "NVIDIA-B200")]}], set()),
    ("notin", [{"matchExpressions": [_expr(PRODUCT, "NotIn", "Tesla-T4")]}], {"a100", "h100"}),
    # NotIn matches a node that lacks the label (labels.Requirement.Matches: !ls.Has(key) -> true)
    ("notin-absent-label", [{"matchExpressions": [_expr("nvidia.com/mig.capable", "NotIn", "true")]}], {"a100", "t4"}),
    ("exists", [{"matchExpressions": [_expr("nvidia.com/mig.capable", "Exists")]}], {"h100"}),
    ("doesnotexist", [{"matchExpressions": [_expr("nvidia.com/mig.capable", "DoesNotExist")]}], {"a100", "t4"}),
    ("gt", [{"matchExpressions": [_expr(DRIVER, "Gt", "540")]}], {"a100", "h100"}),
    ("lt", [{"matchExpressions": [_expr(DRIVER, "Lt", "550")]}], {"t4"}),
    ("gt-is-strict", [{"matchExpressions": [_expr(DRIVER, "Gt", "560")]}], set()),
    ("gt-absent-label", [{"matchExpressions": [_expr("nvidia.com/gpu.count", "Gt", "0")]}], set()),
    # Gt/Lt with a non-integer label value never matches (strconv.ParseInt fails)
    ("gt-non-integer-label", [{"matchExpressions": [_expr(PRODUCT, "Gt", "1")]}], set()),
    ("lt-non-integer-label", [{"matchExpressions": [_expr(PRODUCT, "Lt", "999999")]}], set()),
    ("terms-are-ored", [{"matchExpressions": [_expr(PRODUCT, "In", "Tesla-T4")]},
                        {"matchExpressions": [_expr("nvidia.com/mig.capable", "Exists")]}], {"t4", "h100"}),
    ("expressions-are-anded", [{"matchExpressions": [_expr("topology.kubernetes.io/zone", "In", "zone-a"),
                                                     _expr(DRIVER, "Gt", "540")]}], {"a100"}),
    ("empty-term-matches-nothing", [{}], set()),
    ("empty-term-or-real-term", [{}, {"matchExpressions": [_expr(PRODUCT, "In", "Tesla-T4")]}], {"t4"}),
    ("matchfields-metadata-name", [{"matchFields": [_expr("metadata.name", "In", "h100")]}], {"h100"}),
    ("matchfields-notin", [{"matchFields": [_expr("metadata.name", "NotIn", "h100")]}], {"a100", "t4"}),
    ("matchfields-and-expressions", [{"matchFields": [_expr("metadata.name", "In", "h100", "t4")],
                                      "matchExpressions": [_expr("topology.kubernetes.io/zone", "In", "zone-a")]}], {"t4"}),
]


@pytest.mark.parametrize("terms, fits", [c[1:] for c in AFFINITY_CASES], ids=[c[0] for c in AFFINITY_CASES])
def test_required_node_affinity_matches_like_the_scheduler(tmp_path, terms, fits):
    assert _fits_on(tmp_path, affinity=_affinity(*terms)) == fits


def test_node_selector_and_affinity_must_both_hold(tmp_path):
    affinity = _affinity({"matchExpressions": [_expr(DRIVER, "Gt", "540")]})  # a100, h100
    assert _fits_on(tmp_path, node_selector={"topology.kubernetes.io/zone": "zone-a"}, affinity=affinity) == {"a100"}
    assert _fits_on(tmp_path / "2", node_selector={"topology.kubernetes.io/zone": "zone-c"}, affinity=affinity) == set()


def test_node_selector_needs_every_label(tmp_path):
    sel = {"topology.kubernetes.io/zone": "zone-a", PRODUCT: "Tesla-T4"}
    assert _fits_on(tmp_path, node_selector=sel) == {"t4"}


def test_preferred_affinity_never_filters(tmp_path):
    affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchExpressions": [_expr(PRODUCT, "In", "NVIDIA-B200")]}}]}}
    assert _fits_on(tmp_path, affinity=affinity) == set(NODES)


def test_selector_mismatch_evidence_names_every_node(tmp_path):
    pod = gpu_pod("trainer-0", node_selector={"gpu-type": "h100"})
    v = verdict(make_bundle(tmp_path, pods=[pod], nodes=_nodes()), "lab/trainer-0")
    assert v.word == "selector-mismatch"
    name, nodes_in, nodes_out, removed = funnel_table(v)[0]
    assert (name, nodes_in, nodes_out) == ("selector", 3, 0)
    assert sorted(removed) == sorted(NODES)


def test_selector_is_checked_before_taints(tmp_path):
    # `selector-mismatch` before `untolerated-taint`: a pod whose only matching node is tainted is untolerated-taint,
    # and one whose selector matches no node is selector-mismatch even when every node is tainted.
    nodes = [gpu_node(n, labels=lbl, taints=[dict(GPU_TAINT)]) for n, lbl in NODES.items()]
    pod = gpu_pod("trainer-0", node_selector={PRODUCT: "Tesla-T4"})
    assert verdict(make_bundle(tmp_path, pods=[pod], nodes=nodes), "lab/trainer-0").word == "untolerated-taint"
    pod = gpu_pod("trainer-0", node_selector={PRODUCT: "NVIDIA-B200"})
    assert verdict(make_bundle(tmp_path, name="b2", pods=[pod], nodes=nodes), "lab/trainer-0").word == "selector-mismatch"


def test_gt_label_value_with_underscore_is_not_an_integer(tmp_path):
    # "5_50" is a valid label value ([-A-Za-z0-9_.]) but not a base-10 integer for strconv.ParseInt.
    nodes = [gpu_node("odd", labels={DRIVER: "5_50"})]
    assert _fits_on(tmp_path, affinity=_affinity({"matchExpressions": [_expr(DRIVER, "Gt", "540")]}), nodes=nodes) == set()
