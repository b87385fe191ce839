"""Nodes, owners (ReplicaSets, Jobs, StatefulSets, DaemonSets), events, namespaces, quotas and RuntimeClasses."""

from __future__ import annotations

from bundle_objects.base import LAST_APPLIED, MARKER, P, RAW, digest_of
from bundle_objects.pods import pod_template


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
