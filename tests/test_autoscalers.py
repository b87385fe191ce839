"""`scaling-up` and `scale-up-blocked` (causes.md, autoscalers.md), refining the funnel's word.

Every fixture is one of two real recordings (tests/data/recordings: a v1.36.2 control plane with cluster-autoscaler
1.36's events and status ConfigMap, and with Karpenter v1.14's objects and events, written as their sources write
them), copied and changed only where a case needs: an event's reason, message or time, a node group's status, a
NodeClaim's conditions. The texts are the components' own:
- cluster-autoscaler: processors/status/eventing_scale_up_processor.go (TriggeredScaleUp "pod triggered scale-up:
  [{group cur->new (max: n)}]", NotTriggerScaleUp "pod didn't trigger scale-up: <n> <reason>, …"),
  core/scaleup/orchestrator/skippedreasons.go ("max node group size reached", "in backoff after failed scale-up"),
  clusterstate/api/types.go (the status YAML), clusterstate/clusterstate.go (ScaleUpFailed);
- Karpenter: pkg/controllers/provisioning/scheduling/events.go ("Pod should schedule on: nodeclaim/<name>",
  "Failed to schedule pod, <err>"), scheduler.go ("all available instance types exceed limits for nodepool"),
  nodeclaim.go ("no instance type has enough resources, requirements=…, resources=…"),
  pkg/controllers/nodeclaim/lifecycle/registration.go and initialization.go (NodeNotFound "Node not registered
  with cluster"; ResourceNotRegistered "Resource \"nvidia.com/gpu\" was requested but not registered").
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import LAB, RECORDINGS, REPO, assert_clean_failure, run_cli

from analyzer import words
from analyzer.pipeline import Options, analyse

CA = RECORDINGS / "ca-scale-up-in-flight-v1.36"
KARPENTER = RECORDINGS / "karpenter-nodepool-limits-v1.36"
CA_POD = ("ml", "embed-corpus-rwtjk")
K_POD = ("ml", "finetune-sdxl-wmpg4")
GROUP = "eks-gpu-a10g-7cc9e2b1-41d8-b3f2-5e07-9a1f6c2d8e43"
STATUS = "configmaps.cluster-autoscaler-status.json"


class Bundle:
    """A writable copy of a recording, with helpers to change exactly what a case needs."""

    def __init__(self, tmp: Path, src: Path) -> None:
        self.root = tmp / src.name
        shutil.copytree(src, self.root)

    def load(self, name: str) -> dict:
        return json.loads((self.root / name).read_text())

    def save(self, name: str, doc: dict) -> None:
        (self.root / name).write_text(json.dumps(doc, indent=4) + "\n")

    def event(self, reason: str, pod: tuple[str, str] = CA_POD) -> dict:
        return next(e for e in self.load("events.json")["items"]
                    if e["reason"] == reason and (e["involvedObject"]["namespace"], e["involvedObject"]["name"]) == pod)

    def set_events(self, pod: tuple[str, str], keep: set[str], *extra: dict) -> None:
        """The pod's events: those of the reasons in `keep`, then `extra`."""
        doc = self.load("events.json")
        doc["items"] = [e for e in doc["items"] if (e["involvedObject"].get("namespace"), e["involvedObject"]["name"])
                        != pod or e["reason"] in keep] + list(extra)
        self.save("events.json", doc)

    def status(self) -> dict:
        return yaml.safe_load(self.load(STATUS)["items"][0]["data"]["status"])

    def set_status(self, status: dict | str) -> None:
        doc = self.load(STATUS)
        doc["items"][0]["data"]["status"] = status if isinstance(status, str) else yaml.safe_dump(status)
        self.save(STATUS, doc)

    def group(self, **changes: object) -> None:
        st = self.status()
        g = next(g for g in st["nodeGroups"] if g["name"] == GROUP)
        for path, value in changes.items():
            where, key = path.split("__")
            g[where][key] = value
        self.set_status(st)

    def verdict(self, pod: tuple[str, str]):
        a = analyse(self.root, Options())
        return next(v for v in a.verdicts if (v.target.namespace, v.target.name) == pod), a


