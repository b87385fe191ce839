"""Volumes (causes.md `no-volumeclaim`, `volume-unbound`, `volume-node-conflict` and part of `exhausted`), from the
real wffc-pv-on-cpu-node recording (v1.36.2): nodes c1 (CPU, zone a), g1 (GPU, zone a), g2 (GPU, zone b); lab/train
uses claim lab/scratch (local-storage, WaitForFirstConsumer, no provisioner) whose only PersistentVolume local-pv-c1
is pinned to c1.
Rules: kubernetes pkg/scheduler/framework/plugins/volumebinding/binder.go, volumezone/volume_zone.go,
volumerestrictions/volume_restrictions.go, nodevolumelimits/csi.go."""

from __future__ import annotations

import copy

from filter_fixtures import (
    WFFC,
    add,
    edit_each,
    edit_pod,
    items,
    judge,
    pod_named,
    recording,
    running_like,
)

KEY = "lab/train"


def _bind(claim: dict, volume: str) -> None:
    claim["spec"]["volumeName"] = volume
    claim["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
    claim["status"] = {"phase": "Bound", "accessModes": claim["spec"]["accessModes"]}


def _bound_pv(pv: dict) -> None:
    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "lab", "name": "scratch", "uid": "x"}
    pv["status"]["phase"] = "Bound"


def test_the_recording_wffc_claim_whose_only_pv_is_on_the_cpu_node_is_volume_node_conflict(tmp_path):
    v = judge(recording(tmp_path, WFFC), KEY)
    assert v.word == "volume-node-conflict"
    assert v.scheduler["rebuilt"] == ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                      "2 node(s) didn't find available persistent volumes to bind.")
    assert v.scheduler["comparison"].startswith("agrees")
    where = v.evidence["volume_topology"][0]
    assert where["usable_on"] == ["c1"] and where["candidates"] == ["g1", "g2"]
    # causes.md: put the data where the GPU nodes are; the claim, its only volume and the class named
    assert v.action == ("create a PersistentVolume of class local-storage for claim lab/scratch that g1, g2 can use "
                        "(local-pv-c1 is only for kubernetes.io/hostname in (c1)), or give StorageClass local-storage "
                        "a provisioner")


def test_missing_claim_is_no_volumeclaim_with_the_v136_prefilter_sentence(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={"persistentvolumeclaims": lambda _: []}), KEY)
    assert v.word == "no-volumeclaim"
    assert v.scheduler["rebuilt"] == '0/3 nodes are available: persistentvolumeclaim "scratch" not found. not found'


def test_missing_storage_class_is_no_volumeclaim_and_reads_as_unbound_immediate_to_the_scheduler(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={"storageclasses": lambda _: []}), KEY)
    assert v.word == "no-volumeclaim"
    assert "local-storage" in v.reason
    assert v.scheduler["rebuilt"] == "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"


def test_unbound_immediate_claim_is_volume_unbound(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={"storageclasses": edit_each(
        lambda c: c.update(volumeBindingMode="Immediate", provisioner="ebs.csi.aws.com"))}), KEY)
    assert v.word == "volume-unbound"
    assert v.evidence["volume_claims"][0]["provisioner"] == "ebs.csi.aws.com"
    # local-pv-c1 is Available and fits the claim: kube-controller-manager's binder binds an Immediate claim at once
    assert v.action == ("look at kube-controller-manager's persistent volume binder: local-pv-c1 is Available and fits "
                        "claim lab/scratch, yet it is not bound")


def test_unbound_immediate_claim_names_its_provisioner_or_asks_for_a_volume(tmp_path):
    # causes.md: look at the claim's provisioner (or create a matching PersistentVolume), each named
    immediate = edit_each(lambda c: c.update(volumeBindingMode="Immediate", provisioner="ebs.csi.aws.com"))
    v = judge(recording(tmp_path / "a", WFFC, edit={"storageclasses": immediate, "persistentvolumes": lambda _: []}), KEY)
    assert v.word == "volume-unbound"
    assert v.action == ("look at provisioner ebs.csi.aws.com (StorageClass local-storage): it has not made a volume "
                        "for claim lab/scratch")
    none = edit_each(lambda c: c.update(volumeBindingMode="Immediate"))
    v = judge(recording(tmp_path / "b", WFFC, edit={"storageclasses": none, "persistentvolumes": lambda _: []}), KEY)
    assert v.action == ("create a PersistentVolume that claim lab/scratch can bind (StorageClass local-storage has no "
                        "provisioner)")


def test_claim_bound_to_a_missing_pv_is_volume_unbound(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={"persistentvolumeclaims": edit_each(lambda c: _bind(c, "pv-gone"))}), KEY)
    assert v.word == "volume-unbound"
    assert "pv-gone" in v.reason
    assert v.action == "recreate PersistentVolume pv-gone (claim lab/scratch is bound to it), or replace the claim"


