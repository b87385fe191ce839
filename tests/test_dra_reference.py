"""Pods with resource claims, and extended resources a DeviceClass serves, through the funnel's one form against
the node-by-node reference (tests/reference_funnel.py): every verdict's word, reason and evidence the same.

The funnel reads a claim's devices per node by the DRA rules on the nodes the columns keep, and what a DeviceClass
offers for an extended resource as a column; the reference asks every stage's rule of every node. The bundles are
the recordings' real objects (tests/dra_fixtures.py) with two more nodes: one tainted, one with no ResourceSlice,
so each stage removes nodes both ways. Then pods asking for a claim and an extended resource at once (served by
the DeviceClass or not) on nodes that advertise it, list it at allocatable 0 or capacity 0, or offer it under
another name, with and without enough nodes for the vector forms' large paths; and every pod shape pinned
(spec.nodeName) to each node: stages, nearest counts and the rebuilt message.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dra_fixtures import DraBundle, add_node, exhausted, no_slice, one_device_free, pending_pod, waiter_alone

from analyzer.classify import Classifier
from analyzer.evidence.nearest import Nearest, _vector_counts
from analyzer.evidence.scheduler_message import Rebuilder
from analyzer.model.views import Cluster
from analyzer.pipeline import Options, analyse
from analyzer.rules.checks import PodFacts
from analyzer.rules.columnar import Judged
from analyzer.rules.funnel import STAGES, Funnels, Stage
from analyzer.rules.reason import Reason
from reference_funnel import counts_by_node, judge_by_node, rebuild_by_node, verdicts_by_node


def _widened(b: DraBundle) -> DraBundle:
    add_node(b, "dt1", taints=[{"key": "dedicated", "value": "training", "effect": "NoSchedule"}])
    add_node(b, "dn2")
    return b


def _tainted_devices() -> DraBundle:
    b = waiter_alone()
    for d in b.devices:
        d["taints"] = [{"key": "gpu.example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}]
    return b


def _too_large() -> DraBundle:
    b = waiter_alone()
    b.request["count"] = 3
    return b


def _selector() -> DraBundle:
    b = waiter_alone()
    b.request["selectors"] = [{"cel": {"expression": "device.attributes['gpu.example.com'].model == 'nothing'"}}]
    return b


def _served(holders: bool) -> DraBundle:
    b = exhausted() if holders else waiter_alone()
    pending_pod(b, "ext", [], limits={"nvidia.com/gpu": "1"})
    b.device_class["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    return b


CASES = {
    "exhausted": exhausted, "no-slice": no_slice, "one-free": one_device_free, "free": waiter_alone,
    "device-taints": _tainted_devices, "too-large": _too_large, "selectors": _selector,
    "served-held": lambda: _served(True), "served-free": lambda: _served(False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_claims_judged_by_the_funnels_one_form_as_node_by_node(tmp_path, case):
    b = _widened(CASES[case]())
    analysis = analyse(b.write(tmp_path), Options())
    with analysis.bundle:
        fast = [v.to_dict() for v in analysis.verdicts]
        slow = [v.to_dict() for v in verdicts_by_node(analysis.cluster, analysis.extra)]
    assert fast == slow
    pending = [v for v in fast if v["word"] not in ("node-side", "running")]
    assert pending, "no pending pod to compare"
    # the added nodes are removed at a stage (the taint, no ResourceSlice), named in the funnel of a pending pod
    removed = {n for v in pending for st in v.get("funnel") or [] for g in st["removed"] for n in g["nodes"]}
    assert {"dt1", "dn2"} & removed, pending


# -- claims beside extended resources, pinned pods, and more nodes than the small paths take ----------------

GPU = "nvidia.com/gpu"
TEMPLATE = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def _gpu_nodes(b: DraBundle, extra: int = 0) -> DraBundle:
    """Beside the recorded node: a cordoned one, one with a NoExecute taint, one advertising the GPU, one listing
    it with capacity 1 and allocatable 0, one with capacity 0, one offering the vendor's devices under another
    name (resource-name-mismatch); `extra` more advertising 0, 1 or 2 (past columnar.SMALL)."""
    add_node(b, "dt1", taints=[{"key": "dedicated", "value": "training", "effect": "NoSchedule"}])
    add_node(b, "dn2")
    add_node(b, "dc3")["spec"]["unschedulable"] = True
    add_node(b, "dx4", taints=[{"key": "gone", "value": "x", "effect": "NoExecute"}])
    add_node(b, "dg5", allocatable={GPU: "2"})
    add_node(b, "dz6", allocatable={GPU: "1"})["status"]["allocatable"][GPU] = "0"
    add_node(b, "dk7", allocatable={GPU: "0"})
    add_node(b, "dm8", allocatable={"nvidia.com/mig-1g.5gb": "3"})
    for i in range(extra):
        add_node(b, f"dd{i}", allocatable={GPU: str(i % 3)})
    return b


def _with_pods(b: DraBundle) -> DraBundle:
    """Pods asking for a claim and the GPU at once, for two extended resources beside a claim, and pinned ones."""
    pending_pod(b, "both", [dict(c) for c in TEMPLATE], limits={GPU: "1"})
    pending_pod(b, "two", [dict(c) for c in TEMPLATE], limits={GPU: "1", "example.com/foo": "1"})
    pending_pod(b, "ext", [], limits={GPU: "2"})
    pending_pod(b, "pinned", [dict(c) for c in TEMPLATE], limits={GPU: "1"})["spec"]["nodeName"] = "dx1"
    pending_pod(b, "pinned-noexecute", [dict(c) for c in TEMPLATE])["spec"]["nodeName"] = "dx4"
    return b


def _serving(b: DraBundle) -> DraBundle:
    b.device_class["spec"]["extendedResourceName"] = GPU
    return b


MIXED = {
    "claims-and-gpu": lambda: waiter_alone(),
    "claims-and-served-gpu": lambda: _serving(waiter_alone()),
    "claims-and-served-gpu-held": lambda: _serving(exhausted()),
    "claims-and-served-gpu-one-free": lambda: _serving(one_device_free()),
    "device-taints-served": lambda: _serving(_tainted_devices()),
    "no-slice-gpu": no_slice,
}


def _mixed(case: str) -> DraBundle:
    name, _, many = case.partition("+")
    return _with_pods(_gpu_nodes(MIXED[name](), extra=12 if many else 0))


MIXED_CASES = sorted([*MIXED, *(f"{k}+many" for k in MIXED)])


@pytest.mark.parametrize("case", MIXED_CASES)
def test_claims_beside_extended_resources_judged_as_node_by_node(tmp_path, case):
    """Verdicts of pods with claims and extended resources (served by the DeviceClass or not) on nodes that
    advertise the resource, list it at allocatable 0 or capacity 0, or offer it under another name."""
    analysis = analyse(_mixed(case).write(tmp_path), Options())
    with analysis.bundle:
        fast = [v.to_dict() for v in analysis.verdicts]
        slow = [v.to_dict() for v in verdicts_by_node(analysis.cluster, analysis.extra)]
    assert fast == slow


def _shapes(cluster: Cluster) -> list[PodFacts]:
    """Every pod shape the classifier's funnels judge in this bundle."""
    seen: dict[PodFacts, None] = {}

    def judge(stage: Stage, pod: PodFacts, c: Cluster, at: np.ndarray) -> Judged:
        seen.setdefault(pod)
        return stage.vector(pod, c, at)
    clf = Classifier(cluster, funnels=Funnels(cluster, judge=judge))
    for t in cluster.pod_targets:
        clf.classify(t)
    return list(seen)


