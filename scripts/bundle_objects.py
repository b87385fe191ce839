"""kubectl-shaped Kubernetes objects for the synthetic bundle generator.

Used by ``scripts/generate_bundle.py``; no other part of the project imports it.

Speed is the point here: 150,000 pods of ~10 KB each cannot go through
``json.dumps(indent=4)`` one by one (with ``indent`` CPython falls back to its
pure-Python encoder).  Instead every distinct *shape* of object (a workload
class in a given state) is built once as a dict whose per-object values are
placeholders, encoded once exactly as kubectl prints it (4-space indentation,
map keys sorted, which is what ``kubectl get -o json`` does), and split into
literal pieces.  Rendering an object is then one ``str.join`` of the pieces
with its values.

Placeholders: ``P("name")`` inside a string becomes ``@@name@@`` and is
replaced by the value as-is (values must be JSON-safe: names, uids,
timestamps, IPs; messages are escaped with ``js()``); ``RAW("n")`` stands for
a whole JSON value (a number, ``null``) and is replaced without quotes.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone

MARKER = "REDACTED-BY-GPU-TRIAGE"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# A fixed clock: every timestamp is an offset (in seconds, into the past)
# from BASE, so the same seed always gives the same bytes.
BASE = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone.utc)
BASE_EPOCH = int(BASE.timestamp())


def ts(sec_before: float) -> str:
    """RFC 3339 second precision, as the API server prints it."""
    return (BASE - timedelta(seconds=int(sec_before))).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_micro(sec_before: float, micros: int) -> str:
    """MicroTime (events' eventTime)."""
    t = BASE - timedelta(seconds=int(sec_before)) + timedelta(microseconds=micros)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def P(key: str) -> str:
    return f"@@{key}@@"


def RAW(key: str) -> str:
    return f"@@R:{key}@@"


def js(s: str) -> str:
    """Escape a value for insertion inside a JSON string literal (Go-style)."""
    out = json.dumps(s, ensure_ascii=False)[1:-1]
    # encoding/json escapes these HTML characters; kubectl prints them so.
    return out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_PH = re.compile(r'"@@R:([A-Za-z0-9_]+)@@"|@@([A-Za-z0-9_]+)@@')


class Tpl:
    """One object shape, pre-encoded; ``render(values)`` fills the placeholders."""

    __slots__ = ("parts", "keys", "redactions")

    def __init__(self, obj, level: int = 2):
        text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
        # encoding/json (kubectl) escapes <, > and & inside strings; outside
        # strings JSON text never holds them, so a global replace is exact.
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        # What the collector's redaction would count in one rendered object
        # (placeholders never hold the marker).
        self.redactions = {
            "env-value": text.count('"value": "' + MARKER + '"'),
            "last-applied-configuration": text.count('"' + LAST_APPLIED + '": "' + MARKER + '"'),
        }
        if level:
            pad = " " * (4 * level)
            text = pad + text.replace("\n", "\n" + pad)
        pieces = _PH.split(text)
        lits = pieces[0::3]
        keys = [r if r is not None else s for r, s in zip(pieces[1::3], pieces[2::3])]
        parts: list[str] = []
        for i, _k in enumerate(keys):
            parts.append(lits[i])
            parts.append("")
        parts.append(lits[-1])
        self.parts = parts
        self.keys = keys

    def render(self, v: dict) -> str:
        parts = self.parts
        i = 1
        for k in self.keys:
            parts[i] = v[k]
            i += 2
        return "".join(parts)


# ---------------------------------------------------------------- quantities

_BIN = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def qty(res: str, s: str) -> int:
    """The few quantity forms this generator writes -> int (cpu in milli)."""
    if res == "cpu":
        return int(s[:-1]) if s.endswith("m") else int(s) * 1000
    for suf, mul in _BIN.items():
        if s.endswith(suf):
            return int(s[: -len(suf)]) * mul
    return int(s)


def fmt_cpu(m: int) -> str:
    return str(m // 1000) if m % 1000 == 0 else f"{m}m"


def fmt_mem(b: int) -> str:
    if b == 0:
        return "0"
    for suf, mul in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if b % mul == 0:
            return f"{b // mul}{suf}"
    return str(b)


# ------------------------------------------------------------------ hashing

def h64(*parts: str) -> bytes:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=64).digest()


def uid_from(b: bytes) -> str:
    h = bytearray(b[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[0:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:32]}"


_ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # k8s utilrand alphabet


def suffix_from(b: bytes, n: int = 5) -> str:
    return "".join(_ALNUM[c % len(_ALNUM)] for c in b[:n])


def digest_of(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


# ------------------------------------------------------------------- pieces

DEFAULT_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
]

DS_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
]
DS_TOLERATIONS_HOSTNET = DS_TOLERATIONS + [
    {"effect": "NoSchedule", "key": "node.kubernetes.io/network-unavailable", "operator": "Exists"},
]

GPU_TOLERATION = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}