def test_bound_pv_whose_node_affinity_excludes_the_gpu_nodes(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={"persistentvolumeclaims": edit_each(lambda c: _bind(c, "local-pv-c1")),
                                              "persistentvolumes": edit_each(_bound_pv)}), KEY)
    assert v.word == "volume-node-conflict"
    assert v.scheduler["rebuilt"] == ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                      "2 node(s) didn't match PersistentVolume's node affinity.")
    assert v.action == ("move claim lab/scratch's data to a volume g1, g2 can use (PersistentVolume local-pv-c1 has "
                        "node affinity kubernetes.io/hostname in (c1)), or add a GPU node it allows")


def test_bound_pv_in_another_zone_by_zone_labels(tmp_path):
    def zone_c(pv):
        _bound_pv(pv)
        del pv["spec"]["nodeAffinity"]
        pv["metadata"]["labels"] = {"topology.kubernetes.io/zone": "c"}
    v = judge(recording(tmp_path, WFFC, edit={"persistentvolumeclaims": edit_each(lambda c: _bind(c, "local-pv-c1")),
                                              "persistentvolumes": edit_each(zone_c)}), KEY)
    assert v.word == "volume-node-conflict"
    assert "2 node(s) had no available volume zone" in v.scheduler["rebuilt"]
    assert v.evidence["volume_topology"][0]["candidates_by_zone"] == {"a": 1, "b": 1}
    assert v.action == ("move claim lab/scratch's data to a volume in the zone of g1, g2 (PersistentVolume local-pv-c1 "
                        "is in topology.kubernetes.io/zone=c), or add a GPU node there")


def test_a_bound_pv_failing_before_claims_that_fail_each_their_own_way_is_one_group_as_node_by_node(tmp_path):
    """Found in review: the funnel's volume stage from the columns differed from the node-by-node rule. The bound
    claim lab/data's volume is pinned to c1, so g1 and g2 both fail on it first (the text is its own); after it a
    WaitForFirstConsumer claim fails on each GPU node a different way: lab/fresh is being provisioned for g2
    (fails on g1), lab/scratch has no provisioner and no volume there (fails on g2). Both add only the same
    scheduler string, so the two nodes have one Reason and are one group (`g1, g2: …`), not two with one text."""
    pv = copy.deepcopy(items(WFFC, "persistentvolumes")[0])
    pv["metadata"].update(name="pv-data", uid="uid-pv-data")
    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "lab", "name": "data", "uid": "uid-data"}
    pv["status"]["phase"] = "Bound"
    scratch = items(WFFC, "persistentvolumeclaims")[0]
    data = copy.deepcopy(scratch)
    data["metadata"].update(name="data", uid="uid-data")
    _bind(data, "pv-data")
    fresh = copy.deepcopy(scratch)
    fresh["metadata"].update(name="fresh", uid="uid-fresh", annotations={"volume.kubernetes.io/selected-node": "g2"})
    fresh["spec"]["storageClassName"] = "provisioned"
    provisioned = copy.deepcopy(items(WFFC, "storageclasses")[0])
    provisioned["metadata"].update(name="provisioned", uid="uid-provisioned")
    provisioned["provisioner"] = "ebs.csi.aws.com"

    def claims(pod: dict) -> None:  # data (bound), fresh, scratch (both WaitForFirstConsumer), in that order
        pod["spec"]["volumes"][0:0] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                                       {"name": "fresh", "persistentVolumeClaim": {"claimName": "fresh"}}]
    v = judge(recording(tmp_path, WFFC, edit={
        "persistentvolumes": add(pv), "persistentvolumeclaims": add(data, fresh), "storageclasses": add(provisioned),
        "pods": edit_pod("train", claims)}), KEY)
    assert v.word == "volume-node-conflict"
    assert v.reason.endswith(": g1, g2: PersistentVolume pv-data (claim lab/data) has node affinity "
                             "kubernetes.io/hostname in (c1)"), v.reason


def test_nodes_failing_a_bound_pv_with_and_without_a_claim_after_it_are_one_line_as_node_by_node(tmp_path):
    """Found in review: the volume stage's groups from the columns were taken as distinct texts. The bound claim
    lab/data's volume is pinned to g1 and the pod asks for no GPU, so c1 and g2 fail on it first (its text); on g2
    lab/scratch (no provisioner, its only volume on c1) fails after it, adding a scheduler string, on c1 not. Two
    Reasons of one text: one line `c1, g2: …`, as node by node."""
    pv = copy.deepcopy(items(WFFC, "persistentvolumes")[0])
    pv["metadata"].update(name="pv-data", uid="uid-pv-data")
    pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = ["g1"]
    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "lab", "name": "data", "uid": "uid-data"}
    pv["status"]["phase"] = "Bound"
    data = copy.deepcopy(items(WFFC, "persistentvolumeclaims")[0])
    data["metadata"].update(name="data", uid="uid-data")
    _bind(data, "pv-data")

    def claims(pod: dict) -> None:
        pod["spec"]["volumes"][0:0] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
        for c in pod["spec"]["containers"]:
            for amounts in c["resources"].values():
                amounts.pop("nvidia.com/gpu", None)
    v = judge(recording(tmp_path, WFFC, edit={
        "persistentvolumes": add(pv), "persistentvolumeclaims": add(data), "pods": edit_pod("train", claims)}), KEY)
    assert v.word == "volume-node-conflict"
    assert "c1, g2: PersistentVolume pv-data (claim lab/data) has node affinity kubernetes.io/hostname in (g1)" \
        in v.reason, v.reason


