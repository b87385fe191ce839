"""The node funnel (causes.md, `selector-mismatch` to `exhausted`) on mixed candidate sets: each stage keeps the
nodes that pass, the first stage that keeps none names the cause, and the evidence lists every removed node with its
stage and reason. Nodes are the lab's real Node objects, renamed and changed per case."""

from __future__ import annotations

import pytest

from conftest import (stage_of, GPU_TAINT, analyse_dir, assert_funnel_consistent, bound_pod, cordon, funnel_table, gpu_node, gpu_pod,
                      make_bundle, verdict)

POOL = {"pool": "gpu"}


def _mixed_nodes(*, with_full=True, with_alloczero=True, with_noplugin=True, with_tainted=True):
    """One node per funnel stage, all but the first labelled pool=gpu."""
    nodes = [gpu_node("cpu-only", base="gpu-noplugin")]  # no pool label: fails the selector
    if with_tainted:
        nodes.append(gpu_node("gpu-tainted-1", base="gpu-tainted", labels=POOL))
    if with_noplugin:
        nodes.append(gpu_node("gpu-noplugin-1", base="gpu-noplugin", labels=POOL))
    if with_alloczero:
        nodes.append(gpu_node("gpu-alloczero-1", base="gpu-alloczero", labels=POOL))
    if with_full:
        nodes.append(gpu_node("gpu-full-1", base="gpu-ok", labels=POOL))
    return nodes


def _filler():
    return bound_pod("filler", "gpu-full-1", gpus=4)


def test_mixed_candidates_each_stage_removes_a_different_node_exhausted(tmp_path):
    # causes.md: "a pod whose candidates are one tainted node, one node without the plugin and one full
    # node is exhausted (the only node that could ever serve it is full), and the evidence lists the other
    # two with their reasons."
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0", node_selector=POOL), _filler()], nodes=_mixed_nodes())
    v = verdict(root, "lab/trainer-0")
    assert v.word == "exhausted"
    assert_funnel_consistent(v)
    table = funnel_table(v)
    assert [(name, n_in, n_out, sorted(removed)) for name, n_in, n_out, removed in table] == [
        ("selector", 5, 4, ["cpu-only"]),
        ("advertised", 4, 3, ["gpu-noplugin-1"]),
        ("device-selectors", 3, 3, []),
        ("taints", 3, 2, ["gpu-tainted-1"]),
        ("allocatable", 2, 1, ["gpu-alloczero-1"]),
        ("fit", 1, 0, ["gpu-full-1"]),
    ]
    reasons = {node: text for _, _, _, removed in table for node, text in removed.items()}
    assert "nodeSelector" in reasons["cpu-only"]
    assert "nvidia.com/gpu=present:NoSchedule" in reasons["gpu-tainted-1"]
    assert "no nvidia.com/gpu in status.capacity" in reasons["gpu-noplugin-1"]
    assert "capacity 4, allocatable 0" in reasons["gpu-alloczero-1"]
    assert "nvidia.com/gpu: 0 free of 4 allocatable, 1 requested" in reasons["gpu-full-1"]
    # the same, as -o json shows it
    stages = v.to_dict()["funnel"]
    assert [s["stage"] for s in stages] == ["selector", "advertised", "device-selectors", "taints", "allocatable", "fit"]
    assert {n for s in stages for r in s["removed"] for n in r["nodes"]} == {n["metadata"]["name"] for n in _mixed_nodes()}


@pytest.mark.parametrize("drop, word, last_stage", [
    ({"with_full": False}, "allocatable-zero", "allocatable"),
    # causes.md: what a node has comes before its taints: a tainted GPU node beside a plugin-less one
    # is untolerated-taint (add the toleration), not no-gpu-node.
    ({"with_full": False, "with_alloczero": False}, "untolerated-taint", "taints"),
    ({"with_full": False, "with_alloczero": False, "with_tainted": False}, "no-gpu-node", "advertised"),
    ({"with_full": False, "with_alloczero": False, "with_noplugin": False}, "untolerated-taint", "taints"),
    ({"with_full": False, "with_alloczero": False, "with_noplugin": False, "with_tainted": False},
     "selector-mismatch", "selector"),
])
def test_the_first_stage_that_leaves_no_node_names_the_cause(tmp_path, drop, word, last_stage):
    # causes.md, `selector-mismatch` to `exhausted`: stages run in order; the first one left with no node decides.
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0", node_selector=POOL)], nodes=_mixed_nodes(**drop))
    v = verdict(root, "lab/trainer-0")
    assert v.word == word
    assert v.funnel[-1]["stage"] == last_stage
    assert v.funnel[-1]["nodes_out"] == 0
    assert_funnel_consistent(v)