def token_volume() -> dict:
    return {
        "name": "kube-api-access-" + P("tok"),
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
            ],
        },
    }


TOKEN_MOUNT = ("kube-api-access-" + P("tok"), "/var/run/secrets/kubernetes.io/serviceaccount", True)


def resources_of(c: dict) -> dict:
    """requests/limits as the API server stores them: a resource with a limit
    and no request gets the limit as its request (API defaulting, every
    resource, not only extended ones)."""
    req = dict(c.get("req") or {})
    lim = dict(c.get("lim") or {})
    for k, v in lim.items():
        if k not in req:
            req[k] = v
    out = {}
    if lim:
        out["limits"] = lim
    if req:
        out["requests"] = req
    return out


def container_spec(c: dict, template: bool = False) -> dict:
    d: dict = {
        "image": c["image"],
        "imagePullPolicy": c.get("pull", "IfNotPresent"),
        "name": c["name"],
        "resources": resources_of(c),
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": c.get("tmp", "File"),
    }
    if c.get("cmd"):
        d["command"] = list(c["cmd"])
    if c.get("args"):
        d["args"] = list(c["args"])
    if c.get("env"):
        env = []
        for k, v in c["env"]:
            if isinstance(v, dict):
                env.append({"name": k, "valueFrom": v})
            else:
                env.append({"name": k, "value": MARKER})  # the bundle is redacted
        d["env"] = env
    if c.get("ports"):
        d["ports"] = [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in c["ports"]]
    if c.get("probe"):
        port, path = c["probe"]
        d["readinessProbe"] = {
            "failureThreshold": 3,
            "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        }
        d["livenessProbe"] = {
            "failureThreshold": 3,
            "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        }
    if c.get("restart"):
        d["restartPolicy"] = c["restart"]
    if c.get("sc"):
        d["securityContext"] = c["sc"]
    mounts = list(c.get("mounts") or [])
    if not template and c.get("token", True):
        mounts.append(TOKEN_MOUNT)
    if mounts:
        vm = []
        for name, path, ro in mounts:
            m = {"mountPath": path, "name": name}
            if ro:
                m["readOnly"] = True
            vm.append(m)
        d["volumeMounts"] = vm
    return d


def container_status(c: dict, idx: str, state: str, *, init: bool = False) -> dict:
    """One containerStatuses entry. ``idx`` names the cid placeholder."""
    image = c["image"]
    running_like = state in ("running", "terminated-ok", "terminated-err", "crashloop", "oom", "unknown")
    d: dict = {
        "image": image,
        "imageID": "" if state in ("creating", "imagepull", "podinit") else image.split(":")[0] + "@sha256:" + digest_of(image),
        "lastState": {},
        "name": c["name"],
        "ready": False,
        "restartCount": 0,
        "started": False,
    }
    if running_like:
        d["containerID"] = "containerd://" + P(idx)
    res = resources_of(c)
    if running_like or state in ("creating", "imagepull", "podinit"):
        if res:
            d["resources"] = res
        vm = []
        for name, path, ro in list(c.get("mounts") or []) + ([TOKEN_MOUNT] if c.get("token", True) else []):
            m = {"mountPath": path, "name": name}
            if ro:
                m["readOnly"] = True
                m["recursiveReadOnly"] = "Disabled"
            vm.append(m)
        if vm:
            d["volumeMounts"] = vm
    if running_like:
        uid = (c.get("sc") or {}).get("runAsUser", 0)
        d["user"] = {"linux": {"gid": uid, "supplementalGroups": [uid], "uid": uid}}
    if state == "running":
        d["ready"] = True
        d["started"] = True
        d["state"] = {"running": {"startedAt": P("t2")}}
    elif state == "crashloop":
        d["restartCount"] = RAW("restarts")
        d["lastState"] = {"terminated": {"containerID": "containerd://" + P(idx), "exitCode": 1, "finishedAt": P("t3"), "reason": "Error", "startedAt": P("t3")}}
        d["state"] = {"waiting": {"message": "back-off 5m0s restarting failed container=" + c["name"] + " pod=" + P("name") + "_" + P("ns") + "(" + P("uid") + ")", "reason": "CrashLoopBackOff"}}
    elif state == "terminated-ok":
        d["state"] = {"terminated": {"containerID": "containerd://" + P(idx), "exitCode": 0, "finishedAt": P("t3"), "reason": "Completed", "startedAt": P("t2")}}
        if init:
            d["ready"] = True  # the kubelet reports a completed init container as ready
    elif state == "terminated-err":
        d["state"] = {"terminated": {"containerID": "containerd://" + P(idx), "exitCode": 1, "finishedAt": P("t3"), "reason": "Error", "startedAt": P("t2")}}
    elif state == "oom":
        d["state"] = {"terminated": {"containerID": "containerd://" + P(idx), "exitCode": 137, "finishedAt": P("t3"), "reason": "OOMKilled", "startedAt": P("t2")}}
    elif state == "unknown":
        d["state"] = {"terminated": {"exitCode": 137, "finishedAt": None, "message": "The container could not be located when the pod was terminated", "reason": "ContainerStatusUnknown", "startedAt": None}}
        d.pop("containerID", None)
    elif state == "creating":
        d["state"] = {"waiting": {"reason": "ContainerCreating"}}
    elif state == "podinit":
        d["state"] = {"waiting": {"reason": "PodInitializing"}}
    elif state == "imagepull":
        d["state"] = {"waiting": {"message": 'Back-off pulling image "' + image + '": ErrImagePull: failed to pull and unpack image "' + image + '": failed to resolve reference "' + image + '": ' + image + ": not found", "reason": "ImagePullBackOff"}}
    return d


def cond(type_: str, status: str, t: str, reason: str | None = None, message: str | None = None, og: bool = False) -> dict:
    d = {"lastProbeTime": None, "lastTransitionTime": P(t), "status": status, "type": type_}
    if reason:
        d["reason"] = reason
    if message:
        d["message"] = message
    if og:
        d["observedGeneration"] = 1
    return d


def qos_of(desc: dict) -> str:
    cs = list(desc["containers"]) + list(desc.get("inits") or [])
    any_set = False
    guaranteed = True
    for c in cs:
        req = c.get("req") or {}
        lim = c.get("lim") or {}
        for r in ("cpu", "memory"):
            if r in req or r in lim:
                any_set = True
            if r not in lim or (r in req and req[r] != lim[r]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


# --------------------------------------------------------------------- pods

def pod_spec(desc: dict, *, template: bool = False, bound: bool = False) -> dict:
    spec: dict = {
        "containers": [container_spec(c, template) for c in desc["containers"]],
        "dnsPolicy": desc.get("dns", "ClusterFirst"),
        "enableServiceLinks": True,
        "restartPolicy": desc.get("restart", "Always"),
        "schedulerName": desc.get("scheduler", "default-scheduler"),
        "securityContext": desc.get("pod_sc", {}),
        "terminationGracePeriodSeconds": desc.get("tgps", 30),
    }
    if desc.get("automount") is False:
        spec["automountServiceAccountToken"] = False
    sa = desc.get("sa", "default")
    spec["serviceAccount"] = sa
    spec["serviceAccountName"] = sa
    if desc.get("inits"):
        spec["initContainers"] = [container_spec(c, template) for c in desc["inits"]]
    if desc.get("node_selector"):
        spec["nodeSelector"] = dict(desc["node_selector"])
    if desc.get("affinity"):
        spec["affinity"] = desc["affinity"]
    if desc.get("runtime_class"):
        spec["runtimeClassName"] = desc["runtime_class"]
    if desc.get("gates"):
        spec["schedulingGates"] = [{"name": g} for g in desc["gates"]]
    if desc.get("spread"):
        spec["topologySpreadConstraints"] = desc["spread"]
    if desc.get("host_network"):
        spec["hostNetwork"] = True
    if desc.get("sts_service") and not template:
        spec["hostname"] = P("name")
        spec["subdomain"] = desc["sts_service"]
    if desc.get("priority_class"):
        spec["priorityClassName"] = desc["priority_class"]
    vols = [dict(v) for v in desc.get("volumes") or []]
    tols = list(desc.get("tolerations") or [])
    if not template:
        # StatefulSet claim volumes come first (the controller puts them there).
        vols = [dict(v) for v in desc.get("pod_volumes") or []] + vols
        if desc.get("owner") == "DaemonSet":
            # The DaemonSet controller adds its tolerations and replaces the
            # required node affinity by the node's name (matchFields).
            tols = tols + (DS_TOLERATIONS_HOSTNET if desc.get("host_network") else DS_TOLERATIONS)
            aff = json.loads(json.dumps(desc.get("affinity") or {}))
            aff.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [P("node")]}]}]}
            spec["affinity"] = aff
        else:
            tols = tols + DEFAULT_TOLERATIONS
        if desc.get("automount", True):
            vols.append(token_volume())  # ServiceAccount admission (containers: token=False then)
        spec["preemptionPolicy"] = "PreemptLowerPriority"
        spec["priority"] = desc.get("priority", 0)
        if desc.get("overhead"):
            spec["overhead"] = dict(desc["overhead"])
        if bound:
            spec["nodeName"] = P("node")
    if tols:
        spec["tolerations"] = tols
    if vols:
        spec["volumes"] = vols
    return spec