def test_wffc_claim_a_provisioner_can_serve_passes(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={"storageclasses": edit_each(lambda c: c.update(provisioner="ebs.csi.aws.com"))}),
              KEY)
    assert v.word == "fits-now"


def test_csi_storage_capacity_too_small_is_volume_node_conflict(tmp_path):
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
              "spec": {"storageCapacity": True}}
    capacity = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                "metadata": {"name": "cap-a", "namespace": "kube-system"}, "storageClassName": "local-storage",
                "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}, "capacity": "50Gi"}
    v = judge(recording(tmp_path, WFFC, edit={
        "storageclasses": edit_each(lambda c: c.update(provisioner="csi.example.com")),
        "csidrivers": add(driver), "csistoragecapacities": add(capacity)}), KEY)
    assert v.word == "volume-node-conflict"
    assert "2 node(s) did not have enough free storage" in v.scheduler["rebuilt"]
    assert v.action.startswith("free or add storage of class local-storage that g1, g2 can reach (no "
                               "CSIStorageCapacity there holds the ")
    assert v.action.endswith(" claim lab/scratch asks), or shrink the claim")


def _csi_pv(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "200Gi"},
                     "csi": {"driver": "csi.example.com", "volumeHandle": name}, "storageClassName": "local-storage"},
            "status": {"phase": "Bound"}}


def _claim_for(name: str, volume: str, modes: list[str]) -> dict:
    base = items(WFFC, "persistentvolumeclaims")[0]
    base["metadata"]["name"] = name
    base["spec"]["accessModes"] = modes
    _bind(base, volume)
    return base


def _holder(pods: list[dict], name: str, node: str, claim: str) -> list[dict]:
    other = running_like(pod_named(pods, "train"), name, node, app="other")
    other["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = claim
    other["status"] = {"phase": "Running"}
    return pods + [other]


def test_readwriteoncepod_claim_in_use_is_exhausted_on_every_node(tmp_path):
    v = judge(recording(tmp_path, WFFC, edit={
        "persistentvolumeclaims": lambda _: [_claim_for("scratch", "pv-rwop", ["ReadWriteOncePod"])],
        "persistentvolumes": lambda _: [_csi_pv("pv-rwop")],
        "pods": lambda pods: _holder(pods, "user", "g1", "scratch")}), KEY)
    assert v.word == "exhausted"
    assert "lab/user" in v.reason
    assert ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use "
            "by another pod") in v.scheduler["rebuilt"]


def test_csi_attach_limit_is_exhausted(tmp_path):
    def limits(_):
        return [{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": n},
                 "spec": {"drivers": [{"name": "csi.example.com", "nodeID": n, "allocatable": {"count": 1}}]}}
                for n in ("g1", "g2")]

    def pods(ps):
        return _holder(_holder(ps, "user-1", "g1", "other-1"), "user-2", "g2", "other-2")
    v = judge(recording(tmp_path, WFFC, edit={
        "persistentvolumeclaims": lambda _: [_claim_for("scratch", "pv-a", ["ReadWriteOnce"]),
                                             _claim_for("other-1", "pv-b", ["ReadWriteOnce"]),
                                             _claim_for("other-2", "pv-c", ["ReadWriteOnce"])],
        "persistentvolumes": lambda _: [_csi_pv("pv-a"), _csi_pv("pv-b"), _csi_pv("pv-c")],
        "csinodes": limits, "pods": pods}), KEY)
    assert v.word == "exhausted"
    assert "2 node(s) exceed max volume count" in v.scheduler["rebuilt"]


def test_bundle_without_persistentvolumeclaims_json_is_insufficient_evidence(tmp_path):
    v = judge(recording(tmp_path, WFFC, drop=("persistentvolumeclaims",)), KEY)
    assert v.word == "insufficient-evidence"
    assert v.evidence["missing"] == "persistentvolumeclaims.json"


def test_generic_ephemeral_volume_claim_not_made_yet_is_not_no_volumeclaim_but_one_owned_by_another_is(tmp_path):
    def ephemeral(pod):
        pod["spec"]["volumes"][0] = {"name": "vol0", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}
    v = judge(recording(tmp_path / "a", WFFC, edit={"pods": edit_pod("train", ephemeral)}), KEY)
    assert v.word != "no-volumeclaim"
    foreign = _claim_for("train-vol0", "local-pv-c1", ["ReadWriteOnce"])
    foreign["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "someone-else", "uid": "not-the-pod"}]
    v = judge(recording(tmp_path / "b", WFFC, edit={"pods": edit_pod("train", ephemeral),
                                                    "persistentvolumeclaims": add(foreign)}), KEY)
    assert v.word == "no-volumeclaim"
    assert "was not created for the pod" in v.reason