def test_allocatable_zero_only_among_nodes_that_report_the_resource(tmp_path):
    # `allocatable-zero`: "the candidates that report it all have allocatable 0"; a plugin-less node was already
    # removed at the `no-gpu-node` stage, so it cannot turn allocatable-zero into no-gpu-node.
    nodes = [gpu_node("gpu-noplugin-1", base="gpu-noplugin"), gpu_node("gpu-alloczero-1", base="gpu-alloczero")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "allocatable-zero"
    assert [(n, s) for s, _, _, removed in funnel_table(v) for n in removed] == [
        ("gpu-noplugin-1", "advertised"), ("gpu-alloczero-1", "allocatable")]


def test_some_node_passing_every_stage_means_no_funnel_word(tmp_path):
    nodes = _mixed_nodes() + [gpu_node("gpu-free-1", labels=POOL)]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0", node_selector=POOL), _filler()], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "fits-now"
    assert v.evidence["fits_on"] == ["gpu-free-1"]
    assert_funnel_consistent(v)
    assert funnel_table(v)[-1][:3] == ("fit", 2, 1)


# -- cordon vs taint (cordoned, untolerated-taint) -------------------------------------------------

def test_only_cordoned_candidates_is_cordoned(tmp_path):
    # observed.md: a cordoned node has spec.unschedulable: true and the node.kubernetes.io/unschedulable
    # taint; causes.md: that taint is part of the cordon, not a separate taint.
    nodes = [cordon(gpu_node("gpu-a")), cordon(gpu_node("gpu-b"))]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "cordoned"
    assert all("cordoned" in r for r in funnel_table(v)[1][3].values())


def test_cordoned_before_the_node_controller_adds_its_taint(tmp_path):
    # `kubectl cordon` sets spec.unschedulable first; the taint follows. Either alone is the cordon.
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[gpu_node("gpu-a", unschedulable=True)])
    assert verdict(root, "lab/trainer-0").word == "cordoned"


def test_one_cordoned_one_tainted_is_untolerated_taint(tmp_path):
    # `cordoned` needs *every* candidate excluded only by the cordon; a real taint on any makes it `untolerated-taint`.
    nodes = [cordon(gpu_node("gpu-a")), gpu_node("gpu-b", taints=[dict(GPU_TAINT)])]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "untolerated-taint"
    removed = stage_of(v, "taints")[3]
    assert "cordoned" in removed["gpu-a"] and "nvidia.com/gpu=present:NoSchedule" in removed["gpu-b"]


def test_cordoned_and_tainted_node_is_untolerated_taint(tmp_path):
    node = cordon(gpu_node("gpu-a", taints=[dict(GPU_TAINT)]))
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    assert verdict(root, "lab/trainer-0").word == "untolerated-taint"


def test_toleration_of_unschedulable_noschedule_passes_the_cordon(tmp_path):
    # causes.md: the cordon is tolerated only by a toleration of node.kubernetes.io/unschedulable with
    # effect NoSchedule (kube-scheduler NodeUnschedulable plugin).
    tol = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    pod = gpu_pod("trainer-0")
    pod["spec"]["tolerations"].append(tol)
    root = make_bundle(tmp_path, pods=[pod], nodes=[cordon(gpu_node("gpu-a"))])
    assert verdict(root, "lab/trainer-0").word == "fits-now"


def test_unschedulable_toleration_with_noexecute_effect_does_not_pass_the_cordon(tmp_path):
    tol = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}
    pod = gpu_pod("trainer-0")
    pod["spec"]["tolerations"].append(tol)
    root = make_bundle(tmp_path, pods=[pod], nodes=[cordon(gpu_node("gpu-a"))])
    assert verdict(root, "lab/trainer-0").word == "cordoned"


def test_cordoned_node_that_passes_leaves_the_next_stage_to_decide(tmp_path):
    # A cordoned node among candidates does not make the pod `cordoned` when another node gets further.
    nodes = [cordon(gpu_node("gpu-a")), gpu_node("gpu-b")]
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0"), bound_pod("filler", "gpu-b", gpus=4)], nodes=nodes)
    v = verdict(root, "lab/trainer-0")
    assert v.word == "exhausted"
    assert "gpu-a" in stage_of(v, "taints")[3]


# -- taint effects --------------------------------------------------------------------------------

def test_prefer_no_schedule_never_blocks(tmp_path):
    node = gpu_node("gpu-a", taints=[{"effect": "PreferNoSchedule", "key": "nvidia.com/gpu", "value": "present"}])
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "fits-now"
    assert stage_of(v, "taints")[:3] == ("taints", 1, 1)


