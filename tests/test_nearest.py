"""Nearest nodes (causes.md, Evidence) and the indexes that keep the funnel at pods + nodes.

The nearest nodes are the nodes a pod fails on for exactly one reason. Computed once per shape with cached
per-node checks; here checked against the lab's known answers and against a brute-force definition (every
check on every node) on a generated bundle. The selector index and the message rebuilder are checked against
their straightforward definitions too.
"""

from __future__ import annotations

from conftest import copy_lab, verdict
from helpers import LAB

from analyzer.classify import Classifier
from analyzer.evidence.filters import nearest_failures
from analyzer.evidence.nearest import failures
from analyzer.model.pod_filters import pod_filters
from analyzer.model.matching import HOSTNAME_LABEL, hostnames_required, only_name
from analyzer.evidence.scheduler_message import Rebuilder
from reference_funnel import rebuild_by_node
from analyzer.pipeline import Options, analyse
from analyzer.rules.checks import PodFacts, check_selector


def test_lab_taint_is_one_taint_away_from_gpu_tainted():
    v = verdict(LAB, "lab/taint")
    assert v.evidence["nearest"] == [{"node": "gpu-tainted", "reason": "only the taint nvidia.com/gpu=present:NoSchedule"}]


def test_lab_exhausted_is_nearest_to_gpu_ok_and_names_who_holds_it():
    v = verdict(LAB, "lab/exhausted")
    assert v.evidence["nearest"] == [{"node": "gpu-ok", "reason": "only 0 of 4 nvidia.com/gpu free, 1 asked: "
                                                                   "lab/filler-a holds 3, lab/filler-b holds 1"}]


def test_lab_no_gpu_node_and_allocatable_zero_are_one_repair_away():
    assert verdict(LAB, "lab/no-gpu-node").evidence["nearest"][0]["node"] == "gpu-noplugin"
    near = verdict(LAB, "lab/allocatable-zero").evidence["nearest"]
    assert near[0]["node"] == "gpu-alloczero" and "allocatable 0" in near[0]["reason"]


def test_a_pod_no_node_would_take_after_one_change_says_so():
    v = verdict(LAB, "lab/selector-mismatch")
    assert v.evidence["nearest"] == []
    assert v.evidence["nearest_none"].startswith("no node is one change away")


def test_a_node_failing_only_the_label_is_named_with_the_label(tmp_path):
    # The lab's taint pod, tolerating the taint, asked to a pool label gpu-tainted lacks: one label away.
    def edit(pods):
        for p in pods:
            if p["metadata"]["name"] == "taint":
                p["spec"]["tolerations"].append({"key": "nvidia.com/gpu", "operator": "Exists"})
                p["spec"]["nodeSelector"] = {"pool": "somewhere-else"}
        return pods
    v = verdict(copy_lab(tmp_path, edit={"pods": edit}), "lab/taint")
    assert v.word == "selector-mismatch"
    assert {"node": "gpu-tainted", "reason": "only the label pool=somewhere-else"} in v.evidence["nearest"]


def _facts(analysis):
    for t in analysis.cluster.pod_targets:
        if t.spec is not None and not t.node_name:
            yield t, PodFacts.of(t.spec)


def test_nearest_equals_every_check_on_every_node(generated):
    analysis = analyse(generated, Options())
    with analysis.bundle:
        c = analysis.cluster
        checked = 0
        for v in analysis.verdicts:
            if "nearest" not in v.evidence or v.target.kind != "Pod":
                continue
            t = v.target
            facts = PodFacts.of(t.spec, filters=pod_filters(namespace=t.namespace, name=t.name, labels=t.labels,
                                                            spec=t.spec, storage=c.storage, placement=c.placement))
            # A pod held to nodes by name or by the kubelet's hostname label: only those nodes may be one change away
            # (relabelling a node's hostname, or moving a DaemonSet's pod, is no change a person should make).
            alone = only_name(facts.terms)
            hosts = hostnames_required(facts.node_selector, facts.terms) if alone is None else None
            expected = []
            for node in c.nodes:
                if (alone is not None and node.name != alone) or (hosts and node.labels.get(HOSTNAME_LABEL) not in hosts):
                    continue
                fails = failures(facts, node, c) + ([check_selector(facts, node, c)] if check_selector(facts, node, c) else [])
                if facts.filters is not None and len(fails) < 2:
                    fails += nearest_failures(facts, node, c, 2)
                if len(fails) == 1:
                    expected.append(node.name)
            shown = [n["node"] for n in v.evidence["nearest"]]
            assert set(shown) <= set(expected), v.key
            assert len(shown) + v.evidence.get("nearest_more", 0) == len(expected), v.key
            checked += 1
        assert checked > 20


