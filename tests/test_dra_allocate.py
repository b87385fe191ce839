"""The DRA engine (analyzer/dra): views of the four kinds, and which devices a pod's claims can use per node.

Every object starts as a deep copy of the real v1.36.2 objects in
tests/data/recordings/dra-no-slice-v1.36 and dra-exhausted-v1.36 and changes only
what the case needs. The steps are those of ../shared/spec/dra.md; the search
mirrors k8s.io/dynamic-resource-allocation/structured/internal/stable/
allocator_stable.go (allocateOne, matchAttributeConstraint, lookupAttribute).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

import dra_fixtures
from analyzer.model.dra.allocate import DraWorld
from analyzer.model.dra.cel import Selectors
from analyzer.model.dra.outcomes import NodeOutcome, Resolution
from analyzer.model.dra.reading import build_views, pod_claims
from dra_fixtures import CLASS, NO_SLICE, DraBundle, named, not_generated as _not_generated, to_v1beta1


@dataclass(kw_only=True)
class Node:
    name: str
    labels: dict[str, str]
    allocatable: dict[str, Any] = field(default_factory=dict)


def node_of(raw: dict, name: str | None = None) -> Node:
    """The node record the engine reads, from a recorded node (renamed when asked)."""
    node = Node(name=raw["metadata"]["name"], labels=dict(raw["metadata"]["labels"]),
                allocatable=dict(raw["status"]["allocatable"]))
    if name:
        node.name = name
        node.labels["kubernetes.io/hostname"] = name
    return node


def real_node(name: str | None = None) -> Node:
    """dx1 of the exhausted recording (renamed when asked)."""
    return node_of(dra_fixtures.exhausted().items("nodes")[0], name)


class CountingSelectors(Selectors):
    """The real CEL evaluator, counting how often the engine asks it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def evaluate(self, expression, device):  # type: ignore[no-untyped-def]
        self.calls += 1
        return super().evaluate(expression, device)


def _kind(name: str) -> property:
    """One DRA kind of the bundle as an editable list (assigning replaces the bundle's list)."""
    return property(lambda w: w.bundle.items(name), lambda w, v: w.bundle.files.__setitem__(name, v))


@dataclass(kw_only=True)
class World:
    """A recorded bundle (dra_fixtures.DraBundle, the one fixture world) and the DRA engine built from it."""

    bundle: DraBundle
    nodes: list[Node]
    engine: CountingSelectors = field(default_factory=CountingSelectors)

    claims = _kind("resourceclaims")
    templates = _kind("resourceclaimtemplates")
    classes = _kind("deviceclasses")
    slices = _kind("resourceslices")
    pods = _kind("pods")

    def build(self) -> DraWorld:
        views = build_views(resourceclaims=self.claims, resourceclaimtemplates=self.templates,
                            deviceclasses=self.classes, resourceslices=self.slices)
        return DraWorld(views, self.nodes, selectors=self.engine)

    def pod(self, name: str) -> dict:
        return self.bundle.pod(name)

    def resolve(self, pod: str | dict) -> Resolution:
        raw = self.pod(pod) if isinstance(pod, str) else pod
        return self.build().resolve(pod_claims(raw))

    def outcome(self, pod: str | dict, node: Node | None = None) -> NodeOutcome:
        raw = self.pod(pod) if isinstance(pod, str) else pod
        world = self.build()
        return world.evaluate(world.resolve(pod_claims(raw)), node or self.nodes[0])

    @property
    def template(self) -> dict:
        return self.templates[0]

    @property
    def request(self) -> dict:
        """The template's one request (`exactly`), to change per case."""
        return self.bundle.request

    @property
    def devices(self) -> list[dict]:
        return self.bundle.devices


def world_of(bundle: DraBundle) -> World:
    return World(bundle=bundle, nodes=[node_of(bundle.items("nodes")[0])])


def exhausted() -> World:
    return world_of(dra_fixtures.exhausted())


def free_world() -> World:
    """The exhausted bundle before the holders ran: the waiter alone, both devices of dx1 free."""
    return world_of(dra_fixtures.without_holders())


