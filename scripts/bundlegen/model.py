"""Shapes, workloads and pods, and the scheduling facts (kube-scheduler's filters and message, v1.36 wording)."""

from __future__ import annotations

import bundle_objects as bo
from bundle_objects import P, Tpl
from bundlegen.common import (
    ACCOUNTED,
    EPH,
    GPU,
    MIG,
    UNSCHEDULABLE_KEY,
    effective_requests,
)
from bundlegen.pools import Node


class Shape:
    """One pod description; templates per state are encoded on first use."""

    __slots__ = ("desc", "extra", "key", "n_ctr", "n_init", "req", "tpls")

    def __init__(self, key: str, desc: dict, extra: dict | None = None) -> None:
        self.key = key
        self.desc = desc
        self.extra = extra or {}  # what the volume and inter-pod filters see (bundlegen/filters_scenarios.py)
        full = effective_requests(desc)
        self.req = {k: full.get(k, 0) for k in ACCOUNTED}
        self.tpls: dict[str, Tpl] = {}
        self.n_ctr = len(desc["containers"])
        self.n_init = len(desc.get("inits") or ())

    @property
    def gpu(self) -> int:
        return self.req[GPU]

    def tpl(self, state: str) -> Tpl:
        t = self.tpls.get(state)
        if t is None:
            t = self.tpls[state] = Tpl(bo.pod_obj(self.desc, state))
        return t


class Workload:
    """A Deployment (one current ReplicaSet), Job, StatefulSet, DaemonSet or a bare pod's owner-less group."""

    __slots__ = (
        "cron",
        "fail_msg",
        "gen_n",
        "hash",
        "job_state",
        "kind",
        "missing",
        "name",
        "ns",
        "old_hash",
        "pods",
        "refused",
        "rs_name",
        "rs_uid",
        "shape",
        "t0",
        "uid",
        "vals",
    )

    def __init__(self, kind: str, ns: str, name: str, shape: Shape, uid: str, t0: int, vals: dict) -> None:
        self.kind = kind
        self.ns = ns
        self.name = name
        self.shape = shape
        self.uid = uid
        self.t0 = t0
        self.vals = vals
        self.pods: list[Pod] = []
        self.rs_name = self.rs_uid = self.hash = self.old_hash = ""
        self.refused = ""  # "quota" | "runtimeclass"
        self.missing = 0
        self.cron = ""
        self.job_state = "running"
        self.gen_n = 1
        self.fail_msg = ""


class Pod:
    __slots__ = ("idx", "mode", "msg", "name", "node", "ns", "pin", "pip", "state", "t0", "wl", "word")

    def __init__(self, ns: str, name: str, wl: Workload, state: str, node: Node | None, t0: int) -> None:
        self.ns = ns
        self.name = name
        self.wl = wl
        self.state = state
        self.node = node
        self.t0 = t0
        self.word: str | None = None
        self.msg = ""
        self.mode = ""
        self.pip = ""
        self.idx = 0
        self.pin = ""


TERMINATED_STATES = ("succeeded", "failed", "oom", "evicted")


# ===================================================================== scheduling facts

def _tolerates(tols: list[dict], key: str, value: str, effect: str) -> bool:
    for t in tols:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("key") and t["key"] != key:
            continue
        op = t.get("operator", "Equal")
        if op == "Exists" or t.get("value", "") == value:
            return True
    return False


def _term_ok(term: dict, labels: dict) -> bool:
    exprs = term.get("matchExpressions") or []
    if not exprs:
        return False
    for e in exprs:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


# The v1.36 reason strings of the filters after NodeResourcesFit (pkg/scheduler/framework/plugins: volumebinding,
# volumezone, interpodaffinity ErrReason…); each is UnschedulableAndUnresolvable, so preemption cannot help.
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
PV_AFFINITY = "node(s) didn't match PersistentVolume's node affinity"
NO_VOLUME_ZONE = "node(s) had no available volume zone"
AFFINITY_RULES = "node(s) didn't match pod affinity rules"


