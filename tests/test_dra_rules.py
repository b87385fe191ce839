"""The DRA family through the real pipeline (causes.md `quota-exceeded`, `no-resourceclaim`, `no-deviceclass`,
`no-gpu-node`, `device-selector-mismatch`, `untolerated-taint`, `exhausted`; dra.md): each DRA case gets its word and
the evidence to check it.

Every bundle starts from the real v1.36.2 objects of tests/data/recordings/dra-*-v1.36 (tests/dra_fixtures.py) and
changes only what the case needs. Each case asserts the word and the evidence a person would check: the device
counts left after each step of dra.md per node, the holders, the CEL error, the rebuilt scheduler sentence.

The Kubernetes rules these follow: the scheduler's DynamicResources plugin
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: PreFilter fails with
`request X: device class Y does not exist`, Filter with `cannot allocate all claims`) and its allocator
(k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go: allocateOne,
matchAttributeConstraint, lookupAttribute; pools.go GatherPools keeps only a pool's newest generation).
"""

from __future__ import annotations

import copy
import uuid

import pytest

from conftest import analyse_dir, cli_words, quota, run_cli, verdict, write_manifest, words_of
from dra_fixtures import CLASS, DraBundle, add_node, exhausted, no_slice, pending_pod, standalone_claim, to_v1beta1, waiter_alone
from test_owners import failed_create, replicaset

CANNOT = "cannot allocate all claims"
RS_QUOTA = ('Error creating: pods "{pod}" is forbidden: exceeded quota: pod-quota, requested: pods=1, used: pods=3, '
            'limited: pods=3')
WAITER = "lab/waiter"
GPU0, GPU1 = f"{CLASS}/dx1/gpu-0", f"{CLASS}/dx1/gpu-1"


def devices_on(v, node: str = "dx1") -> dict:
    """The device evidence of one node (evidence["devices"]: what the scheduler's sentence hides)."""
    found = [d for d in v.evidence.get("devices") or () if d["node"] == node]
    assert found, f"{v.key} ({v.word}): no device evidence for {node}: {v.evidence.get('devices')}"
    return found[0]


def left(v, node: str = "dx1", i: int = 0) -> dict:
    return devices_on(v, node)["requests"][i]["left_after"]


def judge(b: DraBundle, tmp_path, key: str = WAITER, **options):
    return verdict(b.write(tmp_path), key, **options)


def select(b: DraBundle, expression: str) -> None:
    b.request["selectors"] = [{"cel": {"expression": expression}}]


# ---- the shared bundles as recorded ---------------------------------------------------------------------

def test_recorded_no_slice_bundle_is_no_gpu_node(tmp_path):
    v = judge(no_slice(), tmp_path, "lab/no-slice")
    assert v.word == "no-gpu-node"
    assert left(v, "dn1") == {"class": 0, "selectors": 0, "taints": 0, "free": 0}
    assert "no ResourceSlice offers a device" in v.reason
    assert CANNOT in v.scheduler["rebuilt"] and CANNOT in v.scheduler["message"]


def test_recorded_exhausted_bundle_waiter_exhausted_holders_node_side(tmp_path):
    root = exhausted().write(tmp_path)
    assert dict(cli_words(root)) == {"lab/holder-1": "node-side", "lab/holder-2": "node-side", "lab/waiter": "exhausted"}
    v = verdict(root, WAITER)
    assert left(v) == {"class": 2, "selectors": 2, "taints": 2, "free": 0}
    held = {(h["device"], h["claim"], tuple(h["pods"])) for h in devices_on(v)["requests"][0]["held_by"]}
    assert held == {(GPU0, "lab/holder-1-gpu-92p2f", ("lab/holder-1",)), (GPU1, "lab/holder-2-gpu-wj7dv", ("lab/holder-2",))}
    assert "0 of 2 matching device(s) free, 1 needed" in v.reason
    assert v.scheduler["rebuilt"] == f"0/1 nodes are available: 1 {CANNOT}."


