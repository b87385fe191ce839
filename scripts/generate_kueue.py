"""`generate_bundle.py --kueue`: Kueue's objects for the pods and Jobs the generator planned (bundlegen/kueue.py).

Run after the bundle is written. Objects as Kueue v0.19 writes them (kueue.x-k8s.io/v1beta2), their texts from
its source (pkg/controller/core/workload_controller.go, pkg/scheduler/flavorassigner/flavorassigner.go,
pkg/workload/admissionchecks.go):
- ResourceFlavors h100, a100, l4 with the pools' labels (nodepool and accelerator) and the GPU taint;
- cohort `ml` (a Cohort object): cq-train (h100 then a100) admits the running training Jobs of ml-training, nlp
  and vision, borrowing a tenth of its H100 use from cq-research up to its borrowingLimit; cq-research has
  admission check dws-prov (a ProvisioningRequest) that its reserved workloads wait for;
- cohort `serving` (no object): cq-serving, stopped (stopPolicy Hold); cq-sandbox in no cohort, 8 H100;
- LocalQueues per namespace (recsys has none); a Workload per pod group, per bare gated pod, per admitted
  and per suspended Job (suspended Jobs added to jobs.json; the admitted Jobs get the queue-name label);
- topology-aware scheduling (kueue_topology.py): the GPU pools' nodes by block and rack, Topology gpu-topology,
  flavor h100-tas naming it, cq-tas (no cohort, quota to spare) whose pod groups require one rack; their
  QuotaReserved message is Kueue's notFitMessage for the best rack.
The quotas are computed so each pending workload's word is the one planned: cq-train's H100 has nothing left
(nominal + borrowingLimit all reserved) and its A100 nominal equals what is reserved.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import bundle_objects as bo
from analyzer.bundle.catalog import BY_NAME, KUEUE
from analyzer.model.matching import Taint
from bundlegen.common import GPU, TEAMS, ts
from bundlegen.descs import sel_accel, trainer_desc
from bundlegen.kueue import QUEUE_LABEL, RACK
from bundlegen.pools import H100
from kueue_topology import TAS_FLAVOR, TOPOLOGY, label_racks, not_fit, snapshot_nodes, topology_object

if TYPE_CHECKING:
    from bundlegen.generator import Generator
    from bundlegen.model import Workload as GenWorkload

V1B2 = "kueue.x-k8s.io/v1beta2"
TAINT = {"effect": "NoSchedule", "key": GPU, "value": "present"}
FLAVORS = {"h100": ("h100-pool", "nvidia-h100-80gb", True), "a100": ("a100-pool", "nvidia-tesla-a100", True),
           "l4": ("l4-pool", "nvidia-l4", False), "h100-tas": ("h100-pool", "nvidia-h100-80gb", True)}
TRAIN_NAMESPACES = ("ml-training", "nlp", "vision")
LOCAL_QUEUES = [(ns, "train", "cq-train") for ns in TRAIN_NAMESPACES] + [
    ("research", "h100-queue", "cq-research"), ("research", "sandbox", "cq-sandbox"), ("ml-inference", "serving", "cq-serving"),
    ("ml-training", "tas", "cq-tas")]
BIG_CPU, BIG_MEM = 10_000_000, 100 << 40  # cpu and memory quota no workload here runs short of
RESOURCES = ("cpu", "memory", GPU)
JOBS_FILE = BY_NAME["jobs"].file
TAINTED = f"{GPU}=present:NoSchedule"


def _fmt(resource: str, units: int) -> str:
    return bo.fmt_cpu(units) if resource == "cpu" else bo.fmt_mem(units) if resource == "memory" else str(units)


def _hash(*parts: str, n: int = 5) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:n]


def _usage(req: dict[str, int], count: int) -> dict[str, int]:
    return {r: req.get(r, 0) * count for r in RESOURCES if req.get(r, 0)}


def _filled(obj, vals: dict) -> object:
    """A template-made dict with its placeholders filled (pod template specs carry a few)."""
    text = json.dumps(obj)
    for key, value in vals.items():
        text = text.replace(f"@@{key}@@", str(value))
    return json.loads(text)


class KueueWorld:
    def __init__(self, gen: Generator) -> None:
        self.g = gen
        self.workloads: list[dict] = []
        self.reserved: dict[tuple[str, str], dict[str, int]] = {}  # (cq, flavor) -> resource -> units
        self.admitted: dict[tuple[str, str], dict[str, int]] = {}
        self.counts: dict[str, dict[str, int]] = {}  # cq -> admitted / reserving / pending
        self.lq_counts: dict[tuple[str, str], dict[str, int]] = {}
        self.admitted_jobs: set[tuple[str, str]] = set()
        self.later: list[tuple[int, str, str, int]] = []  # workloads whose message needs the final quotas
        # The nodes Kueue's TAS snapshot of h100-tas takes (Ready, schedulable, with the flavor's labels), as
        # nodes.json says, with their taints: what another option may have done to the nodes counts.
        self.tas_nodes: dict[str, tuple[Taint, ...]] = {}

    # -- workloads -------------------------------------------------------------------------------
    def _count(self, cq: str, lq: tuple[str, str], key: str) -> None:
        for d in (self.counts.setdefault(cq, {}), self.lq_counts.setdefault(lq, {})):
            d[key] = d.get(key, 0) + 1

    def workload(self, *, ns: str, name: str, queue: str, owners: list[dict], pod_set: str, count: int,
                 template: dict, req: dict[str, int], t0: int, state: str, cq: str, message: str | None = None,
                 flavor: str = "", topology: dict | None = None) -> None:
        """`topology`: the pod set's topologyRequest; a workload refused by it is Pending, as one short of quota."""
        usage = _usage(req, count)
        status: dict = {"conditions": []}
        when = ts(max(1, t0 - 1))

        def cond(kind: str, true: bool, reason: str, text: str) -> None:
            status["conditions"].append({"lastTransitionTime": when, "message": text, "observedGeneration": 1,
                                         "reason": reason, "status": "True" if true else "False", "type": kind})

        def hold(into: dict[tuple[str, str], dict[str, int]], counter: str) -> None:
            held = into.setdefault((cq, flavor), {})
            for r, u in usage.items():
                held[r] = held.get(r, 0) + u
            self._count(cq, (ns, queue), counter)

        if state in ("admitted", "checks"):
            status["admission"] = {"clusterQueue": cq, "podSetAssignments": [{
                "count": count, "flavors": {r: flavor for r in RESOURCES}, "name": pod_set,
                "resourceUsage": {r: _fmt(r, u) for r, u in usage.items()}}]}
            cond("QuotaReserved", True, "QuotaReserved", f"Quota reserved in ClusterQueue {cq}")
            hold(self.reserved, "reservingWorkloads")
        if state == "admitted":
            cond("Admitted", True, "Admitted", "The workload is admitted")
            cond("PodsReady", True, "Started", "All pods reached readiness and the workload is running")
            hold(self.admitted, "admittedWorkloads")
        else:
            cond("PodsReady", False, "WaitForStart", "Not all pods are ready or succeeded")
        if state == "checks":
            cond("Admitted", False, "UnsatisfiedChecks", "The workload has not all checks ready")
            status["admissionChecks"] = [{"lastTransitionTime": when, "message": "", "name": "dws-prov", "state": "Pending"}]
        elif state == "pending":  # message None: written once the quotas are known
            cond("QuotaReserved", False, "Inadmissible" if message and not topology else "Pending", message or "")
            self._count(cq, (ns, queue), "pendingWorkloads")
        conds = status["conditions"]
        conds.sort(key=lambda c: c["type"])
        self.workloads.append({
            "apiVersion": V1B2, "kind": "Workload",
            "metadata": {"creationTimestamp": ts(t0), "finalizers": ["kueue.x-k8s.io/resource-in-use"], "generation": 1,
                         "labels": {"kueue.x-k8s.io/job-uid": owners[0]["uid"]}, "name": name, "namespace": ns,
                         "ownerReferences": owners, "resourceVersion": self.g.rv("wl", ns, name),
                         "uid": self.g.uid("Workload", ns, name)},
            "spec": {"active": True, "podSets": [{"count": count, "name": pod_set, "template": template,
                                                  **({"topologyRequest": topology} if topology else {})}],
                     "priority": 0, "queueName": queue},
            "status": status})

    def template(self, wl: GenWorkload, extra: dict | None = None) -> dict:
        spec = bo.pod_spec(wl.shape.desc, template=True)
        if extra:
            spec.update(extra)
        return {"metadata": {}, "spec": _filled(spec, wl.vals)}


