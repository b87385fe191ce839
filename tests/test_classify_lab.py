"""The shipped lab bundle (real kubectl output of a real v1.36 cluster) answers every target with its word, whatever
the scheduler's message says; and every word of causes.md is given at least once on realistic fixtures made from the
lab's objects."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from analyzer.rules.order import DECIDED
from helpers import LAB, REPO, SCHEMAS
from test_node_health import under
from conftest import (LAB_ATTEMPT_WORDS, LAB_MANIFESTS, LAB_WORDS, ORDER_WORDS, analyse_dir, funnel_table,
                      bound_pod, cli_words, copy_lab, cordon, failed_scheduling_event, gpu_node, gpu_pod, lab_items,
                      lab_node, make_bundle, run_cli, set_message, verdict, words_of)

M41 = LAB_MANIFESTS / "41-pod-quota-exceeded.yaml"
M42 = LAB_MANIFESTS / "42-pod-runtimeclass-missing.yaml"


# -- the lab itself ---------------------------------------------------------------------------------

def test_lab_bundle_answers_every_pending_pod_and_stored_attempt():
    # The shipped bundle carries attempts/41 and /42 (the real `kubectl apply` answers): they are
    # judged like --manifest, so the lab answers 7 pods + 2 attempts.
    assert words_of(LAB) == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}


def test_same_insufficient_message_three_different_words():
    # observed.md: exhausted, no-gpu-node and allocatable-zero all read `… 1 Insufficient nvidia.com/gpu …`;
    # the word comes from the bundle's objects (causes.md `no-gpu-node`, `allocatable-zero`, `exhausted`), not from
    # that sentence.
    vs = analyse_dir(LAB)
    for key, word in (("lab/exhausted", "exhausted"), ("lab/no-gpu-node", "no-gpu-node"),
                      ("lab/allocatable-zero", "allocatable-zero")):
        v = vs[key]
        assert "1 Insufficient nvidia.com/gpu" in v.scheduler["message"]
        assert v.word == word
        assert v.to_dict()["scheduler_message"] == v.scheduler["message"]  # quoted verbatim
        # The tool's reason to exist: it says what the one sentence conflates.
        assert "Insufficient" in v.scheduler["conflation"] and word in v.scheduler["conflation"]


def test_lab_allocatable_zero_evidence_names_capacity_and_allocatable():
    v = verdict(LAB, "lab/allocatable-zero")
    name, _, nodes_out, removed = funnel_table(v)[-1]
    assert name == "allocatable" and nodes_out == 0
    assert removed == {"gpu-alloczero": "nvidia.com/gpu: capacity 4, allocatable 0"}


def test_lab_exhausted_counts_running_and_bound_pending_but_not_succeeded():
    # causes.md "Used on a node": filler-a (Running, 3 GPUs) and filler-b (Pending, bound, 1 GPU) hold all
    # 4 GPUs of gpu-ok; finished-job (Succeeded, 2 GPUs) holds nothing.
    v = verdict(LAB, "lab/exhausted")
    [row] = v.fit.rows
    assert row["node"] == "gpu-ok"
    assert row["resources"]["nvidia.com/gpu"] == {"allocatable": "4", "used": "4", "free": "0", "requested": "1"}
    users = {u["pod"] for u in row["used_by"]}
    assert users == {"lab/filler-a", "lab/filler-b"}
    assert v.fit.fragmented is False


def test_running_and_succeeded_pods_are_not_targets():
    keys = set(analyse_dir(LAB))
    assert "lab/filler-a" not in keys  # Running
    assert "lab/finished-job" not in keys  # Succeeded


@pytest.mark.parametrize("pod, word", [("lab/filler-a", "running"), ("lab/finished-job", "running"),
                                       ("lab/exhausted", "exhausted"), ("lab/filler-b", "node-side")])
def test_why_prints_only_the_word(pod, word):
    # causes.md Targets: a pod that is not a target can still be asked about by name: `running`.
    proc = run_cli("why", LAB, pod, check=True)
    assert proc.stdout == f"{word}\n"


def test_manifests_41_42_without_attempts_dir(tmp_path):
    # A bundle copy with the lab JSON files only: the manifests alone decide `no-runtimeclass` and `quota-exceeded`
    # from the objects.
    root = copy_lab(tmp_path)
    assert not (root / "attempts").exists() and not (root / "manifest.json").exists()
    assert words_of(root) == LAB_WORDS
    got = words_of(root, manifests=[M41, M42])
    assert got == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}
    ev = analyse_dir(root, manifests=[M41])["quota-lab/quota-exceeded"].evidence["admission"]
    assert any("requests.nvidia.com/gpu" in s and "hard 1" in s for s in ev["quota"])


def test_manifests_41_42_via_cli_words(tmp_path):
    root = copy_lab(tmp_path)
    lines = cli_words(root, "--manifest", M41, "--manifest", M42)
    assert dict(lines) == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}
    assert len(lines) == len(dict(lines))  # one line per target


def test_manifest_repeating_a_stored_attempt_is_answered_once():
    got = analyse_dir(LAB, manifests=[M41, M42])
    assert {k: v.word for k, v in got.items()} == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}
    # the stored attempt carries the API server's own answer, and it agrees with the objects
    adm = got["quota-lab/quota-exceeded"].evidence["admission"]
    assert adm["api_server"]["says"] == "quota"
    assert adm["agrees"].startswith("yes")


def test_words_output_is_exactly_one_line_per_target():
    # `-o words` prints exactly `namespace/name<TAB>word` per target, nothing else on stdout.
    lines = cli_words(LAB)
    assert sorted(lines) == sorted({**LAB_WORDS, **LAB_ATTEMPT_WORDS}.items())


def test_json_output_validates_against_verdicts_schema():
    import jsonschema

    schema_path = SCHEMAS / "verdicts.schema.json"
    proc = run_cli("analyze", LAB, "-o", "json", check=True)
    whole = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(json.loads(schema_path.read_text())).validate(whole)
    doc = whole["verdicts"]
    assert {f"{d['namespace']}/{d['name']}": d["word"] for d in doc} == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}
    for d in doc:
        assert d["kind"] in ("Pod", "Attempt")


# -- the word never depends on the scheduler's message ----------------------------------------------

def _rewrite_messages(transform):
    def pods(items):
        for p in items:
            for c in p["status"].get("conditions") or ():
                if c["type"] == "PodScheduled" and "message" in c:
                    c["message"] = transform(c["message"])
        return items

    def events(items):
        for e in items:
            if e.get("reason") == "FailedScheduling":
                e["message"] = transform(e["message"])
        return items
    return {"pods": pods, "events": events}


V132_TAINT = "node(s) had untolerated taint {nvidia.com/gpu: present}"


def _v132(message: str) -> str:
    # observed.md: v1.32 names the taint and has no "no new claims to deallocate" phrase
    return (message.replace("node(s) had untolerated taint(s)", V132_TAINT)
            .replace(" no new claims to deallocate,", ""))


@pytest.mark.parametrize("transform", [
    pytest.param(lambda m: "", id="blank"),
    pytest.param(lambda m: "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector.", id="all-say-selector"),
    pytest.param(lambda m: m.replace("Insufficient nvidia.com/gpu", "node(s) had untolerated taint(s)"), id="insufficient-to-taint"),
    pytest.param(lambda m: "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.", id="all-say-insufficient"),
    pytest.param(_v132, id="v1.32-wording"),
])
def test_word_never_depends_on_scheduler_message(tmp_path, transform):
    # The word never depends on the scheduler's message: it is evidence only; its wording differs between releases.
    root = copy_lab(tmp_path, edit=_rewrite_messages(transform))
    assert words_of(root, manifests=[M41, M42]) == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}


def test_word_same_when_condition_messages_and_events_are_gone(tmp_path):
    def strip(items):
        for p in items:
            p["status"]["conditions"] = [c for c in p["status"].get("conditions") or () if c["type"] != "PodScheduled"]
        return items
    root = copy_lab(tmp_path, drop=("events",), edit={"pods": strip})
    vs = analyse_dir(root)
    assert {k: v.word for k, v in vs.items()} == LAB_WORDS
    assert vs["lab/exhausted"].to_dict()["scheduler_message"] is None


def test_v132_message_is_quoted_and_rebuilt_in_v132_style(tmp_path):
    root = copy_lab(tmp_path, edit=_rewrite_messages(_v132))
    version = json.loads((root / "version.json").read_text())
    version["serverVersion"].update({"minor": "32", "gitVersion": "v1.32.13"})
    (root / "version.json").write_text(json.dumps(version))
    v = verdict(root, "lab/taint")
    assert v.word == "untolerated-taint"
    assert V132_TAINT in v.scheduler["message"] and "claims" not in v.scheduler["message"]
    assert V132_TAINT in v.scheduler["rebuilt"]
    assert v.scheduler["comparison"].startswith("agrees")


def test_failed_scheduling_event_is_quoted_when_the_condition_has_no_message(tmp_path):
    # causes.md Evidence: the PodScheduled condition and the latest FailedScheduling event, verbatim.
    pod = set_message(gpu_pod("trainer-0", node_selector={"kubernetes.io/hostname": "gpu-ok"}), None)
    older = failed_scheduling_event(pod, "0/1 nodes are available: 1 Insufficient cpu.", at="2026-11-29T17:18:00.000000Z")
    newer = failed_scheduling_event(pod, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", at="2026-11-29T17:19:00.000000Z")
    root = make_bundle(tmp_path, pods=[pod, bound_pod("filler", "gpu-ok", gpus=4)], nodes=[lab_node("gpu-ok")],
                       events=[newer, older])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "exhausted"
    assert v.to_dict()["scheduler_message"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


# -- every word of the order at least once ------------------------------------------------------------

def _one_pod_per_word(tmp_path):
    """One realistic bundle in which each word of causes.md answers some target."""
    nodes = [
        lab_node("gpu-ok"), lab_node("gpu-noplugin"), lab_node("gpu-alloczero"), lab_node("gpu-tainted"),
        cordon(gpu_node("gpu-maint", labels={"pool": "maint"})),
        gpu_node("gpu-free", labels={"pool": "free"}),
        under(gpu_node("gpu-sick", labels={"pool": "sick"}), "MemoryPressure"),  # node-unhealthy
    ]
    pods = [
        bound_pod("filler-a", "gpu-ok", gpus=4),
        gpu_pod("want-gated", node_selector={"pool": "free"},
                schedulingGates=[{"name": "kueue.x-k8s.io/admission"}]),
        bound_pod("want-node-side", "gpu-free", gpus=1, phase="Pending"),
        gpu_pod("want-selector", node_selector={"gpu-type": "h100"}),
        gpu_pod("want-cordoned", node_selector={"pool": "maint"}),
        gpu_pod("want-taint", node_selector={"pool": "tainted"}),
        gpu_pod("want-no-gpu-node", node_selector={"kubernetes.io/hostname": "gpu-noplugin"}),
        gpu_pod("want-alloc-zero", node_selector={"kubernetes.io/hostname": "gpu-alloczero"}),
        gpu_pod("want-exhausted", node_selector={"kubernetes.io/hostname": "gpu-ok"}),
        gpu_pod("want-unclassified", node_selector={"pool": "free"}, schedulerName="volcano"),
        gpu_pod("want-fits-now", node_selector={"pool": "free"}),
        gpu_pod("want-no-gpu-request", gpus=None, node_selector={"nvidia.com/gpu.present": "true"}),
        # image-pull, volume-mount, node-runtime: bound to the cordoned node (a bound pod is past the funnel), each
        # waiting as the kubelet writes it
        _waiting(bound_pod("want-image-pull", "gpu-maint", phase="Pending"), "ImagePullBackOff",
                 'Back-off pulling image "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04": ErrImagePull: not found'),
        _waiting(bound_pod("want-volume-mount", "gpu-maint", phase="Pending"), "ContainerCreating", None),
        _waiting(bound_pod("want-node-runtime", "gpu-maint", phase="Pending"), "RunContainerError",
                 "failed to create containerd task: ... nvidia-container-cli: initialization error: nvml error: "
                 "driver not loaded: unknown"),
        # `resource-name-mismatch`: the only node it selects advertises the GPUs as nvidia.com/gpu.shared
        # (time-slicing, renamed)
        gpu_pod("want-name-mismatch", node_selector={"kubernetes.io/hostname": "gpu-shared"}),
        gpu_pod("want-node-unhealthy", node_selector={"pool": "sick"}),
        # the kubelet's Topology Manager refused it (pkg/kubelet/cm/topologymanager), before any container ran
        bound_pod("want-numa", "gpu-free", gpus=1, phase="Failed"),
    ]
    pods[-1]["status"].update(reason="TopologyAffinityError",
                              message="Pod was rejected: Resources cannot be allocated with Topology locality")
    del pods[-1]["status"]["containerStatuses"]  # rejected at admission: no container was ever created
    shared = gpu_node("gpu-shared", gpus="0", labels={"pool": "shared", "nvidia.com/gpu.sharing-strategy": "time-slicing",
                                                      "nvidia.com/gpu.replicas": "4"})
    for part in ("capacity", "allocatable"):
        shared["status"][part]["nvidia.com/gpu.shared"] = "16"
    nodes.append(shared)
    mount = {"apiVersion": "v1", "kind": "Event", "count": 3, "eventTime": None, "type": "Warning",
             "firstTimestamp": "2026-11-29T17:18:00Z", "lastTimestamp": "2026-11-29T17:20:00Z",
             "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "want-volume-mount", "namespace": "lab"},
             "message": 'MountVolume.SetUp failed for volume "data" : mount failed: exit status 32',
             "metadata": {"creationTimestamp": "2026-11-29T17:18:00Z", "name": "want-volume-mount.187c2a1f0e9b7d21",
                          "namespace": "lab", "resourceVersion": "901", "uid": "4d1c3f56-2a55-4e0b-9a6e-0c2b9c1f7e10"},
             "reason": "FailedMount", "reportingComponent": "kubelet", "reportingInstance": "gpu-maint",
             "source": {"component": "kubelet", "host": "gpu-maint"}}
    pods[1]["status"]["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": "2026-11-29T17:17:16Z",
                                        "message": "Scheduling is blocked due to non-empty scheduling gates",
                                        "reason": "SchedulingGated", "status": "False", "type": "PodScheduled"}]
    root = make_bundle(tmp_path, pods=pods, nodes=nodes, quotas=lab_items("resourcequotas"),
                       runtimeclasses=lab_items("runtimeclasses"), events=[mount])
    return root


def _waiting(pod: dict, reason: str, message: str | None) -> dict:
    state = {"reason": reason, **({"message": message} if message else {})}
    pod["status"]["containerStatuses"] = [{"image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "imageID": "",
                                           "lastState": {}, "name": "cuda", "ready": False, "restartCount": 0,
                                           "started": False, "state": {"waiting": state}}]
    return pod


def test_every_word_of_the_order_on_one_bundle(tmp_path):
    root = _one_pod_per_word(tmp_path)
    got = words_of(root, manifests=[M41, M42])
    expected = {
        "quota-lab/quota-exceeded": "quota-exceeded",
        "lab/runtimeclass-missing": "no-runtimeclass",
        "lab/want-no-gpu-request": "no-gpu-request",
        "lab/want-gated": "scheduling-gated",
        "lab/want-node-side": "node-side",
        "lab/want-selector": "selector-mismatch",
        "lab/want-cordoned": "cordoned",
        "lab/want-taint": "untolerated-taint",
        "lab/want-no-gpu-node": "no-gpu-node",
        "lab/want-alloc-zero": "allocatable-zero",
        "lab/want-exhausted": "exhausted",
        "lab/want-unclassified": "unclassified",
        "lab/want-fits-now": "fits-now",
        "lab/want-image-pull": "image-pull",
        "lab/want-volume-mount": "volume-mount",
        "lab/want-node-runtime": "node-runtime",
        "lab/want-name-mismatch": "resource-name-mismatch",
        "lab/want-node-unhealthy": "node-unhealthy",
        "lab/want-numa": "numa-unaligned",
    }
    assert got == expected
    # The claim words need the DRA files: tests/test_dra_rules.py covers them on the recorded DRA bundles; the queue
    # words need Kueue's files (tests/test_queues.py); the autoscalers' words their events and objects
    # (tests/test_autoscalers.py), each on its recorded bundles.
    assert set(got.values()) == set(w for w in ORDER_WORDS if w in DECIDED) - {
        "no-resourceclaim", "no-deviceclass", "device-selector-mismatch", "queue-misconfigured", "queue-quota",
        "queue-topology",  # tests/test_queue_topology.py, on the recorded Kueue bundle with a Topology added
        "scaling-up", "scale-up-blocked",
        "no-scheduler",  # tests/test_schedulers.py, beside the scheduler pods it recognises
        # the volume and inter-pod words need claims and neighbours: tests/test_filters_*.py, on their recordings
        "no-volumeclaim", "volume-unbound", "volume-node-conflict", "pod-affinity", "topology-spread",
        # the other admission words need LimitRanges, webhooks or a recorded refusal: tests/test_admission_rows.py
        "invalid-spec", "limit-range", "admission-denied", "admission-unavailable"}


def test_scheduling_gated_wins_over_a_full_cluster(tmp_path):
    # causes.md `scheduling-gated` comes before the funnel: a gated pod is not considered by the scheduler at all.
    pod = gpu_pod("gated", gpus=8, node_selector={"kubernetes.io/hostname": "gpu-ok"},
                  schedulingGates=[{"name": "example.com/quota-check"}])
    root = make_bundle(tmp_path, pods=[pod], nodes=[lab_node("gpu-ok")])
    v = verdict(root, "lab/gated")
    assert v.word == "scheduling-gated"
    assert v.evidence["schedulingGates"] == ["example.com/quota-check"]
    assert v.funnel is None


def test_node_side_wins_over_a_selector_that_no_longer_matches(tmp_path):
    # `node-side`: scheduling is done (spec.nodeName set); the node's labels changing since does not matter.
    pod = bound_pod("bound", "gpu-ok", phase="Pending")
    pod["spec"]["nodeSelector"] = {"gpu-type": "h100"}
    pod["status"]["containerStatuses"] = [{"image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "imageID": "",
                                           "lastState": {}, "name": "cuda", "ready": False, "restartCount": 0,
                                           "started": False, "state": {"waiting": {"reason": "ContainerCreating"}}}]
    root = make_bundle(tmp_path, pods=[pod], nodes=[lab_node("gpu-ok")])
    v = verdict(root, "lab/bound")
    assert v.word == "node-side"
    assert v.evidence["nodeName"] == "gpu-ok"
    assert v.evidence["waiting"][0]["reason"] == "ContainerCreating"


# -- unclassified: something not modelled, on a pod that otherwise fits ----------------------------------

UNMODELLED = {
    "pvc": dict(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}]),
    "pod-anti-affinity": dict(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "trainer"}}, "topologyKey": "kubernetes.io/hostname"}]}}),
    "topology-spread": dict(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                        "whenUnsatisfiable": "DoNotSchedule",
                                                        "labelSelector": {"matchLabels": {"app": "trainer"}}}]),
    "scheduler-name": dict(schedulerName="volcano"),
}


def test_unclassified_when_the_pod_depends_on_a_scheduler_nobody_models(tmp_path):
    # causes.md `unclassified`: a non-default schedulerName no queue row covers. The funnel says some node fits; the
    # word must not claim fits-now. observed.md: such a pod has no PodScheduled condition and no events.
    # With the scheduler running (Volcano's own pod, as its chart ships it); without it the pod is no-scheduler
    # (causes.md, schedulers.md).
    pod = gpu_pod("trainer-0", **UNMODELLED["scheduler-name"])
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    volcano = bound_pod("volcano-scheduler-0", "gpu-free", gpus=None)
    volcano["metadata"]["labels"] = {"app": "volcano-scheduler"}
    volcano["spec"]["containers"][0]["image"] = "docker.io/volcanosh/vc-scheduler:v1.12.1"
    assert verdict(make_bundle(tmp_path, name="alone", pods=[pod], nodes=[gpu_node("gpu-free")]),
                   "lab/trainer-0").word == "no-scheduler"
    root = make_bundle(tmp_path, pods=[pod, volcano], nodes=[gpu_node("gpu-free")])
    v = verdict(root, "lab/trainer-0")
    assert v.word == "unclassified"
    assert v.evidence["fits_on"] == ["gpu-free"]
    assert v.evidence["not_modelled"]


@pytest.mark.parametrize("case, word", [
    ("pvc", "insufficient-evidence"),  # the bundle has no persistentvolumeclaims.json: named, not guessed
    ("pod-anti-affinity", "fits-now"),  # no pod matches the term anywhere
    ("topology-spread", "topology-spread"),  # the only node lacks the zone label (missing required label)
    ("host-port", "fits-now"),  # no pod holds the port
])
def test_volumes_inter_pod_rules_spread_and_ports_are_modelled_now(tmp_path, case, word):
    # causes.md: every default scheduler filter is modelled; these are no longer `unclassified`.
    pod = gpu_pod("trainer-0", **UNMODELLED.get(case, {}))
    if case == "host-port":
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    root = make_bundle(tmp_path, pods=[pod], nodes=[gpu_node("gpu-free")])
    v = verdict(root, "lab/trainer-0")
    assert v.word == word
    if word == "insufficient-evidence":
        assert v.evidence["missing"] == "persistentvolumeclaims.json"


@pytest.mark.parametrize("spec", [
    dict(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                     "whenUnsatisfiable": "ScheduleAnyway",
                                     "labelSelector": {"matchLabels": {"app": "trainer"}}}]),
    dict(affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "trainer"}},
                                            "topologyKey": "kubernetes.io/hostname"}}]}}),
    dict(schedulerName="default-scheduler"),
], ids=["spread-ScheduleAnyway", "preferred-anti-affinity", "default-scheduler"])
def test_soft_constraints_are_not_unmodelled_dependencies(tmp_path, spec):
    root = make_bundle(tmp_path, pods=[gpu_pod("trainer-0", **spec)], nodes=[gpu_node("gpu-free")])
    assert verdict(root, "lab/trainer-0").word == "fits-now"


def test_unclassified_needs_every_rule_above_to_fail_first(tmp_path):
    # A scheduler nobody models does not hide a full node: exhausted comes before unclassified.
    pod = gpu_pod("trainer-0", node_selector={"kubernetes.io/hostname": "gpu-ok"}, **UNMODELLED["scheduler-name"])
    root = make_bundle(tmp_path, pods=[pod, bound_pod("filler", "gpu-ok", gpus=4)], nodes=[lab_node("gpu-ok")])
    assert verdict(root, "lab/trainer-0").word == "exhausted"


# -- fits-now: a stale message ---------------------------------------------------------------------------

def test_fits_now_when_capacity_freed_after_the_scheduler_spoke(tmp_path):
    # observed.md: if the scheduler is not running when capacity frees up, the pod keeps its old
    # `Insufficient …` condition while the bundle shows a free node. filler-a has since finished.
    def finish_filler_a(items):
        for p in items:
            if p["metadata"]["name"] == "filler-a":
                p["status"]["phase"] = "Succeeded"
        return items
    root = copy_lab(tmp_path, edit={"pods": finish_filler_a})
    v = verdict(root, "lab/exhausted")
    assert v.word == "fits-now"
    assert "Insufficient nvidia.com/gpu" in v.scheduler["message"]
    assert v.evidence["fits_on"] == ["gpu-ok"]
    assert v.scheduler["comparison"].startswith("differs")


# -- insufficient-evidence ---------------------------------------------------------------------------

def test_bundle_without_nodes_json_names_the_file(tmp_path):
    root = copy_lab(tmp_path, drop=("nodes",))
    vs = analyse_dir(root)
    for key in ("lab/exhausted", "lab/no-gpu-node", "lab/allocatable-zero", "lab/taint", "lab/selector-mismatch"):
        assert vs[key].word == "insufficient-evidence", key
        assert vs[key].evidence["missing"] == "nodes.json"
        assert "nodes.json" in vs[key].reason
    # rules above the funnel need no nodes: they still answer
    assert vs["lab/filler-b"].word == "node-side"
    assert vs["lab/no-gpu-request"].word == "no-gpu-request"


def test_bundle_without_nodes_json_via_cli(tmp_path):
    root = copy_lab(tmp_path, drop=("nodes",))
    # exit 2: the bundle is partial (cli.py); what can be answered is still printed, one line per target
    lines = dict(cli_words(root, status=2))
    assert lines["lab/exhausted"] == "insufficient-evidence"
    assert len(lines) == len(LAB_WORDS)


def test_attempt_with_runtimeclass_and_no_runtimeclasses_json_names_the_file(tmp_path):
    root = copy_lab(tmp_path, drop=("runtimeclasses",))
    v = analyse_dir(root, manifests=[M42])["lab/runtimeclass-missing"]
    assert v.word == "insufficient-evidence"
    assert v.evidence["admission"]["missing"] == "runtimeclasses.json"
    assert "runtimeclasses.json" in v.reason


def test_bundle_without_runtimeclasses_json_answers_existing_pods_normally(tmp_path):
    # Existing pods passed admission already: the RuntimeClass list is not needed for them.
    root = copy_lab(tmp_path, drop=("runtimeclasses",))
    assert words_of(root) == LAB_WORDS
    # and an attempt that names no RuntimeClass is still judged (quota from the objects)
    assert words_of(root, manifests=[M41])["quota-lab/quota-exceeded"] == "quota-exceeded"


def test_stored_runtimeclass_refusal_decides_when_runtimeclasses_json_is_missing(tmp_path):
    # causes.md: "When only the text exists, the text decides."
    root = copy_lab(tmp_path, drop=("runtimeclasses",), attempts=True)
    v = verdict(root, "lab/runtimeclass-missing")
    assert v.word == "no-runtimeclass"
    assert v.evidence["admission"]["agrees"].startswith("decided by the API server's text")


def test_sealed_copy_answers_the_same(tmp_path):
    # A copy with a manifest.json written by scripts/seal_bundle.py is a complete bundle: exit 0, same words.
    root = copy_lab(tmp_path, attempts=True)
    subprocess.run([sys.executable, str(REPO / "scripts" / "seal_bundle.py"), str(root)], check=True, capture_output=True)
    assert (root / "manifest.json").exists()
    assert dict(cli_words(root)) == {**LAB_WORDS, **LAB_ATTEMPT_WORDS}


def test_verdicts_schema_names_exactly_the_words_and_stages():
    from analyzer import words
    from analyzer.rules.funnel import STAGES

    text = (SCHEMAS / "verdicts.schema.json").read_text()
    enums = [e for e in _enums(json.loads(text))]
    assert list(words.VOCABULARY) in enums
    assert [s.name for s in STAGES] in enums


def _enums(node):
    if isinstance(node, dict):
        if "enum" in node:
            yield node["enum"]
        for v in node.values():
            yield from _enums(v)
    elif isinstance(node, list):
        for v in node:
            yield from _enums(v)


def test_a_pod_with_claims_in_a_bundle_without_the_dra_files_is_insufficient_evidence(tmp_path):
    # causes.md "When the bundle cannot decide": an older collector, or a cluster that does not serve resource.k8s.io.
    pod = gpu_pod("trainer-0", gpus=None, resourceClaims=[{"name": "nic", "resourceClaimTemplateName": "rdma-nic"}])
    v = verdict(make_bundle(tmp_path, pods=[pod], nodes=[lab_node("gpu-ok")]), "lab/trainer-0")
    assert v.word == "insufficient-evidence"
    assert v.evidence["missing"] == "resourceclaims.json"
    assert "resourceclaims.json is not in the bundle" in v.reason