def test_every_device_held_names_the_pods_to_wait_for_in_the_action(tmp_path):
    """The person on the ticket reads who holds the devices and where, not the contract's generic words; a claim
    too large for any node keeps the fit's own action (shrink the count)."""
    v = verdict(exhausted().write(tmp_path), WAITER)
    assert v.next_action == ("wait for lab/holder-1, lab/holder-2 to release the gpu.example.com devices on dx1, "
                             "or add a node with devices of class gpu.example.com")
    b = waiter_alone()
    b.request["count"] = 3
    assert verdict(b.write(tmp_path / "large"), WAITER).next_action.startswith("no node has enough devices")


def test_why_explain_shows_the_device_steps_and_the_holders(tmp_path):
    proc = run_cli("why", exhausted().write(tmp_path), WAITER, "--explain", check=True)
    assert "class 2 -> selectors 2 -> taints 2 -> free 0" in proc.stdout
    # The holders are named once, in the reason; the funnel, the nearest nodes and the device steps refer to it.
    assert "gpu.example.com/dx1/gpu-0 by lab/holder-1-gpu-92p2f (lab/holder-1)" in proc.stdout
    assert proc.stdout.count("gpu.example.com/dx1/gpu-0") == 1
    assert "held: by the claims the reason above names" in proc.stdout


def test_a_free_device_fits_now(tmp_path):
    v = judge(waiter_alone(), tmp_path)
    assert v.word == "fits-now"
    assert devices_on(v)["requests"][0]["chosen"] == [GPU0]


# ---- no-resourceclaim, no-deviceclass: missing claims, templates and DeviceClasses --------------------------

def test_missing_template_is_no_resourceclaim(tmp_path):
    b = waiter_alone()
    b.files["resourceclaimtemplates"] = []
    v = judge(b, tmp_path)
    assert v.word == "no-resourceclaim"
    assert v.evidence["missing_claims"] == [{"claim": "gpu", "kind": "ResourceClaimTemplate", "name": "lab/one-gpu"}]
    assert "resourceclaimtemplates.json" in v.reason
    assert v.scheduler["rebuilt"] is None  # the scheduler never queues it (dra.md)


def test_missing_standalone_claim_is_no_resourceclaim(tmp_path):
    b = waiter_alone()
    pending_pod(b, "shared-user", [{"name": "gpu", "resourceClaimName": "team-gpus"}])
    v = judge(b, tmp_path, "lab/shared-user")
    assert v.word == "no-resourceclaim"
    assert v.evidence["missing_claims"] == [{"claim": "gpu", "kind": "ResourceClaim", "name": "lab/team-gpus"}]
    assert "resourceclaims.json" in v.reason


def test_missing_device_class_for_a_template_rebuilds_the_prefilter_sentence(tmp_path):
    b = waiter_alone()
    b.request["deviceClassName"] = "gpu.exmaple.com"  # the typo recorded on the real scheduler (dra.md)
    v = judge(b, tmp_path)
    assert v.word == "no-deviceclass"
    assert v.evidence["missing_classes"] == [{"from": "ResourceClaimTemplate lab/one-gpu", "request": "gpu",
                                              "deviceClassName": "gpu.exmaple.com"}]
    assert v.scheduler["rebuilt"] == "0/1 nodes are available: request gpu: device class gpu.exmaple.com does not exist."


def test_missing_device_class_for_a_standalone_claim(tmp_path):
    b = waiter_alone()
    claim = standalone_claim(b, "team-gpus")
    claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "a100.example.com"
    pending_pod(b, "shared-user", [{"name": "gpu", "resourceClaimName": "team-gpus"}])
    v = judge(b, tmp_path, "lab/shared-user")
    assert v.word == "no-deviceclass"
    assert v.evidence["missing_classes"][0]["from"] == "ResourceClaim lab/team-gpus"
    assert "device class a100.example.com does not exist." in v.scheduler["rebuilt"]


# ---- no-gpu-node: no device of the class offered -----------------------------------------------------------

def test_slice_of_another_driver_is_no_gpu_node(tmp_path):
    b = waiter_alone()
    b.slice["spec"]["driver"] = "other.example.com"
    v = judge(b, tmp_path)
    assert v.word == "no-gpu-node"
    assert left(v)["class"] == 0
    assert "no ResourceSlice offers a device for ResourceClaimTemplate lab/one-gpu request 'gpu'" in v.reason