def _owner(api: str, kind: str, name: str, uid: str) -> dict:
    return {"apiVersion": api, "blockOwnerDeletion": True, "controller": True, "kind": kind, "name": name, "uid": uid}


def _too_large(flavor: str, asked: int, most: int) -> str:
    return (f"insufficient quota for {GPU} in flavor {flavor}, previously considered podsets requests (0) + current "
            f"podset request ({asked}) > maximum capacity ({most})")


def _pending_message(scenario: str, pod_set: str, asked: int, most: int) -> str:
    """Kueue's QuotaReserved message; `most` is what cq-train could ever give in h100 (nominal + borrowingLimit)."""
    head = f"couldn't assign flavors to pod set {pod_set}: "
    short = (_too_large("h100", asked, most) if asked > most
             else f"insufficient unused quota for {GPU} in flavor h100, {asked} more needed")
    return head + {
        "quota": f"flavor a100 doesn't match node affinity, {short}",
        "too-large": _too_large("h100", asked, 8),
        "selector": "flavor a100 doesn't match node affinity, flavor h100 doesn't match node affinity",
        "taint": f"untolerated taint {TAINTED} in flavor a100, untolerated taint {TAINTED} in flavor h100",
    }[scenario]


def build_workloads(gen: Generator, world: KueueWorld) -> list[dict]:
    """Every Workload; returns the suspended Jobs' objects for jobs.json."""
    seed = gen.seed
    lqs = {(ns, lq): cq for ns, lq, cq in LOCAL_QUEUES}
    for wl in gen.workloads:  # the running training Jobs: admitted in cq-train
        pods = wl.pods
        if wl.kind != "Job" or wl.ns not in TRAIN_NAMESPACES or not pods or any(p.state != "running" for p in pods):
            continue
        pools = {p.node.pool["name"] for p in pods if p.node is not None}
        flavor = "h100" if pools == {"h100-pool"} else "a100" if pools == {"a100-pool"} else ""
        if not flavor:
            continue
        world.admitted_jobs.add((wl.ns, wl.name))
        world.workload(ns=wl.ns, name=f"job-{wl.name}-{_hash(seed, wl.ns, wl.name)}", queue="train",
                       owners=[_owner("batch/v1", "Job", wl.name, wl.uid)], pod_set="main", count=len(pods),
                       template=world.template(wl), req=wl.shape.req, t0=wl.t0, state="admitted", cq="cq-train",
                       flavor=flavor)
    groups = [(wl, s) for wl, s in getattr(gen, "kueue_groups", ())]
    groups += [(wl, "checks-bare") for wl in gen.workloads if wl.shape.key == "gated"]
    for wl, scenario in groups:
        desc = wl.shape.desc
        queue = (desc.get("labels") or {}).get(QUEUE_LABEL) or (desc.get("annotations") or {}).get(QUEUE_LABEL, "")
        pods = [(p.name, bo.uid_from(bo.h64(seed, "pod", p.ns, p.name))) for p in wl.pods]
        if scenario == "checks-bare":  # bare pods: a Workload each
            units = [(f"pod-{name}-{_hash(seed, wl.ns, name)}", [(name, uid)], "main") for name, uid in pods]
        else:  # a pod group: one Workload named after the group, owned by every pod
            units = [(wl.name, pods, _hash(seed, wl.shape.key, n=8))]
        for name, owners, pod_set in units:
            count = len(owners)
            state = "checks" if scenario.startswith("checks") else "pending"
            message = {"stopped": "ClusterQueue cq-serving is inactive",
                       "no-lq": f"LocalQueue {queue} doesn't exist", "checks": "", "checks-bare": ""}.get(scenario)
            if scenario == "topology":
                message = (f"couldn't assign flavors to pod set {pod_set}: "
                           + not_fit(gen, world.tas_nodes, world.template(wl)["spec"], wl.shape.req, count))
            if message is None:
                world.later.append((len(world.workloads), scenario, pod_set, count * wl.shape.req[GPU]))
            world.workload(ns=wl.ns, name=name, queue=queue, owners=[_owner("v1", "Pod", n, u) for n, u in owners],
                           pod_set=pod_set, count=count, template=world.template(wl), req=wl.shape.req,
                           t0=wl.pods[0].t0, state=state, cq=lqs.get((wl.ns, queue), ""), message=message, flavor="h100",
                           topology={"required": RACK} if scenario == "topology" else None)
    jobs = []
    shape = gen.shape("kueue/suspended", lambda: trainer_desc("Job", 8, sel_accel(H100), True, "24", "200Gi"))
    for ns, name, parallelism in getattr(gen, "kueue_suspended", ()):
        uid = gen.uid("Job", ns, name)
        t0 = gen.rng.randint(120, 3 * 3600)
        vals = {"app": name, "team": TEAMS.get(ns, "platform"), "ns": ns, "name": name, "uid": uid, "oname": name,
                "ouid": uid, "gen": name + "-", "rv": gen.rv("job", ns, name), "t0": ts(t0), "t1": ts(t0), "t3": ts(t0),
                "gen_n": "1", "completions": str(parallelism), "parallelism": str(parallelism)}
        job = json.loads(bo.Tpl(bo.job_obj(shape.desc, "refused", False)).render(vals))
        job["metadata"].setdefault("labels", {})[QUEUE_LABEL] = "train"
        job["spec"]["suspend"] = True
        job["status"] = {"conditions": [{"lastProbeTime": ts(t0), "lastTransitionTime": ts(t0), "message": "Job suspended",
                                         "reason": "JobSuspended", "status": "True", "type": "Suspended"}]}
        jobs.append(job)
        world.later.append((len(world.workloads), "quota", "main", parallelism * shape.req[GPU]))
        world.workload(ns=ns, name=f"job-{name}-{_hash(seed, ns, name)}", queue="train",
                       owners=[_owner("batch/v1", "Job", name, uid)], pod_set="main", count=parallelism,
                       template={"metadata": {}, "spec": job["spec"]["template"]["spec"]}, req=shape.req,
                       t0=t0, state="pending", cq="cq-train", message=None)
    return jobs


