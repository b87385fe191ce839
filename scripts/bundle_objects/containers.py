"""Tolerations, containers and their statuses, conditions: the parts of a pod."""

from __future__ import annotations

from bundle_objects.base import MARKER, P, RAW, digest_of


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