def test_indexed_selector_stage_and_rebuilder_equal_the_straightforward_scan(generated):
    analysis = analyse(generated, Options())
    with analysis.bundle:
        c = analysis.cluster
        clf = Classifier(c)
        rebuilder = Rebuilder(c)
        seen = 0
        for t, facts in _facts(analysis):
            funnel = clf._funnels.of(t.spec, "")
            brute = [n.name for n in c.nodes if check_selector(facts, n, c) is None]
            assert [n.name for n in funnel.stages[0].kept] == brute, t.key
            assert sum(1 for _ in funnel.stages[0].removed_nodes(c.nodes)) == len(c.nodes) - len(brute)
            assert rebuilder.rebuild(facts) == rebuild_by_node(c, facts), t.key
            seen += 1
        assert seen > 20


def test_the_columns_give_every_verdict_what_checking_each_node_on_its_own_gives(generated):
    """The stages and the evidence from the node columns (one row per kind of node, vector operations) against
    the checks node by node (tests/reference_funnel.py): every verdict's word, reason and evidence is the same."""
    from reference_funnel import verdicts_by_node

    analysis = analyse(generated, Options())
    with analysis.bundle:
        shared = [v.to_dict() for v in analysis.verdicts]
        by_node = [v.to_dict() for v in verdicts_by_node(analysis.cluster, analysis.extra)]
    assert by_node == shared
    assert sum(1 for v in shared if v.get("evidence", {}).get("nearest")) >= 10
    # the volume and inter-pod stages from their codes (rules/filter_columns.py, rules/volume_columns.py) too
    assert {"volume-node-conflict", "pod-affinity"} <= {v["word"] for v in shared}


def test_a_pinned_attempt_and_a_pod_of_the_same_shape_do_not_share_nearest_nodes(tmp_path):
    """spec.nodeName bypasses the scheduler: the kubelet ignores NoSchedule taints (lifecycle predicate), so
    for the pinned copy of lab/exhausted the tainted GPU node fails only on its name; the unpinned pod of the
    same tolerations and requests is cached first and must not lend it its failures."""
    import json

    pod = next(p for p in json.loads((LAB / "pods.json").read_text())["items"] if p["metadata"]["name"] == "exhausted")
    pinned = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"namespace": "lab", "name": "exhausted-pinned"},
              "spec": {**pod["spec"], "nodeName": "gpu-tainted"}}
    manifest = tmp_path / "pinned.json"
    manifest.write_text(json.dumps(pinned))
    analysis = analyse(LAB, Options(manifests=(manifest,)))
    with analysis.bundle:
        c = analysis.cluster
        by_key = {v.key: v for v in analysis.verdicts}
        for key in ("lab/exhausted", "lab/exhausted-pinned"):
            v = by_key[key]
            assert v.evidence["nearest"], key
            facts = PodFacts.of(v.target.spec, pin=v.target.spec.get("nodeName") or "")
            expected = [n.name for n in c.nodes
                        if len(failures(facts, n, c) + ([1] if check_selector(facts, n, c) else [])) == 1]
            assert [n["node"] for n in v.evidence["nearest"]] == [n for n in expected
                                                                  if n in {x["node"] for x in v.evidence["nearest"]}]
            assert len(v.evidence["nearest"]) + v.evidence.get("nearest_more", 0) == len(expected), key