# -- queues, flavors and the files ------------------------------------------------------------------

def _flavor(name: str, gen: Generator) -> dict:
    pool, accel, tainted = FLAVORS[name]
    spec: dict = {"nodeLabels": {"cloud.google.com/gke-accelerator": accel, "cloud.google.com/gke-nodepool": pool}}
    if tainted:
        spec["nodeTaints"] = [TAINT]
    if name == TAS_FLAVOR:
        spec["topologyName"] = TOPOLOGY
    return {"apiVersion": V1B2, "kind": "ResourceFlavor",
            "metadata": {"creationTimestamp": ts(120 * 86400), "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                         "generation": 1, "name": name, "resourceVersion": gen.rv("rf", name), "uid": gen.uid("rf", name)},
            "spec": spec}


def _cluster_queue(gen: Generator, world: KueueWorld, name: str, cohort: str, quotas: dict[str, dict[str, tuple]],
                   *, stopped: bool = False, checks: tuple[str, ...] = ()) -> dict:
    """quotas: flavor -> resource -> (nominal, borrowingLimit or None)."""
    flavors, reservation, usage = [], [], []
    for flavor, per in quotas.items():
        rows = []
        for r in RESOURCES:
            nominal, limit = per[r]
            row = {"name": r, "nominalQuota": _fmt(r, nominal)}
            if limit is not None:
                row["borrowingLimit"] = _fmt(r, limit)
            rows.append(row)
        flavors.append({"name": flavor, "resources": rows})
        for out, held in ((reservation, world.reserved), (usage, world.admitted)):
            total = held.get((name, flavor), {})
            out.append({"name": flavor, "resources": [
                {"borrowed": _fmt(r, max(0, total.get(r, 0) - per[r][0])), "name": r, "total": _fmt(r, total.get(r, 0))}
                for r in RESOURCES]})
    spec: dict = {"flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
                  "namespaceSelector": {}, "preemption": {"borrowWithinCohort": {"policy": "Never"},
                                                          "reclaimWithinCohort": "Never", "withinClusterQueue": "Never"},
                  "queueingStrategy": "BestEffortFIFO",
                  "resourceGroups": [{"coveredResources": list(RESOURCES), "flavors": flavors}],
                  "stopPolicy": "Hold" if stopped else "None"}
    if cohort:
        spec["cohortName"] = cohort
    if checks:
        spec["admissionChecks"] = list(checks)
    active = ({"message": "Can't admit new workloads: is stopped.", "reason": "Stopped", "status": "False"} if stopped
              else {"message": "Can admit new workloads", "reason": "Ready", "status": "True"})
    counts = world.counts.get(name, {})
    return {"apiVersion": V1B2, "kind": "ClusterQueue",
            "metadata": {"creationTimestamp": ts(120 * 86400), "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                         "generation": 1, "name": name, "resourceVersion": gen.rv("cq", name), "uid": gen.uid("cq", name)},
            "spec": spec,
            "status": {"admittedWorkloads": counts.get("admittedWorkloads", 0),
                       "conditions": [{"lastTransitionTime": ts(120 * 86400), "observedGeneration": 1, "type": "Active",
                                       **active}],
                       "flavorsReservation": reservation, "flavorsUsage": usage,
                       "pendingWorkloads": counts.get("pendingWorkloads", 0),
                       "reservingWorkloads": counts.get("reservingWorkloads", 0)}}


def _queues(gen: Generator, world: KueueWorld) -> list[dict]:
    def held(cq: str, flavor: str, r: str) -> int:
        return world.reserved.get((cq, flavor), {}).get(r, 0)

    def roomy(cq: str, flavor: str) -> dict[str, tuple]:
        return {"cpu": (held(cq, flavor, "cpu") + BIG_CPU, None), "memory": (held(cq, flavor, "memory") + BIG_MEM, None)}

    # cq-train borrows a tenth of its H100 use and may borrow no more: nothing left for the pending ones.
    h100 = held("cq-train", "h100", GPU)
    borrowed = h100 // 10
    train = {"h100": {**roomy("cq-train", "h100"), GPU: (h100 - borrowed, borrowed)},
             "a100": {**roomy("cq-train", "a100"), GPU: (held("cq-train", "a100", GPU), 0)}}
    research = {"h100": {**roomy("cq-research", "h100"), GPU: (held("cq-research", "h100", GPU) + borrowed + 16, None)}}
    sandbox = {"h100": {"cpu": (1_000_000, None), "memory": (8 << 40, None), GPU: (8, None)}}
    serving = {"l4": {"cpu": (1_000_000, None), "memory": (4 << 40, None), GPU: (64, None)}}
    tas = {TAS_FLAVOR: {"cpu": (BIG_CPU, None), "memory": (BIG_MEM, None), GPU: (1_000_000, None)}}
    return [_cluster_queue(gen, world, "cq-research", "ml", research, checks=("dws-prov",)),
            _cluster_queue(gen, world, "cq-sandbox", "", sandbox),
            _cluster_queue(gen, world, "cq-serving", "serving", serving, stopped=True),
            _cluster_queue(gen, world, "cq-tas", "", tas),
            _cluster_queue(gen, world, "cq-train", "ml", train)]


def _local_queues(gen: Generator, world: KueueWorld) -> list[dict]:
    out = []
    for ns, name, cq in sorted(LOCAL_QUEUES):
        counts = world.lq_counts.get((ns, name), {})
        active = ({"message": "Can't submit new workloads to clusterQueue", "reason": "ClusterQueueIsInactive",
                   "status": "False"} if cq == "cq-serving"
                  else {"message": "Can submit new workloads to localQueue", "reason": "Ready", "status": "True"})
        out.append({"apiVersion": V1B2, "kind": "LocalQueue",
                    "metadata": {"creationTimestamp": ts(100 * 86400), "generation": 1, "name": name, "namespace": ns,
                                 "resourceVersion": gen.rv("lq", ns, name), "uid": gen.uid("lq", ns, name)},
                    "spec": {"clusterQueue": cq, "stopPolicy": "None"},
                    "status": {"admittedWorkloads": counts.get("admittedWorkloads", 0),
                               "conditions": [{"lastTransitionTime": ts(100 * 86400), "observedGeneration": 1,
                                               "type": "Active", **active}],
                               "pendingWorkloads": counts.get("pendingWorkloads", 0),
                               "reservingWorkloads": counts.get("reservingWorkloads", 0)}})
    return out


def _write(root: Path, name: str, items: list[dict]) -> dict:
    """One kubectl List; its manifest entry (the command from the catalog row)."""
    data = (json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                       indent=4, sort_keys=True) + "\n").encode()
    kind = BY_NAME[name]
    (root / kind.file).write_bytes(data)
    return {"path": kind.file, "kind": name, "status": "ok", "command": list(kind.command), "exitStatus": 0,
            "stderr": "", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "items": len(items),
            "redactions": {"env-value": 0, "last-applied-configuration": 0}}


def manifest_files(root: Path) -> list[dict]:
    return json.loads((root / "manifest.json").read_text())["files"]


def _label_racks(root: Path, gen: Generator) -> dict:
    """nodes.json with the block and rack labels on the GPU pools' nodes; its manifest entry."""
    items = json.loads((root / BY_NAME["nodes"].file).read_text())["items"]
    label_racks(items, gen)
    old = next(e for e in manifest_files(root) if e["path"] == BY_NAME["nodes"].file)
    entry = _write(root, "nodes", items)
    entry["redactions"] = dict(old.get("redactions") or {})
    return entry


def add_kueue(root: Path, gen: Generator) -> None:
    world = KueueWorld(gen)
    world.tas_nodes = snapshot_nodes(root)
    suspended = build_workloads(gen, world)
    doc = json.loads((root / JOBS_FILE).read_text())
    for job in doc["items"]:
        meta = job["metadata"]
        if (meta["namespace"], meta["name"]) in world.admitted_jobs:
            meta.setdefault("labels", {})[QUEUE_LABEL] = "train"
    doc["items"] = sorted(doc["items"] + suspended, key=lambda j: (j["metadata"]["namespace"], j["metadata"]["name"]))
    old = next(e for e in manifest_files(root) if e["path"] == JOBS_FILE)
    jobs = _write(root, "jobs", doc["items"])
    jobs["redactions"] = dict(old.get("redactions") or {})
    jobs["redactions"]["env-value"] = jobs["redactions"].get("env-value", 0) + json.dumps(suspended).count(bo.MARKER)
    cohort = {"apiVersion": V1B2, "kind": "Cohort",
              "metadata": {"creationTimestamp": ts(120 * 86400), "generation": 1, "name": "ml",
                           "resourceVersion": gen.rv("cohort", "ml"), "uid": gen.uid("cohort", "ml")}, "spec": {}}
    check = {"apiVersion": V1B2, "kind": "AdmissionCheck",
             "metadata": {"creationTimestamp": ts(120 * 86400), "generation": 1, "name": "dws-prov",
                          "resourceVersion": gen.rv("ac", "dws-prov"), "uid": gen.uid("ac", "dws-prov")},
             "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                      "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws"}},
             "status": {"conditions": [{"lastTransitionTime": ts(120 * 86400), "message": "The admission check is active",
                                        "observedGeneration": 1, "reason": "Active", "status": "True", "type": "Active"}]}}
    queues = _queues(gen, world)
    most = world.reserved.get(("cq-train", "h100"), {}).get(GPU, 0)  # its nominal + borrowingLimit
    for i, scenario, pod_set, asked in world.later:
        cond = next(c for c in world.workloads[i]["status"]["conditions"] if c["type"] == "QuotaReserved")
        cond["message"] = _pending_message(scenario, pod_set, asked, most)
    lists = dict(zip(KUEUE, (
        sorted(world.workloads, key=lambda w: (w["metadata"]["namespace"], w["metadata"]["name"])),
        _local_queues(gen, world), queues, [_flavor(f, gen) for f in sorted(FLAVORS)], [cohort], [check],
        [topology_object(gen, V1B2)])))
    manifest = json.loads((root / "manifest.json").read_text())
    nodes = _label_racks(root, gen)
    manifest["files"] = [jobs if e["path"] == JOBS_FILE else nodes if e["path"] == nodes["path"] else e
                         for e in manifest["files"]]
    manifest["files"] += [_write(root, name, items) for name, items in lists.items()]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
