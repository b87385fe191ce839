"""Pods as kubectl prints them: spec, metadata, status per state, templates for owners."""

from __future__ import annotations

import json

from bundle_objects.base import LAST_APPLIED, MARKER, P
from bundle_objects.containers import DEFAULT_TOLERATIONS, DS_TOLERATIONS, DS_TOLERATIONS_HOSTNET, cond, container_spec, container_status, token_volume


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