def not_generated(w: World, pod: str = "waiter") -> dict:
    """The pod as it is before the claim controller made its claim: judged on the template."""
    return _not_generated(w.bundle, pod)


def counts(outcome: NodeOutcome, i: int = 0) -> dict[str, int]:
    return outcome.requests[i].left


# ---- the two real bundles ------------------------------------------------------------------------

def test_no_slice_on_the_node_is_class_step_zero_no_gpu_node():
    w = world_of(dra_fixtures.load(NO_SLICE))
    res = w.resolve("no-slice")
    assert [rc.owner for rc in res.claims] == ["ResourceClaim lab/no-slice-gpu-qm44j"]
    out = w.outcome("no-slice")
    assert out.stage == "class"
    assert counts(out) == {"class": 0, "selectors": 0, "taints": 0, "free": 0}


def test_both_devices_allocated_is_exhausted_with_holders_named():
    out = exhausted().outcome("waiter")
    assert (out.stage, out.too_large) == ("free", False)
    assert counts(out) == {"class": 2, "selectors": 2, "taints": 2, "free": 0}
    holders = {(h.device, h.claim, h.pods) for h in out.requests[0].holders}
    assert holders == {("gpu.example.com/dx1/gpu-0", "lab/holder-1-gpu-92p2f", ("lab/holder-1",)),
                       ("gpu.example.com/dx1/gpu-1", "lab/holder-2-gpu-wj7dv", ("lab/holder-2",))}


def test_holders_own_claims_are_allocated_and_pin_them_to_dx1():
    w = exhausted()
    assert w.outcome("holder-1").stage == "ok"
    assert w.outcome("holder-1", real_node(name="dx2")).stage == "pinned"


def test_free_device_is_chosen():
    out = free_world().outcome("waiter")
    assert out.ok and out.requests[0].chosen == ("gpu.example.com/dx1/gpu-0",)


# ---- class and selectors ---------------------------------------------------------------------------

def test_slice_of_another_driver_offers_nothing_of_the_class():
    w = free_world()
    w.slices[0]["spec"]["driver"] = "other.example.com"
    out = w.outcome("waiter")
    assert out.stage == "class" and counts(out)["class"] == 0


@pytest.mark.parametrize("expression, stage", [
    ('device.attributes["gpu.example.com"].model == "a100"', "selectors"),
    ('device.attributes["gpu.example.com"].model == "h100"', "ok"),
])
def test_request_selector_by_attribute(expression, stage):
    w = free_world()
    raw = not_generated(w)
    w.request["selectors"] = [{"cel": {"expression": expression}}]
    out = w.outcome(raw)
    assert out.stage == stage
    assert counts(out)["class"] == 2 and counts(out)["selectors"] == (0 if stage == "selectors" else 2)