def test_no_execute_taint_blocks(tmp_path):
    node = gpu_node("gpu-a", taints=[{"effect": "NoExecute", "key": "nvidia.com/gpu", "value": "present"}])
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    assert verdict(root, "lab/trainer-0").word == "untolerated-taint"


def test_default_not_ready_tolerations_do_not_tolerate_a_gpu_taint(tmp_path):
    # observed.md: every pod carries node.kubernetes.io/not-ready and /unreachable NoExecute tolerations
    # from admission; they tolerate only those keys.
    node = gpu_node("gpu-a", taints=[{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready"},
                                      dict(GPU_TAINT)])
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "untolerated-taint"
    text = stage_of(v, "taints")[3]["gpu-a"]
    assert "nvidia.com/gpu" in text and "not-ready" not in text


# -- the node counts never increase ----------------------------------------------------------------

@pytest.mark.parametrize("selector", [POOL, {}, {"kubernetes.io/hostname": "gpu-full-1"}, {"gpu-type": "h100"}])
def test_node_counts_never_increase(tmp_path, selector):
    pods = [gpu_pod("trainer-0", node_selector=selector), _filler()]
    root = make_bundle(tmp_path, pods=pods, nodes=_mixed_nodes() + [cordon(gpu_node("gpu-cordoned-1", labels=POOL))])
    v = verdict(root, "lab/trainer-0")
    assert_funnel_consistent(v)
    assert v.funnel[0]["nodes_in"] == 6


# -- a device plugin that went away ---------------------------------------------------------------------

def test_plugin_removed_node_reports_capacity_zero_and_is_no_gpu_node(tmp_path):
    node = gpu_node("gpu-a", gpus="0")  # capacity 0, allocatable 0: the plugin registered once, then went away
    v = verdict(make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node]), "lab/trainer-0")
    assert v.word == "no-gpu-node"


def test_plugin_unhealthy_node_reports_allocatable_zero(tmp_path):
    # Devices marked unhealthy (plugin stopped, grace period running): capacity stays, allocatable drops to 0.
    node = gpu_node("gpu-a", gpus="4", alloc_gpus="0")
    v = verdict(make_bundle(tmp_path, pods=[gpu_pod("trainer-0")], nodes=[node]), "lab/trainer-0")
    assert v.word == "allocatable-zero"


# -- funnel caching: many identical replicas, different pods side by side ------------------------------------

def _comparable(v):
    d = v.to_dict()
    for key in ("name", "source", "scheduler_message", "scheduler"):
        d.pop(key, None)
    return d


def _replica(i, shape):
    name = f"trainer-685565f977-{i:05d}"
    if shape == "a":  # pinned by selector to the full node
        return gpu_pod(name, node_selector={"kubernetes.io/hostname": "gpu-full-1"})
    return gpu_pod(name, gpus=2, node_selector=POOL)  # fits on gpu-free-1 only


def test_hundred_identical_replicas_answer_like_one(tmp_path):
    # A Deployment's 100 pending replicas cost one funnel; each must carry the same word and evidence
    # as a lone replica would.
    nodes = _mixed_nodes() + [gpu_node("gpu-free-1", labels=POOL)]
    single = verdict(make_bundle(tmp_path, name="one", pods=[_replica(0, "a"), _filler()], nodes=nodes),
                     "lab/trainer-685565f977-00000")
    many = make_bundle(tmp_path, name="many", pods=[_replica(i, "a") for i in range(100)] + [_filler()], nodes=nodes)
    vs = analyse_dir(many)
    assert len(vs) == 100
    for v in vs.values():
        assert v.word == "exhausted"
        assert _comparable(v) == _comparable(single)


def test_interleaved_pod_shapes_do_not_share_evidence(tmp_path):
    nodes = _mixed_nodes() + [gpu_node("gpu-free-1", labels=POOL)]
    alone = {}
    for shape in "ab":
        root = make_bundle(tmp_path, name=f"alone-{shape}", pods=[_replica(0, shape), _filler()], nodes=nodes)
        alone[shape] = _comparable(verdict(root, "lab/trainer-685565f977-00000"))
    assert alone["a"]["word"] == "exhausted" and alone["b"]["word"] == "fits-now"
    pods = [_replica(i, "ab"[i % 2]) for i in range(40)] + [_filler()]
    vs = analyse_dir(make_bundle(tmp_path, name="mixed", pods=pods, nodes=nodes))
    for i in range(40):
        assert _comparable(vs[f"lab/trainer-685565f977-{i:05d}"]) == alone["ab"[i % 2]], i