def ca_event(b: Bundle, reason: str, message: str, at: str) -> dict:
    """A cluster-autoscaler event on the pod, shaped as the recorded TriggeredScaleUp (core/v1, whole seconds)."""
    e = copy.deepcopy(b.event("TriggeredScaleUp"))
    e.update(reason=reason, message=message, firstTimestamp=at, lastTimestamp=at)
    e["metadata"].update(name=f"{CA_POD[1]}.{reason.lower()}", uid=f"uid-{reason}")
    return e


def karpenter_event(b: Bundle, reason: str, message: str, at: str) -> dict:
    e = next(x for x in b.load("events.json")["items"] if x["involvedObject"]["name"] == K_POD[1]
             and x.get("reportingComponent") == "karpenter")
    e = copy.deepcopy(e)
    e.update(reason=reason, message=message, firstTimestamp=at, lastTimestamp=at,
             type="Normal" if reason == "Nominated" else "Warning")
    e["metadata"].update(name=f"{K_POD[1]}.{reason.lower()}", uid=f"uid-{reason}")
    return e


def nodeclaim(b: Bundle, name: str, conditions: list[dict], node: str | None = None) -> None:
    """A second NodeClaim of NodePool gpu, from the recorded one, launched for the pod."""
    doc = b.load("nodeclaims.karpenter.sh.json")
    nc = copy.deepcopy(doc["items"][0])
    nc["metadata"].update(name=name, uid=f"uid-{name}", creationTimestamp="2026-12-01T23:00:07Z")
    nc["status"]["conditions"] = conditions
    nc["status"].pop("nodeName", None)
    if node:
        nc["status"]["nodeName"] = node
    doc["items"].append(nc)
    b.save("nodeclaims.karpenter.sh.json", doc)


def nominate(b: Bundle, claim: str) -> None:
    """The pod's events: the scheduler's failure, then Karpenter's nomination of the claim (its refusal gone)."""
    nominated = karpenter_event(b, "Nominated", f"Pod should schedule on: nodeclaim/{claim}", "2026-12-01T23:00:07Z")
    doc = b.load("events.json")
    doc["items"] = [e for e in doc["items"] if e["involvedObject"]["name"] != K_POD[1]
                    or (e["reason"] == "FailedScheduling" and e.get("reportingComponent") != "karpenter")] + [nominated]
    b.save("events.json", doc)


def cond(kind: str, status: str, reason: str, message: str = "") -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-12-01T23:00:08Z", "observedGeneration": 1}


# ---- the two recordings, as recorded -------------------------------------------------------------------------

def test_ca_scale_up_in_flight_is_scaling_up(tmp_path: Path) -> None:
    v, _ = Bundle(tmp_path, CA).verdict(CA_POD)
    assert v.word == words.SCALING_UP
    assert GROUP in v.reason and "1->2 (max 4)" in v.reason and "without a new node: exhausted" in v.reason
    ev = v.evidence["autoscaler"]
    assert ev["said"]["reason"] == "TriggeredScaleUp" and ev["said"]["source"].startswith("events.json $.items[")
    assert ev["status"][0]["scale_up"] == "InProgress" and ev["status"][0]["target"] == 2
    assert v.evidence["without_new_node"] == words.EXHAUSTED
    assert v.fit is not None  # the funnel's own evidence is kept beneath the refined word


