"""A pod pinned to one node by name (required node affinity on metadata.name, as the DaemonSet controller pins its
pods, or spec.nodeName), read as a person reads `why --explain`: the selector stage's text, the nearest nodes, the
exhausted action and the fit table. Kubernetes' rules (k8s.io/component-helpers/scheduling/corev1/nodeaffinity):
nodeSelectorTerms are ORed, the requirements of a term ANDed (matchExpressions with matchFields), matchFields
supports metadata.name only, In and NotIn with one value each."""

from __future__ import annotations

import pytest

from conftest import GPU_TAINT, bound_pod, gpu_node, gpu_pod, lab_manifest, make_bundle, quota, write_manifest
from helpers import run_cli
from test_admission import NS, _bundle, _word
from test_columns import cluster_of, facts
from reference_funnel import funnel_by_node

from analyzer.evidence.nearest import Nearest
from analyzer.model.matching import hostnames_required, names_required
from analyzer.model.nodes import NodeView
from analyzer.rules.funnel import run_funnel
from analyzer.rules.funnel_text import stages_as_data
from reference_funnel import nearest_by_node


def _affinity(*terms: dict) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def _named(*names: str, op: str = "In") -> dict:
    """One term: a matchFields metadata.name requirement per name, ANDed."""
    return {"matchFields": [{"key": "metadata.name", "operator": op, "values": [n]} for n in names]}


def _daemonset(pod: dict) -> dict:
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "node-agent",
                                           "uid": "5b1c0c1e-0000-4000-8000-00000000d5e7", "controller": True}]
    return pod


def _explain(root, key: str = "lab/agent") -> str:
    done = run_cli("why", root, key, "--explain")
    assert done.returncode == 0, done.stderr
    return done.stdout


def _section(out: str, title: str) -> list[str]:
    return out.split(title)[1].split("\n\n")[0].splitlines()[1:]


# -- names_required: the names every term names ---------------------------------------------------------------

def test_names_required_follows_terms_ored_and_requirements_anded():
    label = {"key": "pool", "operator": "In", "values": ["a"]}
    assert names_required([_named("n1"), _named("n2")]) == {"n1", "n2"}  # terms ORed: either name
    assert names_required([{**_named("n1"), "matchExpressions": [label]}]) == {"n1"}  # the labels ANDed: still n1 only
    assert names_required([_named("n1"), {"matchExpressions": [label]}]) is None  # a term on labels: any name
    assert names_required([_named("n1", op="NotIn")]) is None  # NotIn names the nodes it leaves out, not the ones in
    assert names_required([_named("n1", "n2")]) == frozenset()  # In n1 AND In n2: no name is both
    assert names_required(None) is None and names_required([]) is None


def test_a_term_whose_name_requirements_exclude_each_other_is_said_so_not_a_blank_name(tmp_path):
    # matchFields [metadata.name In [gpu-a], metadata.name In [gpu-b]] passes API validation (one value each) and,
    # ANDed, matches no node: the text must not read "names only  (matchFields metadata.name)".
    root = make_bundle(tmp_path, pods=[gpu_pod("agent", affinity=_affinity(_named("gpu-a", "gpu-b")))],
                       nodes=[gpu_node("gpu-a"), gpu_node("gpu-b"), gpu_node("gpu-c")])
    selector = _section(_explain(root), "Node funnel")
    assert selector[1].strip() == ("removed gpu-a, gpu-b, gpu-c: required node affinity names no node (its matchFields "
                                   "metadata.name requirements exclude every name)")


# -- the vector select against the checks node by node, where the random test seldom goes ---------------------

def _node(i: int, **labels: str) -> NodeView:
    amounts = {"cpu": 32000, "memory": 64 * 2**30, "pods": 110, "nvidia.com/gpu": 4}
    return NodeView(name=f"n{i}", index=i, labels={"kubernetes.io/hostname": f"n{i}", **labels}, unschedulable=False,
                    taints=(), capacity=dict(amounts), allocatable=dict(amounts))


