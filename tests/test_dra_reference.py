"""Pods with resource claims, and extended resources a DeviceClass serves, through the funnel's one form against
the node-by-node reference (tests/reference_funnel.py): every verdict's word, reason and evidence the same.

The funnel reads a claim's devices per node by the DRA rules on the nodes the columns keep, and what a DeviceClass
offers for an extended resource as a column; the reference asks every stage's rule of every node. The bundles are
the recordings' real objects (tests/dra_fixtures.py) with two more nodes: one tainted, one with no ResourceSlice,
so each stage removes nodes both ways.
"""

from __future__ import annotations

import pytest

from dra_fixtures import DraBundle, add_node, exhausted, no_slice, one_device_free, pending_pod, waiter_alone

from analyzer.pipeline import Options, analyse
from reference_funnel import verdicts_by_node


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