def test_karpenter_nodepool_limits_reached_is_scale_up_blocked(tmp_path: Path) -> None:
    """The NodePool confirms Karpenter's event: usage 8 + this pod's 4 > limit 8 nvidia.com/gpu."""
    v, _ = Bundle(tmp_path, KARPENTER).verdict(K_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    assert "all available instance types exceed limits for nodepool" in v.reason
    assert "NodePool gpu nvidia.com/gpu: limit 8, in use 8, this pod asks 4" in v.reason
    assert v.evidence["autoscaler"]["nodepools"][0]["over"] == ["nvidia.com/gpu"]
    # Karpenter's FailedScheduling is newer, but it is never quoted as the scheduler's message.
    assert "Failed to schedule pod" not in json.dumps(v.scheduler)


# ---- cluster-autoscaler --------------------------------------------------------------------------------------

def test_ca_at_the_groups_max_size_is_blocked(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    b.set_events(CA_POD, {"FailedScheduling"}, ca_event(b, "NotTriggerScaleUp",
                 "pod didn't trigger scale-up: 1 max node group size reached", "2026-12-01T22:53:34Z"))
    b.group(health__cloudProviderTarget=4, health__maxSize=4, scaleUp__status="NoActivity")
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    assert "max node group size reached" in v.reason and v.reason.endswith("without a new node: exhausted")
    assert v.evidence["autoscaler"]["status"][0]["name"] == GROUP  # the group at its max confirms it


def test_ca_group_template_without_the_gpu_is_blocked(tmp_path: Path) -> None:
    """Cluster API scale-from-zero with gpu-count but no gpu-type: the group's template has no GPU, so the
    simulated node fails `Insufficient nvidia.com/gpu` (reasons in Go-map order: compared as a set)."""
    b = Bundle(tmp_path, CA)
    msg = "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, 1 Insufficient nvidia.com/gpu"
    b.set_events(CA_POD, {"FailedScheduling"}, ca_event(b, "NotTriggerScaleUp", msg, "2026-12-01T22:53:34Z"))
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    ev = v.evidence["autoscaler"]
    assert ev["reasons"] == ["Insufficient nvidia.com/gpu", "node(s) didn't match Pod's node affinity/selector"]
    assert "gpu-count and gpu-type" in ev["template"]


@pytest.mark.parametrize("event", ["NotTriggerScaleUp", "TriggeredScaleUp"])
def test_ca_in_backoff_after_a_failed_scale_up_is_blocked(tmp_path: Path, event: str) -> None:
    """The group's status says Backoff with the cloud's error (ScaleUpFailed): whether the pod's latest event is
    the refusal or the scale-up that then failed."""
    b = Bundle(tmp_path, CA)
    failed = copy.deepcopy(next(e for e in b.load("events.json")["items"] if e["reason"] == "ScaledUpGroup"))
    failed.update(reason="ScaleUpFailed", type="Warning", firstTimestamp="2026-12-01T22:53:39Z",
                  lastTimestamp="2026-12-01T22:53:39Z",
                  message=f"Failed adding 1 nodes to group {GROUP} due to InsufficientInstanceCapacity; source errors: "
                          "We currently do not have sufficient g5.xlarge capacity")
    failed["metadata"]["name"] += "-failed"
    b.set_events(("kube-system", "cluster-autoscaler-status"), set(), failed)
    if event == "NotTriggerScaleUp":
        b.set_events(CA_POD, {"FailedScheduling"}, ca_event(b, event,
                     "pod didn't trigger scale-up: 1 in backoff after failed scale-up", "2026-12-01T22:53:40Z"))
    b.group(scaleUp__status="Backoff", health__cloudProviderTarget=1,
            scaleUp__backoffInfo={"errorCode": "InsufficientInstanceCapacity",
                                  "errorMessage": "We currently do not have sufficient g5.xlarge capacity"})
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALE_UP_BLOCKED
    assert v.evidence["autoscaler"]["status"][0]["backoff"].startswith("InsufficientInstanceCapacity: We currently")
    assert v.evidence["autoscaler"]["scale_up_failed"][0]["message"].startswith(f"Failed adding 1 nodes to group {GROUP}")


def test_an_old_triggered_scale_up_then_a_newer_scheduler_failure_and_nothing_in_flight(tmp_path: Path) -> None:
    """Newest fact wins: the scale-up is history (the group finished, the scheduler failed again): exhausted."""
    b = Bundle(tmp_path, CA)
    later = copy.deepcopy(b.event("FailedScheduling"))
    later["eventTime"] = "2026-12-01T22:58:02.118000Z"
    later["metadata"]["name"] += "-later"
    b.set_events(CA_POD, {"TriggeredScaleUp"}, later)
    b.group(scaleUp__status="NoActivity", health__nodeCounts={"registered": {"total": 2, "ready": 2}, "unregistered": 0})
    v, _ = b.verdict(CA_POD)
    assert v.word == words.EXHAUSTED
    note = v.evidence["autoscaler"]["note"]
    assert "scale-up" in note and "is over: the scheduler failed again later" in note
    # The same event while the group is still InProgress: the status says it is current.
    b.group(scaleUp__status="InProgress")
    assert b.verdict(CA_POD)[0].word == words.SCALING_UP


def test_a_tie_at_whole_seconds_counts_the_autoscalers_event_as_later(tmp_path: Path) -> None:
    """The scheduler at 22:53:34.9 (microseconds), cluster-autoscaler at 22:53:34 (seconds): the autoscaler
    reacted to it. With no status to confirm, the event decides."""
    b = Bundle(tmp_path, CA)
    sched = copy.deepcopy(b.event("FailedScheduling"))
    sched["eventTime"] = "2026-12-01T22:53:34.900000Z"
    b.set_events(CA_POD, {"TriggeredScaleUp"}, sched)
    (b.root / STATUS).unlink()
    assert b.verdict(CA_POD)[0].word == words.SCALING_UP
    sched["eventTime"] = "2026-12-01T22:53:35.000001Z"
    b.set_events(CA_POD, {"TriggeredScaleUp"}, sched)
    assert b.verdict(CA_POD)[0].word == words.EXHAUSTED


def test_a_wrong_selector_stays_selector_mismatch_while_the_autoscaler_refuses(tmp_path: Path) -> None:
    """`scale-up-blocked` refines only the capacity words: fixing the selector is the pod owner's action."""
    b = Bundle(tmp_path, CA)
    pods = b.load("pods.json")
    pod = next(p for p in pods["items"] if p["metadata"]["name"] == CA_POD[1])
    pod["spec"]["nodeSelector"] = {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    b.save("pods.json", pods)
    msg = "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector"
    b.set_events(CA_POD, {"FailedScheduling"}, ca_event(b, "NotTriggerScaleUp", msg, "2026-12-01T22:53:34Z"))
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SELECTOR_MISMATCH
    ev = v.evidence["autoscaler"]
    assert ev["finding"] == "blocked" and "the pod's own to fix" in ev["note"] and msg in ev["note"]


def test_scaling_up_refines_any_funnel_word(tmp_path: Path) -> None:
    """`scaling-up`: the autoscaler simulated the filters on the new node and the pod fits there."""
    b = Bundle(tmp_path, CA)
    pods = b.load("pods.json")
    pod = next(p for p in pods["items"] if p["metadata"]["name"] == CA_POD[1])
    pod["spec"]["tolerations"] = pod["spec"]["tolerations"][1:]  # no toleration for the GPU taint
    b.save("pods.json", pods)
    nodes = b.load("nodes.json")
    for n in nodes["items"]:
        if "nvidia.com/gpu" in n["status"].get("capacity", {}):
            n["spec"]["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    b.save("nodes.json", nodes)
    v, _ = b.verdict(CA_POD)
    assert v.word == words.SCALING_UP and v.reason.endswith("without a new node: untolerated-taint")


# ---- Karpenter -----------------------------------------------------------------------------------------------

def test_a_karpenter_nodeclaim_launching_is_scaling_up(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nodeclaim(b, "gpu-x7k2p", [cond("Launched", "True", "Launched"),
                               cond("Registered", "Unknown", "NodeNotFound", "Node not registered with cluster")])
    nominate(b, "gpu-x7k2p")
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALING_UP
    assert "NodeClaim gpu-x7k2p (NodePool gpu, g5.12xlarge, Registered Unknown (NodeNotFound" in v.reason
    assert v.evidence["autoscaler"]["nodeclaim"] == "gpu-x7k2p"


def test_a_nodeclaim_whose_gpu_never_registered_is_no_gpu_node_naming_it(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    nodeclaim(b, "gpu-x7k2p", [cond("Launched", "True", "Launched"), cond("Registered", "True", "Registered"),
                               cond("Initialized", "Unknown", "ResourceNotRegistered",
                                    'Resource "nvidia.com/gpu" was requested but not registered')],
              node="ip-10-0-99-7.us-west-2.compute.internal")
    nominate(b, "gpu-x7k2p")
    v, _ = b.verdict(K_POD)
    assert v.word == words.NO_GPU_NODE
    assert "gpu-x7k2p" in v.reason and 'Resource "nvidia.com/gpu" was requested but not registered' in v.reason


def test_no_instance_type_large_enough_is_blocked(tmp_path: Path) -> None:
    b = Bundle(tmp_path, KARPENTER)
    err = ("Failed to schedule pod, no instance type has enough resources, requirements=karpenter.k8s.aws/instance-"
           "family In [g5], karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [gpu], "
           "resources={\"cpu\":\"16150m\",\"memory\":\"96Gi\",\"nvidia.com/gpu\":\"16\",\"pods\":\"4\"}")
    b.set_events(K_POD, {"FailedScheduling"})
    doc = b.load("events.json")
    for e in doc["items"]:
        if e["involvedObject"]["name"] == K_POD[1] and e.get("reportingComponent") == "karpenter":
            e["message"] = err
    b.save("events.json", doc)
    v, _ = b.verdict(K_POD)
    assert v.word == words.SCALE_UP_BLOCKED and "no instance type has enough resources" in v.reason
    assert v.evidence["autoscaler"]["kind"] == "instance-type"


def test_limits_the_nodepool_no_longer_reaches_leave_the_funnels_word(tmp_path: Path) -> None:
    """Objects confirm events: the NodePool now has room (a node went away), so the refusal is not the state."""
    b = Bundle(tmp_path, KARPENTER)
    pools = b.load("nodepools.karpenter.sh.json")
    pools["items"][0]["status"]["resources"]["nvidia.com/gpu"] = "4"
    b.save("nodepools.karpenter.sh.json", pools)
    v, _ = b.verdict(K_POD)
    assert v.word == words.EXHAUSTED and "every NodePool now has room" in v.evidence["autoscaler"]["note"]


# ---- ProvisioningRequests, silence, absence, hostile status ----------------------------------------------------

@pytest.mark.parametrize(("conditions", "word"), [
    ([cond("Accepted", "True", "Accepted")], words.SCALING_UP),
    ([cond("Accepted", "True", "Accepted"), cond("Failed", "True", "CapacityIsNotFound", "no capacity")],
     words.SCALE_UP_BLOCKED),
])
def test_a_provisioning_request_the_pod_consumes(tmp_path: Path, conditions: list[dict], word: str) -> None:
    b = Bundle(tmp_path, CA)
    b.set_events(CA_POD, {"FailedScheduling"})
    pods = b.load("pods.json")
    pod = next(p for p in pods["items"] if p["metadata"]["name"] == CA_POD[1])
    pod["metadata"]["annotations"] = {"autoscaling.x-k8s.io/consume-provisioning-request": "embed-corpus-gpu"}
    b.save("pods.json", pods)
    req = {"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
           "metadata": {"name": "embed-corpus-gpu", "namespace": "ml", "creationTimestamp": "2026-12-01T22:53:31Z"},
           "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                    "podSets": [{"count": 1, "podTemplateRef": {"name": "embed-corpus-gpu"}}]},
           "status": {"conditions": conditions}}
    b.save("provisioningrequests.autoscaling.x-k8s.io.json", {"apiVersion": "v1", "items": [req], "kind": "List"})
    v, _ = b.verdict(CA_POD)
    assert v.word == word and "ProvisioningRequest embed-corpus-gpu" in v.reason


def test_an_autoscaler_present_that_said_nothing_leaves_the_word_and_says_so(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    b.set_events(CA_POD, {"FailedScheduling"})
    v, _ = b.verdict(CA_POD)
    assert v.word == words.EXHAUSTED
    assert v.evidence["autoscaler"] == {"present": ["cluster-autoscaler"],
                                        "said": "nothing about this pod: the funnel's word stands"}


def test_a_cluster_without_any_autoscaler_keeps_the_funnels_word(tmp_path: Path) -> None:
    a = analyse(LAB, Options())
    assert a.cluster.autoscalers is not None and a.cluster.autoscalers.present == ()
    got = {v.target.name: v.word for v in a.verdicts}
    assert got["exhausted"] == words.EXHAUSTED and got["no-gpu-node"] == words.NO_GPU_NODE
    assert all("autoscaler" not in v.evidence for v in a.verdicts)


def test_how_long_before_collection_the_node_was_asked_for(tmp_path: Path) -> None:
    b = Bundle(tmp_path, CA)
    subprocess.run([sys.executable, str(REPO / "scripts" / "seal_bundle.py"), str(b.root), "--created",
                    "2026-12-01T22:55:49Z"], check=True, capture_output=True)
    v, _ = b.verdict(CA_POD)
    assert "asked at 2026-12-01T22:53:34Z, 2m15s before collection" in v.reason


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize(("text", "found"), [
    (BOMB, "expands to more than 200000 values (too large, or excessive YAML aliasing)"),
    ("[" * 5000 + "]" * 5000, "nested"),
    ("nodeGroups: [unclosed", "not YAML"),
])
def test_an_unusable_status_is_a_finding_naming_file_and_path(tmp_path: Path, text: str, found: str) -> None:
    b = Bundle(tmp_path, CA)
    b.set_status(text)
    r = run_cli("analyze", b.root)
    assert_clean_failure(r, 2, f"{STATUS}: $.items[0].data.status", found)
    assert "ml/embed-corpus-rwtjk" in r.stdout  # every pod still answered (the events still decide)


# ---- the report: the autoscalers beside the GPU picture --------------------------------------------------------

def test_the_report_shows_node_groups_nodepools_and_nodeclaims_in_flight(tmp_path: Path) -> None:
    r = run_cli("report", CA, "-o", "markdown", "--file", "-")
    assert r.returncode == 0, r.stderr
    page = r.stdout
    assert page.index("## GPU occupancy") < page.index("## Autoscalers") < page.index("## Targets")
    assert (f"| node group | {GROUP} | yes | min 0 / max 4 / target 2 / registered 1 (+1 unregistered) | InProgress |"
            in page)
    assert "The cluster-autoscaler's latest TriggeredScaleUp event on the pod (at 2026-12-01T22:53:34Z" in page
    assert "without a new node: exhausted" in page

    b = Bundle(tmp_path, KARPENTER)
    nodeclaim(b, "gpu-x7k2p", [cond("Launched", "True", "Launched"),
                               cond("Registered", "Unknown", "NodeNotFound", "Node not registered with cluster")])
    r = run_cli("report", b.root, "-o", "html", "--file", "-")
    assert r.returncode == 0, r.stderr
    assert ('<tr><td>NodePool</td><td><code>gpu</code></td><td>yes</td><td>nvidia.com/gpu: 8 of limit 8</td>'
            '<td><span class="warn">limit reached: nvidia.com/gpu</span></td></tr>') in r.stdout
    assert "<code>gpu-x7k2p</code>" in r.stdout and "Registered Unknown (NodeNotFound" in r.stdout
    assert "<code>gpu-g2rbp</code>" not in r.stdout  # arrived: not in flight


def test_no_autoscaler_no_section() -> None:
    r = run_cli("report", LAB, "-o", "markdown", "--file", "-")
    assert r.returncode == 0 and "## Autoscalers" not in r.stdout


def test_replay_serves_the_autoscalers_kinds_under_their_own_names() -> None:
    """`gpu-triage serve`: nodepools and nodeclaims in karpenter.sh, the status as a core ConfigMap (never a
    resource type named after the bundle file)."""
    from analyzer.replay.store import load_store

    served = load_store(KARPENTER).served
    assert served["nodepools.karpenter.sh"].kind.group == "karpenter.sh" and served["nodeclaims.karpenter.sh"].kind.file == "nodeclaims.karpenter.sh.json"
    status = load_store(CA).served["configmaps.cluster-autoscaler-status"]
    assert status.kind.group == "" and [i["metadata"]["name"] for i in status.items] == ["cluster-autoscaler-status"]
