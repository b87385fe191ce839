"""queue-topology and the StrictFIFO head of line (causes.md, queues.md), on the real Kueue v0.19.2 recording
quota-exhausted-now-v1.36 with what a case needs added: a Topology, the flavor's topologyName, the nodes' level
labels, a bigger pod set. Kueue's rules and texts: pkg/cache/scheduler/tas_flavor_snapshot.go (notFitMessage,
findLevelWithFitDomains), pkg/scheduler/flavorassigner/tas_flavorassigner.go, pkg/cache/queue/cluster_queue.go
(StrictFIFO), and test/integration/singlecluster/tas/tas_test.go (a missing Topology: TopologyNotFound)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from helpers import SCHEMAS, run_cli
from test_queues import CQ, PENDING, QUOTA, RF, WL, copy, edit, pending_workload, verdicts

from analyzer import words as w

TOPO = "topologies.kueue.x-k8s.io.json"
BLOCK, RACK, HOST = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", "kubernetes.io/hostname"
RACKS = {"dgx-a100-01": "r1", "dgx-a100-02": "r2"}
SAID = "couldn't assign flavors to pod set main: topology \"gpu-topology\" allows to fit only 1 out of 2 pod(s)"


def _gpu_quota(items: list, gpus: str) -> None:
    for r in items[0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
        if r["name"] == "nvidia.com/gpu":
            r["nominalQuota"] = gpus


def _topology(root: Path, levels: list[str] | None = None) -> None:
    levels = [BLOCK, RACK, HOST] if levels is None else levels
    (root / TOPO).write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "gpu-topology"},
         "spec": {"levels": [{"nodeLabel": label} for label in levels]}}]}, indent=4))


def _racks(items: list) -> None:
    for node in items:
        if node["metadata"]["name"] in RACKS:
            node["metadata"]["labels"].update({BLOCK: "b1", RACK: RACKS[node["metadata"]["name"]]})


def _two_pods(items: list, mode: str = "required", level: str = RACK, said: str = SAID) -> None:
    wl = pending_workload(items)
    wl["spec"]["podSets"][0].update(count=2, topologyRequest={mode: level})
    wl["status"]["conditions"][0]["message"] = said


def tas(tmp_path: Path, *, gpus: str = "16", mode: str = "required", level: str = RACK) -> Path:
    """Two racks of one DGX each, 4 of 8 GPUs taken on each; the pod set asks 2 pods of 4 GPUs in one rack."""
    root = copy(tmp_path)
    _topology(root)
    edit(root, RF, lambda items: items[0]["spec"].update(topologyName="gpu-topology"))
    edit(root, CQ, lambda items: _gpu_quota(items, gpus))
    edit(root, "nodes.json", _racks)
    edit(root, WL, lambda items: _two_pods(items, mode, level))
    return root


# -- queue-topology ---------------------------------------------------------------------------------------------

def test_required_rack_no_rack_holds_the_pod_set_names_the_best_rack_and_what_it_lacks(tmp_path):
    v = verdicts(tas(tmp_path))[PENDING]
    assert v.word == w.QUEUE_TOPOLOGY
    assert f"{RACK}=r1" in v.reason and "4 nvidia.com/gpu" in v.reason and "gpu-topology" in v.reason
    q, t = v.evidence["queue"], v.evidence["topology"]
    assert q["rebuilt"] == q["kueue_said"]["message"] == SAID and q["agrees"] is True
    assert t["best"] == {"domain": f"{RACK}=r1", "within": [f"{BLOCK}=b1"], "holds": 1, "nodes": 1}
    assert t["next"] == [{"domain": f"{RACK}=r2", "within": [f"{BLOCK}=b1"], "holds": 1, "nodes": 1}]
    assert t["lacks"] == {"nvidia.com/gpu": "4"} and t["domains"] == 2


def test_required_block_holds_both_pods_so_the_topology_is_not_the_cause(tmp_path):
    root = tas(tmp_path, level=BLOCK)
    assert verdicts(root)[PENDING].word not in (w.QUEUE_TOPOLOGY, w.QUEUE_QUOTA)


def test_a_preferred_topology_never_refuses(tmp_path):
    assert verdicts(tas(tmp_path, mode="preferred"))[PENDING].word != w.QUEUE_TOPOLOGY


def test_quota_short_is_still_queue_quota_with_a_topology(tmp_path):
    v = verdicts(tas(tmp_path, gpus="8"))[PENDING]
    assert v.word == w.QUEUE_QUOTA and "insufficient unused quota for nvidia.com/gpu" in v.reason


def test_node_taint_excludes_a_host_and_kueue_counts_it(tmp_path):
    root = tas(tmp_path, level=BLOCK)
    edit(root, "nodes.json", lambda items: next(n for n in items if n["metadata"]["name"] == "dgx-a100-02")["spec"]
         .update(taints=[{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_TOPOLOGY
    assert v.evidence["queue"]["rebuilt"].endswith(
        "allows to fit only 1 out of 2 pod(s). Total nodes: 2; excluded: taint \"maintenance=true:NoSchedule\": 1")


def test_why_explain_reads_as_sentences_naming_the_domain(tmp_path):
    r = run_cli("why", tas(tmp_path), PENDING, "--explain", check=True)
    assert "queue-topology" in r.stdout and f"{RACK}=r1" in r.stdout
    assert "{" not in r.stdout and "True" not in r.stdout


# -- bad input: a finding or an answer, never a traceback --------------------------------------------------------

def test_flavor_naming_a_missing_topology_makes_the_clusterqueue_inactive(tmp_path):
    root = tas(tmp_path)
    _topology(root)
    edit(root, TOPO, lambda items: items[0]["metadata"].update(name="other"))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED
    assert v.reason.endswith('Can\'t admit new workloads: there is no Topology "gpu-topology" for TAS flavor "a100".')


def test_topology_with_no_levels_is_an_answer(tmp_path):
    root = tas(tmp_path)
    _topology(root, levels=[])
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED and "no levels" in v.reason


def test_level_label_on_no_node_is_an_answer_naming_the_label(tmp_path):
    root = tas(tmp_path)
    _topology(root, levels=["example.com/pod-slice", HOST])
    edit(root, WL, lambda items: pending_workload(items)["spec"]["podSets"][0].update(
        topologyRequest={"required": "example.com/pod-slice"}))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_TOPOLOGY and "example.com/pod-slice" in v.reason
    assert v.evidence["topology"]["left_out"] == {"no label example.com/pod-slice": 2}


def test_requested_level_the_topology_lacks(tmp_path):
    root = tas(tmp_path, level="example.com/zone")
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED and "example.com/zone" in v.reason


def test_a_topology_asked_of_a_queue_without_a_tas_flavor(tmp_path):
    root = tas(tmp_path)
    edit(root, RF, lambda items: items[0]["spec"].pop("topologyName"))
    v = verdicts(root)[PENDING]
    assert v.word == w.QUEUE_MISCONFIGURED and "gpu-cluster-queue" in v.reason
    assert v.evidence["queue"]["rebuilt"].endswith('Flavor "a100" does not support TopologyAwareScheduling')


def test_bundle_without_topologies_names_the_file(tmp_path):
    root = tas(tmp_path)
    (root / TOPO).unlink()
    v = verdicts(root)[PENDING]
    assert v.word == w.SCHEDULING_GATED and TOPO in v.reason


# -- head of line ----------------------------------------------------------------------------------------------

SMALL = "team-a/eval-resnet50"


def _small_behind(root: Path, strategy: str) -> None:
    """A second bare pod of 4 GPUs, created after the pending one; its Workload never tried (no conditions)."""
    pods = json.loads((root / "pods.json").read_text())
    pod = json.loads(json.dumps(next(p for p in pods["items"] if p["metadata"]["name"] == "train-resnet50")))
    pod["metadata"].update(name="eval-resnet50", uid="0f3c9d1e-5a7b-4c2d-9e8f-1a2b3c4d5e6f",
                           creationTimestamp="2026-12-01T22:40:00Z")
    pods["items"].append(pod)
    (root / "pods.json").write_text(json.dumps(pods, indent=4))

    def add(items):
        head = pending_workload(items)
        head["spec"]["podSets"][0]["count"] = 2
        head["status"]["conditions"][0]["message"] = (
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
            "4 more needed")
        small = json.loads(json.dumps(head))
        small["metadata"].update(name="pod-eval-resnet50-3c1f0", uid="6d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6",
                                 creationTimestamp="2026-12-01T22:40:01Z",
                                 ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "eval-resnet50",
                                                   "uid": pod["metadata"]["uid"]}])
        small["spec"]["podSets"][0]["count"] = 1
        small["status"] = {}
        items.append(small)
    edit(root, WL, add)

    def queue(items):
        items[0]["spec"]["queueingStrategy"] = strategy
        _gpu_quota(items, "12")
    edit(root, CQ, queue)


def test_strict_fifo_head_that_does_not_fit_blocks_a_smaller_one_behind_it(tmp_path):
    root = copy(tmp_path)
    _small_behind(root, "StrictFIFO")
    got = verdicts(root)
    assert got[PENDING].word == w.QUEUE_QUOTA and "head_of_line" not in got[PENDING].evidence
    v = got[SMALL]
    assert v.word == w.QUEUE_QUOTA
    head = v.evidence["head_of_line"]
    assert head["head"].startswith("team-a/pod-train-resnet50") and head["head"] in v.reason
    assert "insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed" in head["waits_for"]


def test_strict_fifo_head_refused_by_the_topology_blocks_too(tmp_path):
    root = tas(tmp_path)
    _small_behind(root, "StrictFIFO")
    edit(root, CQ, lambda items: _gpu_quota(items, "20"))  # quota for both: only the head's topology refuses
    got = verdicts(root)
    assert got[PENDING].word == w.QUEUE_TOPOLOGY
    v = got[SMALL]
    assert v.word == w.QUEUE_QUOTA
    assert v.evidence["head_of_line"]["waits_for"] == SAID


def test_best_effort_fifo_lets_the_smaller_one_past(tmp_path):
    root = copy(tmp_path)
    _small_behind(root, "BestEffortFIFO")
    assert verdicts(root)[SMALL].word != w.QUEUE_QUOTA


def test_head_of_line_on_the_recording_itself_is_unchanged():
    v = verdicts(QUOTA)[PENDING]
    assert v.word == w.QUEUE_QUOTA and "head_of_line" not in v.evidence and "topology" not in v.evidence


def test_hostile_topology_and_request_are_findings_not_tracebacks(tmp_path):
    root = tas(tmp_path)
    edit(root, TOPO, lambda items: items[0]["spec"].update(levels="rack"))
    r = run_cli("analyze", root, "-o", "words")
    # A finding naming the file, exit status 2 (partly invalid), and still an answer: the Topology as if missing.
    assert r.returncode == 2 and "Traceback" not in r.stderr and TOPO in r.stderr
    assert f"{PENDING}\t{w.QUEUE_MISCONFIGURED}" in r.stdout
    root = tas(tmp_path / "again")
    edit(root, WL, lambda items: pending_workload(items)["spec"]["podSets"][0].update(topologyRequest={"required": 5}))
    r = run_cli("analyze", root, "-o", "words")
    assert r.returncode == 2 and "Traceback" not in r.stderr and WL in r.stderr


def test_json_output_keeps_to_the_verdicts_schema(tmp_path):
    root = tas(tmp_path)
    _small_behind(root, "StrictFIFO")
    doc = json.loads(run_cli("analyze", root, "-o", "json").stdout)
    jsonschema.Draft202012Validator(json.loads((SCHEMAS / "verdicts.schema.json").read_text())).validate(doc)
    words = {v["namespace"] + "/" + v["name"]: v["word"] for v in doc["verdicts"]}
    assert words[SMALL] == w.QUEUE_QUOTA