@pytest.mark.parametrize("memory, stage", [("40Gi", "selectors"), ("80Gi", "ok")])
def test_request_selector_by_capacity_compare_to_quantity(memory, stage):
    w = free_world()
    raw = not_generated(w)
    w.request["selectors"] = [{"cel": {"expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'}}]
    for d in w.devices:
        d["capacity"]["memory"]["value"] = memory
    assert w.outcome(raw).stage == stage


def test_selector_naming_an_attribute_the_devices_lack_is_no_match_with_the_error_shown():
    # dra.md: the real scheduler fails with `CEL runtime error: no such key: productName`; we count it as no match.
    w = free_world()
    raw = not_generated(w)
    w.request["selectors"] = [{"cel": {"expression": 'device.attributes["gpu.example.com"].productName == "H100"'}}]
    out = w.outcome(raw)
    assert out.stage == "selectors"
    errors = out.requests[0].cel_errors
    assert [e.device for e in errors] == ["gpu.example.com/dx1/gpu-0", "gpu.example.com/dx1/gpu-1"]
    assert all("no such key: productName" in e.error for e in errors)


def test_device_class_selectors_are_step_one():
    w = free_world()
    w.classes[0]["spec"]["selectors"].append({"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}})
    out = w.outcome("waiter")
    assert out.stage == "class"


def test_unevaluable_expression_is_named():
    w = free_world()
    raw = not_generated(w)
    # Optional field syntax: valid Kubernetes CEL that the library cannot parse (analyzer/model/dra/cel.py).
    expression = 'device.attributes["gpu.example.com"].?model.orValue("") == "h100"'
    w.request["selectors"] = [{"cel": {"expression": expression}}]
    out = w.outcome(raw)
    assert (out.stage, out.unevaluable) == ("unevaluable", expression)
    assert out.unevaluable_why


# ---- counts ------------------------------------------------------------------------------------

def test_count_larger_than_the_node_has_is_too_large():
    w = free_world()
    raw = not_generated(w)
    w.request["count"] = 3
    out = w.outcome(raw)
    assert (out.stage, out.too_large, out.requests[0].needed) == ("enough", True, 3)


def test_count_two_with_one_device_held_is_exhausted_not_too_large():
    w = exhausted()
    w.claims = [c for c in w.claims if c["metadata"]["name"] != "holder-2-gpu-wj7dv"]
    raw = not_generated(w)
    w.request["count"] = 2
    out = w.outcome(raw)
    assert (out.stage, out.too_large) == ("enough", False)
    assert counts(out)["free"] == 1


# ---- device taints -----------------------------------------------------------------------------

@pytest.mark.parametrize("toleration, stage", [
    (None, "taints"),
    ({"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoSchedule"}, "ok"),
    ({"key": "gpu.example.com/unhealthy", "operator": "Equal", "value": "ecc", "effect": "NoSchedule"}, "ok"),
    ({"key": "gpu.example.com/unhealthy", "operator": "Equal", "value": "other"}, "taints"),
    ({"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute"}, "taints"),
])
def test_device_taints_against_request_tolerations(toleration, stage):
    # Device taints match like node taints (core/v1 Toleration.ToleratesTaint): key, Exists/Equal, value, effect.
    w = free_world()
    raw = not_generated(w)
    for d in w.devices:
        d["taints"] = [{"key": "gpu.example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}]
    if toleration:
        w.request["tolerations"] = [toleration]
    out = w.outcome(raw)
    assert out.stage == stage
    assert counts(out)["taints"] == (0 if stage == "taints" else 2)


def test_prefer_no_schedule_like_effects_do_not_block():
    w = free_world()
    w.devices[0]["taints"] = [{"key": "k", "effect": "None"}]
    assert w.outcome("waiter").ok


# ---- allocation modes, firstAvailable, constraints ------------------------------------------------

def test_all_mode_takes_every_device_and_needs_them_all_free():
    w = free_world()
    raw = not_generated(w)
    w.request.pop("count")
    w.request["allocationMode"] = "All"
    out = w.outcome(raw)
    assert out.ok and out.requests[0].chosen == ("gpu.example.com/dx1/gpu-0", "gpu.example.com/dx1/gpu-1")
    w.claims += [c for c in exhausted().claims if c["metadata"]["name"] == "holder-1-gpu-92p2f"]
    out = w.outcome(raw)
    assert (out.stage, out.too_large, out.requests[0].needed, counts(out)["free"]) == ("enough", False, "All", 1)


def test_first_available_takes_the_first_subrequest_that_can_be_met():
    w = free_world()
    raw = not_generated(w)
    devices = w.template["spec"]["spec"]["devices"]
    devices["requests"] = [{"name": "gpu", "firstAvailable": [
        {"name": "four", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 4},
        {"name": "one", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1},
    ]}]
    out = w.outcome(raw)
    assert out.ok
    assert [(r.request, r.chosen) for r in out.requests] == [("gpu/four", ()), ("gpu/one", ("gpu.example.com/dx1/gpu-0",))]


def _four_devices(w: World, models: list[str]) -> None:
    base = w.devices[0]
    w.slices[0]["spec"]["devices"] = []
    for i, model in enumerate(models):
        d = copy.deepcopy(base)
        d["name"] = f"gpu-{i}"
        d["attributes"]["index"]["int"] = i
        d["attributes"]["model"]["string"] = model
        w.slices[0]["spec"]["devices"].append(d)


@pytest.mark.parametrize("models, stage, chosen", [
    (["h100", "a100", "l4", "a100"], "ok", ("gpu-1", "gpu-3")),
    (["h100", "a100", "l4", "t4"], "constraints", ()),
])
def test_match_attribute_needs_the_chosen_devices_to_share_the_value(models, stage, chosen):
    w = free_world()
    raw = not_generated(w)
    _four_devices(w, models)
    w.request["count"] = 2
    w.template["spec"]["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/model"}]
    out = w.outcome(raw)
    assert out.stage == stage
    assert out.requests[0].chosen == tuple(f"gpu.example.com/dx1/{c}" for c in chosen)


def test_two_claims_that_each_fit_alone_do_not_fit_together():
    w = exhausted()
    w.claims = [c for c in w.claims if c["metadata"]["name"] != "holder-2-gpu-wj7dv"]  # one device free
    raw = not_generated(w)
    raw["spec"]["resourceClaims"].append({"name": "gpu2", "resourceClaimTemplateName": "one-gpu"})
    alone = w.outcome(not_generated(free_world()))
    assert alone.ok
    single = copy.deepcopy(raw)
    single["spec"]["resourceClaims"] = single["spec"]["resourceClaims"][:1]
    assert w.outcome(single).ok
    out = w.outcome(raw)
    assert (out.stage, out.too_large) == ("enough", False)


def test_two_claims_larger_than_the_empty_node_is_too_large():
    w = free_world()
    raw = not_generated(w)
    w.request["count"] = 2
    raw["spec"]["resourceClaims"].append({"name": "gpu2", "resourceClaimTemplateName": "one-gpu"})
    out = w.outcome(raw)
    assert (out.stage, out.too_large) == ("enough", True)


# ---- allocated and shared claims -----------------------------------------------------------------

def test_shared_claim_already_allocated_pins_the_pod_to_its_node():
    w = exhausted()
    raw = copy.deepcopy(w.pod("waiter"))
    raw["metadata"]["name"] = "sharer"
    raw["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "holder-1-gpu-92p2f"}]
    raw["status"] = {"phase": "Pending"}
    dx2 = real_node(name="dx2")
    w.nodes.append(dx2)
    world = w.build()
    res = world.resolve(pod_claims(raw))
    assert world.evaluate(res, w.nodes[0]).ok  # needs no new device though both are allocated
    pinned = world.evaluate(res, dx2)
    assert (pinned.stage, pinned.pinned_by) == ("pinned", "lab/holder-1-gpu-92p2f")


def test_pod_pinned_to_a_node_without_slices():
    w = exhausted()
    claim = named(w.claims, "holder-1-gpu-92p2f")
    claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["dx2"]
    assert w.outcome("holder-1").stage == "pinned"


# ---- pools -----------------------------------------------------------------------------------------

def test_only_the_newest_pool_generation_counts():
    w = free_world()
    old = copy.deepcopy(w.slices[0])
    old["metadata"]["name"] = "dx1-old"
    new = w.slices[0]
    new["spec"]["pool"]["generation"] = 2
    new["spec"]["devices"] = new["spec"]["devices"][:1]
    w.slices.append(old)
    world = w.build()
    assert world.views.dropped_slices == ("dx1-old (pool gpu.example.com/dx1 generation 1 < 2)",)
    out = w.outcome("waiter")
    assert counts(out)["class"] == 1


def test_incomplete_pool_is_unmodelled():
    w = exhausted()
    w.slices[0]["spec"]["pool"]["resourceSliceCount"] = 2
    out = w.outcome("waiter")
    assert out.stage == "unmodelled" and "incomplete pool gpu.example.com/dx1: 1 of 2" in out.unmodelled


def test_per_device_node_selection_is_unmodelled():
    w = exhausted()
    spec = w.slices[0]["spec"]
    del spec["nodeName"]
    spec["perDeviceNodeSelection"] = True
    for d in spec["devices"]:
        d["nodeName"] = "dx1"
    out = w.outcome("waiter")
    assert out.stage == "unmodelled" and "perDeviceNodeSelection" in out.unmodelled


@pytest.mark.parametrize("edit, reason", [
    (lambda w: w.slices[0]["spec"].__setitem__("sharedCounters", [{"name": "mem", "counters": {"m": {"value": "80Gi"}}}]),
     "sharedCounters"),
    (lambda w: w.request.__setitem__("capacity", {"requests": {"memory": "10Gi"}}), "consumable capacity"),
])
def test_partitionable_devices_and_consumable_capacity_are_unmodelled(edit, reason):
    w = exhausted()
    raw = not_generated(w)
    edit(w)
    out = w.outcome(raw)
    assert out.stage == "unmodelled" and reason in out.unmodelled


# ---- v1beta1 ---------------------------------------------------------------------------------------

def test_v1beta1_claims_and_slices_read_the_same():
    w = exhausted()
    to_v1beta1(w.bundle)
    assert "exactly" not in w.claims[0]["spec"]["devices"]["requests"][0]
    out = w.outcome("waiter")
    assert (out.stage, counts(out)) == ("free", {"class": 2, "selectors": 2, "taints": 2, "free": 0})
    views = w.build().views
    assert views.claims[("lab", "waiter-gpu-2p5g6")].spec.requests[0].alternatives[0].device_class == CLASS
    assert not views.problems


# ---- extended resources served by DRA ------------------------------------------------------------

def test_extended_resource_served_by_a_device_class():
    w = exhausted()
    w.classes[0]["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    world = w.build()
    assert world.extended_offer("nvidia.com/gpu", w.nodes[0]) == (CLASS, 2, 0)
    assert free_world_with_extended().extended_offer("nvidia.com/gpu", w.nodes[0]) == (CLASS, 2, 2)
    advertising = real_node()
    advertising.allocatable["nvidia.com/gpu"] = "8"
    assert world.extended_offer("nvidia.com/gpu", advertising) is None  # the device plugin serves it there
    assert world.extended_offer("amd.com/gpu", w.nodes[0]) is None
    assert world.extended_offer("deviceclass.resource.kubernetes.io/gpu.example.com", w.nodes[0]) == (CLASS, 2, 0)


def free_world_with_extended() -> DraWorld:
    w = free_world()
    w.classes[0]["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    return w.build()


# ---- pre-funnel: no-resourceclaim and no-deviceclass -------------------------------------------------------

def test_missing_claim_is_no_resourceclaim_evidence():
    w = exhausted()
    raw = w.pod("waiter")
    raw["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared-gpu"}]
    res = w.resolve(raw)
    assert [(m.kind, m.namespace, m.name, m.pod_claim) for m in res.missing_claims] == [
        ("ResourceClaim", "lab", "shared-gpu", "gpu")]


def test_missing_template_without_generated_claim_is_no_resourceclaim():
    w = exhausted()
    raw = not_generated(w)
    raw["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "two-gpu"
    assert [(m.kind, m.name) for m in w.resolve(raw).missing_claims] == [("ResourceClaimTemplate", "two-gpu")]


def test_missing_template_with_a_generated_claim_is_judged_on_the_claim():
    w = exhausted()
    w.templates = []
    res = w.resolve("waiter")
    assert not res.missing_claims and res.claims[0].owner == "ResourceClaim lab/waiter-gpu-2p5g6"


def test_missing_device_class_for_a_template():
    w = free_world()
    raw = not_generated(w)
    w.request["deviceClassName"] = "gpu.exmaple.com"
    res = w.resolve(raw)
    assert [(m.owner, m.request, m.device_class) for m in res.missing_classes] == [
        ("ResourceClaimTemplate lab/one-gpu", "gpu", "gpu.exmaple.com")]


def test_missing_device_class_for_a_standalone_claim_and_a_subrequest():
    w = exhausted()
    claim = named(w.claims, "waiter-gpu-2p5g6")
    claim["spec"]["devices"]["requests"] = [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": CLASS, "count": 2},
        {"name": "small", "deviceClassName": "gpu.exmaple.com"}]}]
    res = w.resolve("waiter")
    assert [(m.owner, m.request, m.device_class) for m in res.missing_classes] == [
        ("ResourceClaim lab/waiter-gpu-2p5g6", "gpu/small", "gpu.exmaple.com")]


def test_allocated_claims_need_no_class():
    w = exhausted()
    w.classes = []
    assert not w.resolve("holder-1").missing_classes


# ---- bad input and scale -----------------------------------------------------------------------------

def test_unreadable_items_are_problems_with_file_and_path():
    w = exhausted()
    w.slices[0]["spec"]["pool"]["generation"] = "one"
    w.claims[0]["spec"]["devices"]["requests"][0]["exactly"]["count"] = -1
    views = w.build().views
    assert [str(p) for p in views.problems] == [
        "resourceclaims.json: $.items[0].spec.devices.requests[0].exactly.count: expected a positive integer, found -1",
        "resourceslices.json: $.items[0].spec.pool.generation: expected a non-negative integer, found 'one'",
    ]


def test_pods_from_one_template_share_one_evaluation_and_cel_runs_once_per_device():
    w = free_world()
    raw = not_generated(w)
    w.request["selectors"] = [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]
    world = w.build()
    outcomes = set()
    for i in range(500):
        pod = copy.deepcopy(raw)
        pod["metadata"]["name"] = f"waiter-{i}"
        outcomes.add(id(world.evaluate(world.resolve(pod_claims(pod)), w.nodes[0])))
    assert len(outcomes) == 1
    assert w.engine.calls == 4  # (class selector + request selector) x 2 devices


def test_search_is_bounded():
    w = free_world()
    raw = not_generated(w)
    _four_devices(w, ["h100", "a100", "l4", "t4"])
    w.request["count"] = 2
    w.template["spec"]["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/model"}]
    views = build_views(resourceclaims=w.claims, resourceclaimtemplates=w.templates, deviceclasses=w.classes,
                        resourceslices=w.slices)
    world = DraWorld(views, w.nodes, search_budget=3)
    out = world.evaluate(world.resolve(pod_claims(raw)), w.nodes[0])
    assert out.stage == "unmodelled" and "more than 3 steps" in out.unmodelled


# ---- more of dra.md's steps ------------------------------------------------------------------------

def test_admin_access_needs_no_free_device():
    # dra.md step 4: adminAccess requests neither need nor take a free device.
    w = exhausted()
    raw = not_generated(w)
    w.request["adminAccess"] = True
    out = w.outcome(raw)
    assert out.ok and out.requests[0].chosen == ("gpu.example.com/dx1/gpu-0",)


@pytest.mark.parametrize("offer, on_dx1, on_dx2", [
    ({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["dx1"]}]}]}}, 2, 0),
    ({"nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["dx2"]}]}]}}, 0, 2),
    ({"allNodes": True}, 2, 2),
])
def test_slices_offer_devices_by_node_name_selector_or_all_nodes(offer, on_dx1, on_dx2):
    w = free_world()
    del w.slices[0]["spec"]["nodeName"]
    w.slices[0]["spec"].update(offer)
    dx2 = real_node(name="dx2")
    w.nodes.append(dx2)
    assert counts(w.outcome("waiter", w.nodes[0]))["class"] == on_dx1
    assert counts(w.outcome("waiter", dx2))["class"] == on_dx2


def test_v1beta2_reads_like_v1():
    w = exhausted()
    for obj in w.claims + w.templates + w.slices + w.classes:
        obj["apiVersion"] = "resource.k8s.io/v1beta2"
    out = w.outcome("waiter")
    assert (out.stage, counts(out)["class"]) == ("free", 2)