@pytest.mark.parametrize("terms, pin, node_selector", [
    ([_named("n1"), _named("n3")], "", None),  # several terms each naming one node
    ([_named("n1")], "n2", None),  # spec.nodeName on n2, the affinity names n1
    ([_named("n2")], "n2", {"pool": "x"}),  # the pinned, named node fails on its labels
    ([{**_named("n2"), "matchExpressions": [{"key": "pool", "operator": "In", "values": ["x"]}]}], "", None),
    ([_named("n1", "n2")], "", None),  # names that exclude each other
    ([_named("n9")], "", None),  # a name not in the bundle
    ([_named("n1"), _named("n1")], "", {"pool": "x"}),  # the same name twice, the node without the label
])
def test_select_removes_for_the_same_reasons_as_the_checks_node_by_node(terms, pin, node_selector):
    ns = [_node(0), _node(1, pool="x"), _node(2), _node(3, pool="x"), _node(4)]
    c = cluster_of(ns, [{} for _ in ns])
    spec = {"affinity": _affinity(*terms), "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    pod = facts(c, spec, pin)
    fast, slow = run_funnel(pod, c.nodes, c), funnel_by_node(pod, c)
    assert stages_as_data(fast, c.nodes, None) == stages_as_data(slow, c.nodes, None)
    assert Nearest(c).of(pod) == nearest_by_node(c).of(pod)


# -- the nearest nodes of a pod whose affinity names one node ---------------------------------------------------

def test_a_daemonset_pods_own_node_one_change_away_is_still_named_among_the_nearest(tmp_path):
    # Its node carries an untolerated taint: that taint is the one change; other nodes are no lead (its affinity
    # names gpu-a alone), but gpu-a itself is.
    root = make_bundle(tmp_path, pods=[_daemonset(gpu_pod("agent", affinity=_affinity(_named("gpu-a"))))],
                       nodes=[gpu_node("gpu-a", taints=[GPU_TAINT]), gpu_node("gpu-b")])
    nearest = _section(_explain(root), "Nearest nodes")
    assert [line.strip() for line in nearest] == ["gpu-a: only the taint nvidia.com/gpu=present:NoSchedule"]


def test_a_daemonset_pod_naming_a_node_not_in_the_bundle_is_told_that_node_is_absent(tmp_path):
    # The node was deleted (or the bundle misses it): "it may run only on gpu-z" alone would send a person to look
    # at a node that is not there.
    root = make_bundle(tmp_path, pods=[_daemonset(gpu_pod("agent", affinity=_affinity(_named("gpu-z"))))],
                       nodes=[gpu_node("gpu-a"), gpu_node("gpu-b")])
    nearest = _section(_explain(root), "Nearest nodes")
    assert [line.strip() for line in nearest] == ["it may run only on gpu-z (its required node affinity names that "
                                                  "node alone), and no node named gpu-z is in the bundle"]


# -- the exhausted action of a pod pinned by name ---------------------------------------------------------------

def test_a_pod_not_of_a_daemonset_pinned_by_affinity_is_offered_to_change_that_affinity(tmp_path):
    # A person wrote this affinity (no DaemonSet controller rewrites it): gpu-b has free GPUs, so "another node
    # cannot help this pod" would be false; widening the affinity is a change they can make.
    holders = [bound_pod(f"holder-{i}", "gpu-a") for i in range(4)]
    root = make_bundle(tmp_path, pods=[*holders, gpu_pod("agent", affinity=_affinity(_named("gpu-a")))],
                       nodes=[gpu_node("gpu-a", gpus="4"), gpu_node("gpu-b", gpus="4")])
    action = _explain(root).splitlines()[1].removeprefix("  next action: ")
    assert action == ("free 1 nvidia.com/gpu on gpu-a, the only node its required node affinity (matchFields "
                      "metadata.name) allows (the pods holding it are listed there), or change that affinity to "
                      "allow another node")


def test_a_pod_whose_affinity_names_two_full_nodes_is_told_those_nodes_not_to_add_capacity(tmp_path):
    # Terms ORed, each naming one node: only gpu-a or gpu-b will ever do; a new node is neither, and gpu-c's
    # free GPUs are not its to take.
    holders = [bound_pod(f"holder-{n}-{i}", n) for n in ("gpu-a", "gpu-b") for i in range(4)]
    root = make_bundle(tmp_path, pods=[*holders, gpu_pod("agent", affinity=_affinity(_named("gpu-a"), _named("gpu-b")))],
                       nodes=[gpu_node(n, gpus="4") for n in ("gpu-a", "gpu-b", "gpu-c")])
    action = " ".join(_explain(root).split("next action:")[1].split("reason:")[0].split())
    assert action == ("wait for 1 nvidia.com/gpu to be free on one of gpu-a, gpu-b, the only nodes its required node "
                      "affinity (matchFields metadata.name) allows, or change that affinity")


def test_a_pod_whose_affinity_names_two_nodes_both_too_small_is_told_to_shrink_or_widen_not_to_add_a_node(tmp_path):
    root = make_bundle(tmp_path, pods=[gpu_pod("agent", memory="4Ti", affinity=_affinity(_named("gpu-a"), _named("gpu-b")))],
                       nodes=[gpu_node("gpu-a"), gpu_node("gpu-b"), gpu_node("gpu-c", memory="8Ti")])
    action = " ".join(_explain(root).split("next action:")[1].split("reason:")[0].split())
    assert action == ("no node of gpu-a, gpu-b, the only nodes its required node affinity (matchFields metadata.name) "
                      "allows, has 4Ti memory even empty: the largest has 128Gi; shrink the request, or change that "
                      "affinity to allow a larger node")


def test_an_attempt_pinned_by_node_name_too_large_for_its_node_may_drop_spec_node_name(tmp_path):
    # spec.nodeName: the kubelet admits it or not, without the scheduler; gpu-b is large enough, so dropping
    # spec.nodeName is a way out, as it is for the attempt that is only short now.
    doc = lab_manifest(41)
    doc["spec"]["nodeName"] = "gpu-a"
    doc["spec"]["containers"][0]["resources"]["requests"]["memory"] = "4Ti"
    root = _bundle(tmp_path, [quota("gpu-quota", NS, {"requests.nvidia.com/gpu": "4"})],
                   nodes=[gpu_node("gpu-a"), gpu_node("gpu-b", memory="8Ti")])
    v = _word(root, write_manifest(tmp_path / "m", doc))
    assert v.word == "exhausted"
    assert v.next_action == ("shrink the memory request to fit gpu-a: spec.nodeName allows only that node, which has "
                             "128Gi allocatable even empty, and the pod asks 4Ti; or remove spec.nodeName so the "
                             "scheduler chooses a node")


# -- the fit table at a terminal's width ------------------------------------------------------------------------

MIG = "nvidia.com/mig-3g.40gb"


def _mig_bundle(tmp_path):
    holders = [bound_pod(f"holder-{i}", "gpu-a", resource=MIG, memory="170000000Ki") for i in range(7)]
    return make_bundle(tmp_path, pods=[*holders, _daemonset(gpu_pod("agent", resource=MIG, memory="1381109650Ki",
                                                                    affinity=_affinity(_named("gpu-a"))))],
                       nodes=[gpu_node("gpu-a", memory="1381109650Ki", resource=MIG, gpus="7"), gpu_node("gpu-b")])


@pytest.mark.parametrize("columns", ["80", "60"])
def test_the_fit_table_keeps_each_resources_amounts_whole_at_the_terminals_width(tmp_path, monkeypatch, columns):
    # nvidia.com/mig-3g.40gb beside memory in Ki is 86 characters as one row: folded at 80, its `requested` and
    # SHORT went under its name, the header's `requested` under `allocatable`.
    monkeypatch.setenv("COLUMNS", columns)
    out = _explain(_mig_bundle(tmp_path))
    table = _section(out, "Candidates at the fit stage")
    table = table[table.index("  gpu-a") + 1:]
    table = table[:next(i for i, line in enumerate(table) if line.startswith("    used by"))]
    assert all(len(line) <= int(columns) for line in table)
    text = " ".join(table)
    for r, row in ((MIG, "7 7 0 1 SHORT"), ("memory", "1381109650Ki 1190000000Ki 191109650Ki 1381109650Ki SHORT")):
        if columns == "80":  # the name on its line, its amounts whole on the next
            at = [line.strip() for line in table].index(r)
            assert table[at + 1].split() == row.split()
        else:  # one labelled line per resource, folded at its spaces
            a, u, f, q, *short = row.split()
            assert f"{r}: allocatable {a}, used {u}, free {f}, requested {q}" in " ".join(text.split())


def test_a_daemonset_pod_too_large_for_its_own_node_is_told_that_node_is_not_one_change_away(tmp_path):
    # The stuck DaemonSet rollout: its node is too small even empty (no pod to move), the other nodes are not
    # its to run on (its affinity names gpu-a alone).
    root = make_bundle(tmp_path, pods=[_daemonset(gpu_pod("agent", memory="4Ti", affinity=_affinity(_named("gpu-a"))))],
                       nodes=[gpu_node("gpu-a"), gpu_node("gpu-b", memory="8Ti")])
    nearest = _section(_explain(root), "Nearest nodes")
    assert " ".join(line.strip() for line in nearest) == (
        "it may run only on gpu-a (its required node affinity names that node alone), and gpu-a is not one change "
        "away: two or more checks fail there, or it is a CPU node, or too small for the request even empty")


# -- held to a host by the kubelet's kubernetes.io/hostname label ---------------------------------------------

def _on_host(host: str, **spec) -> dict:
    return gpu_pod("burn", node_selector={"kubernetes.io/hostname": host}, **spec)


def test_hostnames_required_reads_the_node_selector_or_every_affinity_term():
    expr = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["h1", "h2"]}]}
    other = {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}
    assert hostnames_required((("kubernetes.io/hostname", "h0"),), None) == {"h0"}
    assert hostnames_required((), [expr]) == {"h1", "h2"}
    assert hostnames_required((), [expr, other]) is None  # a term on other labels: any host
    assert hostnames_required((("pool", "a"),), None) is None