def test_pod_pinned_by_its_allocated_claim_to_a_node_without_slices(tmp_path):
    # A claim allocated to dn2 (nodeSelector on metadata.name, as the scheduler writes it) pins the pod there;
    # its second claim needs a new device, and dn2 offers none; dx1, with both devices free, is not allowed.
    b = waiter_alone()
    add_node(b, "dn2")
    claim = standalone_claim(b, "pinned-gpus")
    held = copy.deepcopy(exhausted().claim("holder-1-gpu-92p2f")["status"])
    held["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["dn2"]
    held["allocation"]["devices"]["results"][0]["pool"] = "dn2"
    held.pop("reservedFor")
    claim["status"] = held
    pending_pod(b, "pinned", [{"name": "old", "resourceClaimName": "pinned-gpus"},
                              {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    v = judge(b, tmp_path, "lab/pinned")
    assert v.word == "no-gpu-node"
    removed = {n: g["reason"] for s in v.funnel for g in s["removed"] for n in g["nodes"]}
    assert removed["dx1"] == "claim lab/pinned-gpus is allocated to another node"
    assert "no ResourceSlice offers a device" in removed["dn2"]
    assert left(v, "dn2", 0)["class"] == 0


def test_pod_whose_only_claim_is_allocated_fits_on_that_node_even_without_slices(tmp_path):
    # The scheduler does not re-check devices of an allocated claim: the pod goes where the claim is.
    b = waiter_alone()
    add_node(b, "dn2")
    claim = standalone_claim(b, "pinned-gpus")
    held = copy.deepcopy(exhausted().claim("holder-1-gpu-92p2f")["status"])
    held["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["dn2"]
    claim["status"] = held
    pending_pod(b, "pinned", [{"name": "old", "resourceClaimName": "pinned-gpus"}])
    v = judge(b, tmp_path, "lab/pinned")
    assert (v.word, v.reason) == ("fits-now", "fits now on dn2")


# ---- device-selector-mismatch: device selectors ------------------------------------------------------------

@pytest.mark.parametrize("expression, word", [
    ('device.attributes["gpu.example.com"].model == "a100"', "device-selector-mismatch"),
    ('device.attributes["gpu.example.com"].model == "h100"', "fits-now"),
])
def test_request_selector_by_attribute(tmp_path, expression, word):
    b = waiter_alone()
    select(b, expression)
    v = judge(b, tmp_path)
    assert v.word == word
    assert left(v)["class"] == 2 and left(v)["selectors"] == (0 if word != "fits-now" else 2)
    if word != "fits-now":
        assert "2 device(s) of the class, 0 pass its selectors, 1 needed" in v.reason
        assert CANNOT in v.scheduler["rebuilt"]


@pytest.mark.parametrize("memory, word", [("40Gi", "device-selector-mismatch"), ("80Gi", "fits-now")])
def test_request_selector_by_capacity_compare_to_quantity(tmp_path, memory, word):
    b = waiter_alone()
    select(b, 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0')
    for d in b.devices:
        d["capacity"]["memory"]["value"] = memory
    v = judge(b, tmp_path)
    assert v.word == word
    assert left(v)["selectors"] == (0 if memory == "40Gi" else 2)


def test_selector_naming_an_attribute_the_devices_lack_shows_the_cel_error(tmp_path):
    # The real scheduler fails the pod with SchedulerError `CEL runtime error: no such key: productName` (dra.md).
    b = waiter_alone()
    select(b, 'device.attributes["gpu.example.com"].productName == "H100"')
    v = judge(b, tmp_path)
    assert v.word == "device-selector-mismatch"
    errors = devices_on(v)["requests"][0]["cel_errors"]
    assert {e["device"] for e in errors} == {GPU0, GPU1}
    assert all("no such key: productName" in e["error"] for e in errors)
    assert "no such key: productName" in v.reason


def test_device_class_selector_leaves_nothing_is_no_gpu_node(tmp_path):
    b = waiter_alone()
    b.device_class["spec"]["selectors"].append({"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}})
    v = judge(b, tmp_path)
    assert v.word == "no-gpu-node"
    assert left(v)["class"] == 0


# ---- untolerated-taint: taints -------------------------------------------------------------------------------

@pytest.mark.parametrize("toleration, word", [
    (None, "untolerated-taint"),
    ({"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoSchedule"}, "fits-now"),
])
def test_device_taints_tolerated_and_not(tmp_path, toleration, word):
    # Device taints match like node taints (core/v1 Toleration.ToleratesTaint).
    b = waiter_alone()
    for d in b.devices:
        d["taints"] = [{"key": "gpu.example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}]
    if toleration:
        b.request["tolerations"] = [toleration]
    v = judge(b, tmp_path)
    assert v.word == word
    assert left(v)["taints"] == (0 if toleration is None else 2)
    if toleration is None:
        assert "untolerated device taint" in v.reason


def test_node_taint_on_the_only_node_with_devices_beside_an_untainted_node_without_slices(tmp_path):
    b = waiter_alone()
    b.items("nodes")[0]["spec"]["taints"] = [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]
    add_node(b, "dn2")
    v = judge(b, tmp_path)
    assert v.word == "untolerated-taint"
    removed = {n: (s["stage"], g["reason"]) for s in v.funnel for g in s["removed"] for n in g["nodes"]}
    assert removed["dn2"][0] == "advertised" and "no ResourceSlice" in removed["dn2"][1]
    assert removed["dx1"][0] == "taints" and "dedicated=training:NoSchedule" in removed["dx1"][1]


# ---- exhausted and too-large ----------------------------------------------------------------------------------

def test_count_larger_than_the_node_has_is_exhausted_too_large(tmp_path):
    b = waiter_alone()
    b.request["count"] = 3
    v = judge(b, tmp_path)
    assert v.word == "exhausted"
    assert devices_on(v)["too_large"] is True
    assert "needs 3, the node has 2 matching device(s) even when empty" in v.reason


def test_all_mode_needs_every_matching_device_free(tmp_path):
    b = exhausted()
    b.drop("pods", "holder-2")
    b.drop("resourceclaims", "holder-2-gpu-wj7dv")
    b.drop("resourceclaims", "waiter-gpu-2p5g6")
    b.pod("waiter")["status"].pop("resourceClaimStatuses")
    b.request.pop("count")
    b.request["allocationMode"] = "All"
    v = judge(b, tmp_path)
    assert v.word == "exhausted"
    req = devices_on(v)["requests"][0]
    assert (req["needed"], req["left_after"]["free"]) == ("All", 1)
    assert [h["device"] for h in req["held_by"]] == [GPU0]
    b.drop("resourceclaims", "holder-1-gpu-92p2f")  # the holder's claim released: All takes both
    b.drop("pods", "holder-1")
    v = verdict(b.write(tmp_path, "released"), WAITER)
    assert v.word == "fits-now"
    assert devices_on(v)["requests"][0]["chosen"] == [GPU0, GPU1]


@pytest.mark.parametrize("first_count, word", [(4, "fits-now"), (None, "exhausted")])
def test_first_available_takes_the_first_subrequest_that_can_be_met(tmp_path, first_count, word):
    b = waiter_alone()
    subrequests = [{"name": "four", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 4},
                   {"name": "one", "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}]
    if first_count is None:  # both subrequests larger than the node: too-large
        subrequests[1]["count"] = 3
    b.template()["spec"]["spec"]["devices"]["requests"] = [{"name": "gpu", "firstAvailable": subrequests}]
    v = judge(b, tmp_path)
    assert v.word == word
    chosen = {r["request"]: r["chosen"] for r in devices_on(v)["requests"]}
    if word == "fits-now":
        assert chosen == {"gpu/four": [], "gpu/one": [GPU0]}
    else:
        assert devices_on(v)["too_large"] is True


def _four_devices(b: DraBundle, models: list[str]) -> None:
    base = b.devices[0]
    b.slice["spec"]["devices"] = []
    for i, model in enumerate(models):
        d = copy.deepcopy(base)
        d["name"] = f"gpu-{i}"
        d["attributes"]["index"]["int"] = i
        d["attributes"]["model"]["string"] = model
        b.devices.append(d)


@pytest.mark.parametrize("models, word", [(["h100", "a100", "l4", "a100"], "fits-now"),
                                          (["h100", "a100", "l4", "t4"], "device-selector-mismatch")])
def test_match_attribute_needs_the_chosen_devices_to_share_the_value(tmp_path, models, word):
    b = waiter_alone()
    _four_devices(b, models)
    b.request["count"] = 2
    b.template()["spec"]["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/model"}]
    v = judge(b, tmp_path)
    assert v.word == word
    if word == "fits-now":
        assert devices_on(v)["requests"][0]["chosen"] == [f"{CLASS}/dx1/gpu-1", f"{CLASS}/dx1/gpu-3"]
    else:
        assert devices_on(v)["stage"] == "constraints"
        assert "matchAttribute" in v.reason


def test_shared_claim_already_allocated_pins_the_pod_to_its_node(tmp_path):
    # A second pod naming holder-1's allocated claim needs no new device; it is judged on dx1 only.
    b = exhausted()
    add_node(b, "dx2")
    pending_pod(b, "sharer", [{"name": "gpu", "resourceClaimName": "holder-1-gpu-92p2f"}])
    v = judge(b, tmp_path, "lab/sharer")
    assert v.word == "fits-now"
    assert v.evidence["claims"] == [{"claim": "gpu", "from": "ResourceClaim lab/holder-1-gpu-92p2f", "allocated": True}]
    assert v.reason == "fits now on dx1"  # though both of dx1's devices are allocated
    removed = {n: g["reason"] for s in v.funnel for g in s["removed"] for n in g["nodes"]}
    assert removed == {"dx2": "claim lab/holder-1-gpu-92p2f is allocated to another node"}


def test_pools_with_an_old_generation_are_ignored(tmp_path):
    b = waiter_alone()
    old = copy.deepcopy(b.slice)
    old["metadata"]["name"] = "dx1-old"
    old["metadata"]["uid"] = str(uuid.uuid4())
    b.slice["spec"]["pool"]["generation"] = 2
    b.slice["spec"]["devices"] = b.devices[:1]
    b.request["count"] = 2  # the old generation's two devices would fit; the newest has one
    b.items("resourceslices").append(old)
    v = judge(b, tmp_path)
    assert v.word == "exhausted"
    assert left(v)["class"] == 1 and devices_on(v)["too_large"] is True


def test_v1beta1_bundle_reads_like_v1(tmp_path):
    b = exhausted()
    to_v1beta1(b)
    assert "exactly" not in b.claim("waiter-gpu-2p5g6")["spec"]["devices"]["requests"][0]
    assert "basic" in b.devices[0]
    root = b.write(tmp_path)
    assert dict(cli_words(root)) == {"lab/holder-1": "node-side", "lab/holder-2": "node-side", "lab/waiter": "exhausted"}
    assert left(verdict(root, WAITER)) == {"class": 2, "selectors": 2, "taints": 2, "free": 0}


# ---- extended resources served by a DeviceClass --------------------------------------------------------------

@pytest.mark.parametrize("holders, word, reason", [
    (False, "fits-now", "fits now on dx1"),
    (True, "exhausted", "dx1: nvidia.com/gpu: 0 free of 2 allocatable, 1 requested"),
])
def test_extended_resource_served_by_a_device_class(tmp_path, holders, word, reason):
    # dra.md: a DeviceClass with extendedResourceName serves `nvidia.com/gpu` on nodes that do not advertise it
    # (KEP-5004; the scheduler's DynamicResources plugin counts the class's free devices at Filter).
    b = exhausted() if holders else waiter_alone()
    assert "nvidia.com/gpu" not in b.items("nodes")[0]["status"]["allocatable"]
    pending_pod(b, "ext", [], limits={"nvidia.com/gpu": "1"})
    without = verdict(b.write(tmp_path, "plain"), "lab/ext")
    assert without.word == "no-gpu-node" and "no nvidia.com/gpu in status.capacity" in without.reason
    b.device_class["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    v = judge(b, tmp_path, "lab/ext")
    assert v.word == word
    assert reason in v.reason
    if holders:  # the fit table counts the class's devices and says which class serves the resource
        gpu = v.fit.rows[0]["resources"]["nvidia.com/gpu"]
        assert (gpu["allocatable"], gpu["used"], gpu["free"]) == ("2", "2", "0")
        assert gpu["served_by"].startswith("DeviceClass gpu.example.com")


# ---- unclassified: what the library cannot evaluate ----------------------------------------------------------

def test_expression_the_library_cannot_evaluate_is_unclassified_naming_it(tmp_path):
    b = waiter_alone()
    # Optional field syntax: valid Kubernetes CEL the library cannot parse (model/dra/cel.py).
    expression = 'device.attributes["gpu.example.com"].?model.orValue("") == "h100"'
    select(b, expression)
    v = judge(b, tmp_path)
    assert v.word == "unclassified"
    assert expression in v.reason


# ---- quota-exceeded: the claim refused by quota ---------------------------------------------------------------

def test_failed_resource_claim_creation_for_quota_is_quota_exceeded(tmp_path):
    # The claim controller (pkg/controller/resourceclaim/controller.go handleClaim) records
    # FailedResourceClaimCreation on the pod when the API server refuses the generated claim.
    b = waiter_alone()
    event = copy.deepcopy(next(e for e in b.items("events") if e["reason"] == "FailedScheduling"))
    msg = ('PodResourceClaim gpu: resourceclaims.resource.k8s.io "waiter-gpu-x7k2q" is forbidden: exceeded quota: '
           'gpu-claims, requested: count/resourceclaims.resource.k8s.io=1, used: count/resourceclaims.resource.k8s.io=2, '
           'limited: count/resourceclaims.resource.k8s.io=2')
    event.update({"reason": "FailedResourceClaimCreation", "message": msg, "reportingComponent": "resource_claim",
                  "source": {"component": "resource_claim"}, "type": "Warning"})
    event["metadata"]["name"] = "waiter.claimquota"
    b.items("events").append(event)
    v = judge(b, tmp_path)
    assert v.word == "quota-exceeded"
    assert v.evidence["claim_creation"]["message"] == msg
    assert "exceeded quota: gpu-claims" in v.reason


# ---- owners and attempts -------------------------------------------------------------------------------------

def test_attempt_with_claims_is_judged_against_the_bundles_slices_and_claims(tmp_path):
    b = exhausted()
    root = b.write(tmp_path)
    pod = copy.deepcopy(b.pod("waiter"))
    pod["metadata"] = {"name": "trial", "namespace": "lab"}
    pod.pop("status")
    pod["spec"].pop("nodeName", None)
    manifest = write_manifest(tmp_path / "m", pod)
    vs = analyse_dir(root, manifests=[manifest])
    v = vs["lab/trial"]
    assert v.to_dict()["kind"] == "Attempt"
    assert v.word == "exhausted"
    assert {h["claim"] for h in devices_on(v)["requests"][0]["held_by"]} == {"lab/holder-1-gpu-92p2f", "lab/holder-2-gpu-wj7dv"}
    pod["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "two-gpus"
    v = verdict(root, "lab/trial", manifests=[write_manifest(tmp_path / "m2", pod)])
    assert v.word == "no-resourceclaim"


def _pod_quota(used: str) -> dict:
    return quota("pod-quota", "lab", {"pods": "3"}, {"pods": used})


def test_replicaset_refused_at_admission_with_a_claim_template_is_judged_like_its_pods(tmp_path):
    # The ReplicaSet controller's FailedCreate (observed.md): the pods it stamps out from a template naming a
    # ResourceClaimTemplate are refused by quota before any claim is made; the owner is the one verdict.
    b = exhausted()
    spec = copy.deepcopy(b.pod("waiter")["spec"])
    spec.pop("nodeName", None)
    rs = replicaset(namespace="lab", replicas=3, existing=0)
    rs["spec"]["template"]["spec"] = spec
    name = rs["metadata"]["name"]
    b.extra["replicasets"] = [rs]
    b.items("events").append(failed_create("ReplicaSet", name, "lab", RS_QUOTA.format(pod=f"{name}-x9k2p")))
    b.files["resourcequotas"] = [_pod_quota("3")]
    v = judge(b, tmp_path, f"lab/replicaset/{name}")
    assert v.word == "quota-exceeded"
    assert v.evidence["admission"]["quota"] == ["quota pod-quota: pods used 3 + requested 1 > hard 3"]
    assert v.evidence["admission"]["agrees"].startswith("yes")
    assert (v.evidence["owner"]["desired"], v.evidence["owner"]["existing"]) == (3, 0)


@pytest.mark.parametrize("template, word", [("one-gpu", "exhausted"), ("two-gpus", "no-resourceclaim")])
def test_deployment_attempt_whose_pods_use_a_template_is_judged_like_its_pods(tmp_path, template, word):
    b = exhausted()
    spec = copy.deepcopy(b.pod("waiter")["spec"])
    spec.pop("nodeName", None)
    spec["resourceClaims"][0]["resourceClaimTemplateName"] = template
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer", "namespace": "lab"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "trainer"}},
                       "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": spec}}}
    v = verdict(b.write(tmp_path), "lab/trainer", manifests=[write_manifest(tmp_path / "m", deploy)])
    assert v.word == word
    if word == "exhausted":
        assert left(v) == {"class": 2, "selectors": 2, "taints": 2, "free": 0}
    else:
        assert v.evidence["missing_claims"][0]["name"] == "lab/two-gpus"


def test_words_output_lists_every_dra_pod(tmp_path):
    root = no_slice().write(tmp_path)
    assert words_of(root) == {"lab/no-slice": "no-gpu-node"}


# ---- hostile CEL and unreadable DRA objects: clear answers, never a traceback -----------------------------------

@pytest.mark.parametrize("where", ["class", "claim"])
@pytest.mark.parametrize("name, needle", [
    ("huge", "over the 10240 Kubernetes allows"),
    ("nested-2000-deep", "brackets nest deeper than 50"),
    ("nested-macros", "is nested inside another one"),
    ("macro-on-huge-list", "is nested inside another one"),
])
def test_hostile_cel_is_refused_and_the_pod_answers_unclassified_naming_it(tmp_path, where, name, needle):
    # Bounds like the API server's (apiserver/pkg/cel/limits.go; resource validation's CEL cost limit): the
    # expression is refused before the library parses it (model/dra/cel_limits.py).
    from hostile.corpus import DRA_HOSTILE_CEL
    expression = DRA_HOSTILE_CEL[name]
    b = waiter_alone()
    if where == "class":
        b.device_class["spec"]["selectors"].append({"cel": {"expression": expression}})
    else:
        select(b, expression)
    root = b.write(tmp_path)
    proc = run_cli("why", root, WAITER, "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.startswith("lab/waiter: unclassified")
    assert needle in proc.stdout
    assert "cannot be evaluated" in proc.stdout and expression[:40] in proc.stdout
    assert len(proc.stdout) < 20_000  # a 1.6 MB expression is named, not printed whole


@pytest.mark.parametrize("selectors, path", [
    ("x", "$.items[0].spec.selectors: expected an array"),
    ([{"cel": {"expression": 5}}], "$.items[0].spec.selectors[0].cel.expression: expected a non-empty string"),
])
def test_an_unreadable_device_class_is_insufficient_evidence_not_no_selectors(tmp_path, selectors, path):
    # A string where the selectors belong must not read as "no selectors" (every device matching: fits-now).
    b = waiter_alone()
    b.device_class["spec"]["selectors"] = selectors
    root = b.write(tmp_path)
    v = verdict(root, WAITER)
    assert v.word == "insufficient-evidence"
    assert v.evidence["missing"] == "deviceclasses.json"
    assert f"deviceclasses.json: {path}" in v.reason
    assert cli_words(root, status=2) == [("lab/waiter", "insufficient-evidence")]