def pod_metadata(desc: dict) -> dict:
    md: dict = {
        "creationTimestamp": P("t0"),
        "generation": 1,
        "labels": dict(desc.get("labels") or {}),
        "name": P("name"),
        "namespace": P("ns"),
        "resourceVersion": P("rv"),
        "uid": P("uid"),
    }
    ann = dict(desc.get("annotations") or {})
    if desc.get("owner") is None and desc.get("applied"):
        ann[LAST_APPLIED] = MARKER
    if ann:
        md["annotations"] = ann
    owner = desc.get("owner")
    if owner:
        api = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "Job": "batch/v1"}[owner]
        md["ownerReferences"] = [{"apiVersion": api, "blockOwnerDeletion": True, "controller": True, "kind": owner, "name": P("oname"), "uid": P("ouid")}]
        if owner != "StatefulSet":
            md["generateName"] = P("gen")
    if desc.get("finalizers"):
        md["finalizers"] = list(desc["finalizers"])
    if not md["labels"]:
        del md["labels"]
    return md


def pod_obj(desc: dict, state: str) -> dict:
    """A whole Pod in a given state.

    state: running | crashloop | succeeded | failed | oom | evicted |
           unsched (PodScheduled False, message placeholder ``msg``) |
           gated | nocond (unserved schedulerName) |
           creating | imagepull | initrunning (bound, Pending)
    """
    bound = state not in ("unsched", "gated", "nocond")
    inits = list(desc.get("inits") or [])
    ctrs = list(desc["containers"])
    st: dict = {"qosClass": qos_of(desc)}
    cn = [c["name"] for c in ctrs]
    unready = "containers with unready status: [" + " ".join(cn) + "]"

    def statuses(app_state: str, init_state_plain: str, init_state_sidecar: str):
        ics = []
        for i, c in enumerate(inits):
            s = init_state_sidecar if c.get("restart") == "Always" else init_state_plain
            ics.append(container_status(c, f"icid{i}", s, init=True))
        acs = [container_status(c, f"cid{i}", app_state) for i, c in enumerate(ctrs)]
        if ics:
            st["initContainerStatuses"] = ics
        st["containerStatuses"] = acs

    def placed(ip: bool = True):
        st["hostIP"] = P("hip")
        st["hostIPs"] = [{"ip": P("hip")}]
        if ip:
            st["podIP"] = P("pip")
            st["podIPs"] = [{"ip": P("pip")}]
        st["startTime"] = P("t1")

    if state == "running":
        st["conditions"] = [cond("PodReadyToStartContainers", "True", "t1"), cond("Initialized", "True", "t2"), cond("Ready", "True", "t3"), cond("ContainersReady", "True", "t3"), cond("PodScheduled", "True", "t1")]
        statuses("running", "terminated-ok", "running")
        placed()
        st["phase"] = "Running"
    elif state == "crashloop":
        msg = unready
        st["conditions"] = [cond("PodReadyToStartContainers", "True", "t1"), cond("Initialized", "True", "t1"), cond("Ready", "False", "t3", "ContainersNotReady", msg), cond("ContainersReady", "False", "t3", "ContainersNotReady", msg), cond("PodScheduled", "True", "t1")]
        statuses("crashloop", "terminated-ok", "running")
        placed()
        st["phase"] = "Running"
    elif state in ("succeeded", "failed", "oom"):
        reason = "PodCompleted" if state == "succeeded" else "PodFailed"
        st["conditions"] = [cond("PodReadyToStartContainers", "False", "t3"), cond("Initialized", "True", "t2", "PodCompleted" if state == "succeeded" else None), cond("Ready", "False", "t3", reason), cond("ContainersReady", "False", "t3", reason), cond("PodScheduled", "True", "t1")]
        statuses({"succeeded": "terminated-ok", "failed": "terminated-err", "oom": "oom"}[state], "terminated-ok", "terminated-ok")
        placed()
        st["phase"] = "Succeeded" if state == "succeeded" else "Failed"
    elif state == "evicted":
        st["conditions"] = [cond("DisruptionTarget", "True", "t3", "TerminationByKubelet", "The node was low on resource: memory. Threshold quantity: 100Mi, available: 92160Ki. "), cond("PodReadyToStartContainers", "False", "t3"), cond("Initialized", "True", "t2"), cond("Ready", "False", "t3", "PodFailed"), cond("ContainersReady", "False", "t3", "PodFailed"), cond("PodScheduled", "True", "t1")]
        statuses("unknown", "terminated-ok", "unknown")
        st["message"] = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 92160Ki. Container " + cn[0] + " was using 3145728Ki, request is 512Mi, has larger consumption of memory. "
        st["reason"] = "Evicted"
        placed()
        st["phase"] = "Failed"
    elif state == "unsched":
        st["conditions"] = [cond("PodScheduled", "False", "t1", "Unschedulable", P("msg"), og=True)]
        st["phase"] = "Pending"
    elif state == "gated":
        st["conditions"] = [cond("PodScheduled", "False", "t0", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates", og=True)]
        st["phase"] = "Pending"
    elif state == "nocond":
        st["phase"] = "Pending"
    elif state == "creating":
        st["conditions"] = [cond("PodReadyToStartContainers", "False", "t1"), cond("Initialized", "True", "t1"), cond("Ready", "False", "t1", "ContainersNotReady", unready), cond("ContainersReady", "False", "t1", "ContainersNotReady", unready), cond("PodScheduled", "True", "t1")]
        statuses("creating", "creating", "creating")
        placed(ip=False)
        st["phase"] = "Pending"
    elif state == "imagepull":
        st["conditions"] = [cond("PodReadyToStartContainers", "True", "t2"), cond("Initialized", "True", "t1"), cond("Ready", "False", "t1", "ContainersNotReady", unready), cond("ContainersReady", "False", "t1", "ContainersNotReady", unready), cond("PodScheduled", "True", "t1")]
        statuses("imagepull", "terminated-ok", "running")
        placed()
        st["phase"] = "Pending"
    elif state == "initrunning":
        plain = [c["name"] for c in inits if c.get("restart") != "Always"]
        msg = "containers with incomplete status: [" + " ".join(plain) + "]"
        st["conditions"] = [cond("PodReadyToStartContainers", "True", "t2"), cond("Initialized", "False", "t1", "ContainersNotInitialized", msg), cond("Ready", "False", "t1", "ContainersNotReady", unready), cond("ContainersReady", "False", "t1", "ContainersNotReady", unready), cond("PodScheduled", "True", "t1")]
        ics = []
        for i, c in enumerate(inits):
            s = "running"
            cs = container_status(c, f"icid{i}", s, init=True)
            if c.get("restart") != "Always":
                cs["ready"] = False
            ics.append(cs)
        st["initContainerStatuses"] = ics
        st["containerStatuses"] = [container_status(c, f"cid{i}", "podinit") for i, c in enumerate(ctrs)]
        placed()
        st["phase"] = "Pending"
    else:  # pragma: no cover
        raise ValueError(state)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_metadata(desc), "spec": pod_spec(desc, bound=bound), "status": st}


def pod_template(desc: dict, extra_labels: dict | None = None) -> dict:
    labels = dict(desc.get("labels") or {})
    for k in ("pod-template-hash", "controller-revision-hash", "pod-template-generation", "batch.kubernetes.io/controller-uid",
              "controller-uid", "batch.kubernetes.io/job-name", "job-name", "statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index"):
        labels.pop(k, None)
    if extra_labels:
        labels.update(extra_labels)
    md: dict = {"labels": labels} if labels else {}
    md["creationTimestamp"] = None
    ann = {k: v for k, v in (desc.get("annotations") or {}).items()}
    if ann:
        md["annotations"] = ann
    return {"metadata": md, "spec": pod_spec(desc, template=True)}


# -------------------------------------------------------------------- nodes

NODE_CONDITIONS = [
    ("FrequentUnregisterNetDevice", "False", "NoFrequentUnregisterNetDevice", "node is functioning properly"),
    ("FrequentKubeletRestart", "False", "NoFrequentKubeletRestart", "kubelet is functioning properly"),
    ("FrequentDockerRestart", "False", "NoFrequentDockerRestart", "docker is functioning properly"),
    ("FrequentContainerdRestart", "False", "NoFrequentContainerdRestart", "containerd is functioning properly"),
    ("KernelDeadlock", "False", "KernelHasNoDeadlock", "kernel has no deadlock"),
    ("ReadonlyFilesystem", "False", "FilesystemIsNotReadOnly", "Filesystem is not read-only"),
    ("CorruptDockerOverlay2", "False", "NoCorruptDockerOverlay2", "docker overlay2 is functioning properly"),
]


def node_obj(pool: dict, state: str) -> dict:
    """state: ok | cordoned | noplugin | alloczero."""
    labels = dict(pool["labels"])
    labels["kubernetes.io/hostname"] = P("name")
    labels["failure-domain.beta.kubernetes.io/zone"] = P("zone")
    labels["topology.gke.io/zone"] = P("zone")
    labels["topology.kubernetes.io/zone"] = P("zone")
    cap = dict(pool["capacity"])
    alloc = dict(pool["allocatable"])
    if state == "noplugin":
        for k in list(cap):
            if k.startswith("nvidia.com/"):
                cap.pop(k)
                alloc.pop(k)
        labels.pop("nvidia.com/gpu.count", None)
    elif state == "alloczero":
        for k in list(alloc):
            if k.startswith("nvidia.com/"):
                alloc[k] = "0"
    spec: dict = {"podCIDR": P("cidr"), "podCIDRs": [P("cidr")], "providerID": "gce://prod-ml-platform/" + P("zone") + "/" + P("name")}
    taints = [dict(t) for t in pool.get("taints") or []]
    if state == "cordoned":
        spec["unschedulable"] = True
        taints.append({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": P("tc")})
    if taints:
        spec["taints"] = taints
    conds = [cond_n(t, s, r, m) for t, s, r, m in NODE_CONDITIONS]
    conds.append({"lastHeartbeatTime": P("tn0"), "lastTransitionTime": P("tn0"), "message": "RouteController created a route", "reason": "RouteCreated", "status": "False", "type": "NetworkUnavailable"})
    conds += [
        cond_n("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        cond_n("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond_n("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        cond_n("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    annotations = {
        "container.googleapis.com/instance_id": P("iid"),
        "csi.volume.kubernetes.io/nodeid": '{"pd.csi.storage.gke.io":"projects/prod-ml-platform/zones/' + P("zone") + "/instances/" + P("name") + '"}',
        "node.alpha.kubernetes.io/ttl": "0",
        "node.gke.io/last-applied-node-labels": ",".join(f"{k}={v}" for k, v in sorted(pool["labels"].items()) if not k.startswith("nvidia.com/")),
        "node.gke.io/last-applied-node-taints": ",".join(f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in pool.get("taints") or []),
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    images = [{"names": [n.split(":")[0] + "@sha256:" + digest_of(n), n], "sizeBytes": s} for n, s in pool["images"]]
    handlers = [{"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": ""},
                {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": "runc"}]
    for extra in pool.get("handlers") or ():
        handlers.insert(1, {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": extra})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"annotations": annotations, "creationTimestamp": P("t0"), "labels": labels, "name": P("name"), "resourceVersion": P("rv"), "uid": P("uid")},
        "spec": spec,
        "status": {
            "addresses": [{"address": P("ip"), "type": "InternalIP"}, {"address": P("name"), "type": "Hostname"}],
            "allocatable": alloc,
            "capacity": cap,
            "conditions": conds,
            "config": {},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "features": {"supplementalGroupsPolicy": True},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": P("boot"),
                "containerRuntimeVersion": "containerd://2.0.5",
                "kernelVersion": "6.6.87+",
                "kubeProxyVersion": "",
                "kubeletVersion": "v1.36.2-gke.1200",
                "machineID": P("mid"),
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
                "systemUUID": P("boot"),
            },
            "runtimeHandlers": handlers,
        },
    }


def cond_n(t, s, r, m):
    return {"lastHeartbeatTime": P("tn1"), "lastTransitionTime": P("tn0"), "message": m, "reason": r, "status": s, "type": t}


# --------------------------------------------------------------------- owners

def _owner_md(kind_applied: bool, labels: dict, annotations: dict | None = None, owner: tuple | None = None) -> dict:
    md: dict = {"creationTimestamp": P("t0"), "generation": RAW("gen_n"), "labels": labels, "name": P("name"), "namespace": P("ns"), "resourceVersion": P("rv"), "uid": P("uid")}
    ann = dict(annotations or {})
    if kind_applied:
        ann[LAST_APPLIED] = MARKER
    if ann:
        md["annotations"] = ann
    if owner:
        api, kind = owner
        md["ownerReferences"] = [{"apiVersion": api, "blockOwnerDeletion": True, "controller": True, "kind": kind, "name": P("oname"), "uid": P("ouid")}]
    if not labels:
        del md["labels"]
    return md


def replicaset_obj(desc: dict, refused: bool, *, ready: bool = True, existing: bool = True) -> dict:
    """ready/existing False: readyReplicas/availableReplicas (fullyLabeledReplicas)
    are 0 and so omitted, as the API server's omitempty does."""
    sel = dict(desc["selector"])
    sel["pod-template-hash"] = P("hash")
    labels = dict(desc["owner_labels"])
    labels.update(desc["selector"])
    labels["pod-template-hash"] = P("hash")
    md = _owner_md(False, labels, {"deployment.kubernetes.io/desired-replicas": P("desired"), "deployment.kubernetes.io/max-replicas": P("maxr"), "deployment.kubernetes.io/revision": P("revision")}, ("apps/v1", "Deployment"))
    status: dict = {"observedGeneration": RAW("gen_n"), "replicas": RAW("existing")}
    if ready:
        status["availableReplicas"] = RAW("ready")
        status["readyReplicas"] = RAW("ready")
    if existing:
        status["fullyLabeledReplicas"] = RAW("existing")
    status["terminatingReplicas"] = 0
    if refused:
        status["conditions"] = [{"lastTransitionTime": P("tf"), "message": P("fmsg"), "reason": "FailedCreate", "status": "True", "type": "ReplicaFailure"}]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": md,
        "spec": {"replicas": RAW("desired_n"), "selector": {"matchLabels": sel}, "template": pod_template(desc, {"pod-template-hash": P("hash")})},
        "status": status,
    }


def replicaset_idle_obj(desc: dict) -> dict:
    """An old revision scaled to 0 (kubectl prints status {replicas: 0, observedGeneration})."""
    o = replicaset_obj(desc, False)
    o["status"] = {"observedGeneration": RAW("gen_n"), "replicas": 0}
    return o


def job_obj(desc: dict, state: str, cron: bool) -> dict:
    """state: complete | failed | running | refused."""
    sel_uid = P("uid")
    tl = {"batch.kubernetes.io/controller-uid": sel_uid, "batch.kubernetes.io/job-name": P("name"), "controller-uid": sel_uid, "job-name": P("name")}
    labels = dict(desc["owner_labels"]) if desc.get("owner_labels") else {}
    labels.update(tl)
    md = _owner_md(not cron, labels, None, ("batch/v1", "CronJob") if cron else None)
    tpl = pod_template(desc, tl)
    spec = {
        "backoffLimit": desc.get("backoff", 6),
        "completionMode": "NonIndexed",
        "completions": RAW("completions"),
        "manualSelector": False,
        "parallelism": RAW("parallelism"),
        "podReplacementPolicy": "TerminatingOrFailed",
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": sel_uid}},
        "suspend": False,
        "template": tpl,
    }
    if desc.get("ttl") is not None:
        spec["ttlSecondsAfterFinished"] = desc["ttl"]
    status: dict = {"startTime": P("t1"), "terminating": 0, "uncountedTerminatedPods": {}}
    if state == "complete":
        status.update({"completionTime": P("t3"), "ready": 0, "succeeded": RAW("succeeded"),
                       "conditions": [{"lastProbeTime": P("t3"), "lastTransitionTime": P("t3"), "message": "Reached expected number of succeeded pods", "reason": "CompletionsReached", "status": "True", "type": "SuccessCriteriaMet"},
                                      {"lastProbeTime": P("t3"), "lastTransitionTime": P("t3"), "message": "Reached expected number of succeeded pods", "reason": "CompletionsReached", "status": "True", "type": "Complete"}]})
    elif state == "failed":
        status.update({"failed": RAW("failed"), "ready": 0,
                       "conditions": [{"lastProbeTime": P("t3"), "lastTransitionTime": P("t3"), "message": "Job has reached the specified backoff limit", "reason": "BackoffLimitExceeded", "status": "True", "type": "FailureTarget"},
                                      {"lastProbeTime": P("t3"), "lastTransitionTime": P("t3"), "message": "Job has reached the specified backoff limit", "reason": "BackoffLimitExceeded", "status": "True", "type": "Failed"}]})
    elif state == "running":
        status.update({"active": RAW("active"), "ready": RAW("ready")})
    elif state == "refused":
        status.update({"ready": 0})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": spec, "status": status}


def statefulset_obj(desc: dict) -> dict:
    labels = dict(desc["owner_labels"])
    md = _owner_md(True, labels)
    spec = {
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "podManagementPolicy": desc.get("pmp", "OrderedReady"),
        "replicas": RAW("desired_n"),
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": dict(desc["selector"])},
        "serviceName": desc["sts_service"],
        "template": pod_template(desc),
        "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
    }
    if desc.get("claims"):
        spec["volumeClaimTemplates"] = [
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"creationTimestamp": None, "name": n},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, "storageClassName": sc, "volumeMode": "Filesystem"},
             "status": {"phase": "Pending"}}
            for n, size, sc in desc["claims"]
        ]
    status = {"availableReplicas": RAW("ready"), "collisionCount": 0, "currentReplicas": RAW("existing"), "currentRevision": P("oname") + "-" + P("hash"),
              "observedGeneration": RAW("gen_n"), "readyReplicas": RAW("ready"), "replicas": RAW("existing"), "updateRevision": P("oname") + "-" + P("hash"), "updatedReplicas": RAW("existing")}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": md, "spec": spec, "status": status}


def daemonset_obj(desc: dict, unavailable: bool = False) -> dict:
    labels = dict(desc["owner_labels"])
    md = _owner_md(True, labels, {"deprecated.daemonset.template.generation": "1"})
    spec = {
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": dict(desc["selector"])},
        "template": pod_template(desc),
        "updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"},
    }
    status = {"currentNumberScheduled": RAW("desired"), "desiredNumberScheduled": RAW("desired"), "numberAvailable": RAW("available"),
              "numberMisscheduled": 0, "numberReady": RAW("available"), "observedGeneration": 1, "updatedNumberScheduled": RAW("desired")}
    if unavailable:
        status["numberUnavailable"] = RAW("unavailable")
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": md, "spec": spec, "status": status}


# --------------------------------------------------------------------- events

def event_controller(reason: str, type_: str, component: str, obj_api: str, obj_kind: str, *, host: bool = False, field_path: bool = False) -> dict:
    """Old-style event (count/firstTimestamp/lastTimestamp), as controllers and the kubelet write them."""
    io = {"apiVersion": obj_api, "kind": obj_kind, "name": P("oname"), "namespace": P("ons"), "resourceVersion": P("orv"), "uid": P("ouid")}
    if obj_kind == "Node":
        io = {"apiVersion": "v1", "kind": "Node", "name": P("oname"), "uid": P("ouid")}
    if field_path:
        io["fieldPath"] = P("fpath")
    src = {"component": component}
    if host:
        src["host"] = P("host")
    return {
        "apiVersion": "v1",
        "count": RAW("count"),
        "eventTime": None,
        "firstTimestamp": P("tfirst"),
        "involvedObject": io,
        "kind": "Event",
        "lastTimestamp": P("tlast"),
        "message": P("msg"),
        "metadata": {"creationTimestamp": P("tfirst"), "name": P("name"), "namespace": P("ns"), "resourceVersion": P("rv"), "uid": P("uid")},
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": P("host") if host else "",
        "source": src,
        "type": type_,
    }


def event_scheduler(reason: str, type_: str, action: str, series: bool) -> dict:
    """events.k8s.io-style, as the scheduler writes them (v1.36 lab shape)."""
    d = {
        "action": action,
        "apiVersion": "v1",
        "eventTime": P("etime"),
        "firstTimestamp": None,
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": P("oname"), "namespace": P("ons"), "resourceVersion": P("orv"), "uid": P("ouid")},
        "kind": "Event",
        "lastTimestamp": None,
        "message": P("msg"),
        "metadata": {"creationTimestamp": P("tfirst"), "name": P("name"), "namespace": P("ns"), "resourceVersion": P("rv"), "uid": P("uid")},
        "reason": reason,
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-gke-prod-control-plane",
        "source": {},
        "type": type_,
    }
    if series:
        d["series"] = {"count": RAW("count"), "lastObservedTime": P("tlastobs")}
    return d


# -------------------------------------------------------------- small kinds

def namespace_obj(applied: bool, labels: dict) -> dict:
    md: dict = {"creationTimestamp": P("t0"), "labels": labels, "name": P("name"), "resourceVersion": P("rv"), "uid": P("uid")}
    if applied:
        md["annotations"] = {LAST_APPLIED: MARKER}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def quota_obj(hard: dict, used: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"annotations": {LAST_APPLIED: MARKER}, "creationTimestamp": P("t0"), "name": P("name"), "namespace": P("ns"), "resourceVersion": P("rv"), "uid": P("uid")},
        "spec": {"hard": dict(hard)},
        "status": {"hard": dict(hard), "used": dict(used)},
    }


def runtimeclass_obj(name: str, handler: str, overhead: dict | None, scheduling: dict | None) -> dict:
    d = {
        "apiVersion": "node.k8s.io/v1",
        "handler": handler,
        "kind": "RuntimeClass",
        "metadata": {"annotations": {LAST_APPLIED: MARKER}, "creationTimestamp": P("t0"), "name": name, "resourceVersion": P("rv"), "uid": P("uid")},
    }
    if overhead:
        d["overhead"] = {"podFixed": dict(overhead)}
    if scheduling:
        d["scheduling"] = scheduling
    return d