def later_filters(node: Node, extra: dict) -> str | None:
    """VolumeBinding, VolumeZone, then InterPodAffinity (the scheduler's order), as a shape's `extra` sets them up:
    `volume` bind-conflict (a WaitForFirstConsumer claim whose only volumes sit on the `pinned` nodes, no provisioner),
    pv-affinity / volume-zone (a bound volume in `zone`, by node affinity / by zone label), `affinity` missing (a
    required term no bound pod matches)."""
    volume = extra.get("volume")
    if volume == "bind-conflict" and node.name not in extra["pinned"]:
        return BIND_CONFLICT
    if volume == "pv-affinity" and node.zone != extra["zone"]:
        return PV_AFFINITY
    if volume == "volume-zone" and node.zone != extra["zone"]:
        return NO_VOLUME_ZONE
    if extra.get("affinity") == "missing":
        return AFFINITY_RULES
    return None


def node_reasons(node: Node, desc: dict, req: dict, pin: str, extra: dict | None = None) -> tuple[list[str], bool]:
    """The scheduler's first failing filter on one node (its order) and whether preemption cannot help."""
    tols = list(desc.get("tolerations") or []) + bo.DEFAULT_TOLERATIONS
    if node.unschedulable and not _tolerates(tols, UNSCHEDULABLE_KEY, "", "NoSchedule"):
        return ["node(s) were unschedulable"], True
    for key, value, effect in node.taints:
        if effect in ("NoSchedule", "NoExecute") and not _tolerates(tols, key, value, effect):
            return ["node(s) had untolerated taint(s)"], True
    sel = desc.get("node_selector") or {}
    for k, v in sel.items():
        if v == P("pin"):
            v = pin
        if node.labels.get(k) != v:
            return ["node(s) didn't match Pod's node affinity/selector"], True
    terms = (((desc.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    if terms is not None and not any(_term_ok(t, node.labels) for t in terms):
        return ["node(s) didn't match Pod's node affinity/selector"], True
    out = []
    unresolvable = False
    for r in (GPU, MIG, "cpu", "memory", EPH):
        want = req.get(r, 0)
        if want and node.alloc[r] - node.used[r] < want:
            out.append(f"Insufficient {r}")
            if want > node.alloc[r]:
                unresolvable = True
    if node.npods + 1 > node.alloc["pods"]:
        out.append("Too many pods")
    if not out and extra:
        later = later_filters(node, extra)
        if later is not None:
            return [later], True
    return out, unresolvable


def scheduler_message(nodes: list[Node], shape: Shape, pin: str, mode: str) -> str:
    """`0/N nodes are available: …` as kube-scheduler v1.36 writes it.

    mode: exact (the bundle's world), stale (nodes that fit now were full when it was written),
    antiaffinity (nodes that fit fail the pod's anti-affinity), pvc (the volume binder's early exit).
    """
    n = len(nodes)
    if mode == "pvc":
        return f"0/{n} nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    counts: dict[str, int] = {}
    helpless = victims = 0
    stale_res = GPU if shape.req[GPU] else (MIG if shape.req[MIG] else "cpu")
    for node in nodes:
        reasons, unresolvable = node_reasons(node, shape.desc, shape.req, pin, shape.extra)
        if not reasons:
            if mode == "stale":
                reasons, unresolvable = [f"Insufficient {stale_res}"], False
            elif mode == "antiaffinity":
                reasons, unresolvable = ["node(s) didn't match pod anti-affinity rules"], False
            else:
                raise AssertionError(f"{shape.key}: node {node.name} fits, the message cannot be exact")
        for r in reasons:
            counts[r] = counts.get(r, 0) + 1
        if unresolvable:
            helpless += 1
        else:
            victims += 1
    parts = sorted(f"{c} {r}" for r, c in counts.items())
    pre = []
    if victims:
        pre.append(f"{victims} No preemption victims found for incoming pod")
    if helpless:
        pre.append(f"{helpless} Preemption is not helpful for scheduling")
    return (f"0/{n} nodes are available: {', '.join(parts)}. no new claims to deallocate, preemption: "
            f"0/{n} nodes are available: {', '.join(sorted(pre))}.")


# ===================================================================== the generator