def test_a_pod_held_to_a_broken_host_is_not_told_that_other_nodes_are_one_label_away(tmp_path):
    # A burn-in pod held to gpu-a by hostname: gpu-a reports allocatable 0. "gpu-b: only the label
    # kubernetes.io/hostname=gpu-a" would ask a person to relabel another node with gpu-a's identity.
    root = make_bundle(tmp_path, pods=[_on_host("gpu-a")],
                       nodes=[gpu_node("gpu-a", alloc_gpus="0"), gpu_node("gpu-b"), gpu_node("gpu-c")])
    nearest = " ".join(" ".join(_section(_explain(root, "lab/burn"), "Nearest nodes")).split())
    assert nearest == "gpu-a: only allocatable 0 (nvidia.com/gpu: capacity 4, allocatable 0; repair the node)"


def test_a_pod_held_to_a_host_not_in_the_bundle_says_so_and_is_not_told_to_label_another_node(tmp_path):
    root = make_bundle(tmp_path, pods=[_on_host("gpu-gone")], nodes=[gpu_node("gpu-a"), gpu_node("gpu-b")])
    out = _explain(root, "lab/burn")
    nearest = " ".join(" ".join(_section(out, "Nearest nodes")).split())
    assert nearest == ("it may run only on the node labelled kubernetes.io/hostname=gpu-gone (its nodeSelector names "
                       "the host), and no node with that label is in the bundle")
    action = " ".join(out.split("next action:")[1].split("reason:")[0].split())
    assert action == ("no node in the bundle is the host gpu-gone (label kubernetes.io/hostname) its nodeSelector/affinity "
                      "names: if the host is gone or renamed, point the pod at a node that exists (or drop that selector); "
                      "if not, collect the bundle again")