def _as_data(j: Judged) -> tuple[list[int], list[tuple[list[int], Reason]]]:
    return j.kept.tolist(), [(g.at.tolist(), g.reason) for g in j.removed]


@pytest.mark.parametrize("case", ["claims-and-served-gpu-held", "claims-and-served-gpu-one-free+many",
                                  "device-taints-served+many", "no-slice-gpu"])
def test_every_shape_pinned_anywhere_is_judged_as_node_by_node(tmp_path, case):
    """Each pod shape of the bundle as it is and pinned (spec.nodeName) to each node or to no node: every stage,
    the nearest nodes' counts and the rebuilt scheduler message from the columns as from each node's rules."""
    analysis = analyse(_mixed(case).write(tmp_path), Options())
    with analysis.bundle:
        c = analysis.cluster
        names = [n.name for n in c.nodes or []]
        shapes = _shapes(c)
        assert any(s.claims is not None and s.extended for s in shapes), shapes
        cpu = Nearest(c)._cpu_mask
        at = np.arange(len(names), dtype=np.int64)
        for shape in shapes:
            for pin in ["", *names, "nowhere"]:
                pod = dataclasses.replace(shape, pin=pin, nominated=() if pin else shape.nominated)
                for stage in STAGES:
                    if stage.applies is None or stage.applies(pod, c):
                        assert _as_data(stage.vector(pod, c, at)) == _as_data(judge_by_node(stage, pod, c, at)), \
                            (stage.name, pin)
                count, order = _vector_counts(pod, c, cpu)
                count_ref, order_ref = counts_by_node(pod, c, cpu)
                one = count_ref == 1
                assert (count.tolist(), order[one].tolist()) == (count_ref.tolist(), order_ref[one].tolist()), pin
                assert Rebuilder(c).rebuild(pod) == rebuild_by_node(c, pod), pin
