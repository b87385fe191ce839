"""Constants and small helpers shared by the generator's modules (quantities, times, containers)."""

from __future__ import annotations

import time

from analyzer.bundle.catalog import KINDS as CATALOG

import bundle_objects as bo
from bundle_objects import MARKER

GPU = "nvidia.com/gpu"
MIG = "nvidia.com/mig-1g.10gb"
EPH = "ephemeral-storage"
KI, GI = 1 << 10, 1 << 30
# Resources the generator accounts per node (what the scheduler would check).
ACCOUNTED = ("cpu", "memory", EPH, GPU, MIG)

CLUSTER = "ml-prod"
PROJECT = "prod-ml-platform"
CONTEXT = f"gke_{PROJECT}_us-central1_{CLUSTER}"
ZONES = ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")
SERVER_VERSION = "v1.36.2-gke.1200"
CLIENT_VERSION = "v1.32.4"

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"

# The words of causes.md that apply to existing pods, in its order.
POD_WORDS = ("no-gpu-request", "scheduling-gated", "image-pull", "node-side", "volume-unbound", "selector-mismatch",
             "resource-name-mismatch", "volume-node-conflict", "cordoned", "untolerated-taint", "no-gpu-node", "allocatable-zero", "pod-affinity",
             "exhausted", "unclassified", "fits-now")

NAMESPACED = {k.name: k.namespaced for k in CATALOG}  # the one kinds catalog


# ===================================================================== helpers

_EPOCH = bo.BASE_EPOCH


def ts(sec_before: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_EPOCH - sec_before))


def ts_micro(sec_before: int, micros: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(_EPOCH - sec_before)) + f".{micros:06d}Z"


def qty(res: str, s: str) -> int:
    """The quantity forms this generator writes -> int (cpu in milli, the rest in units)."""
    if res in ("cpu", "requests.cpu"):
        return int(s[:-1]) if s.endswith("m") else int(s) * 1000
    return bo.qty(res, s)


def env_of(*names: str, fields: tuple[str, ...] = ()) -> list:
    """Env vars: literal ones (the bundle holds only the redaction marker) and downward-API ones."""
    out: list = [(n, MARKER) for n in names]
    paths = {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_IP": "status.podIP",
             "NODE_NAME": "spec.nodeName", "HOST_IP": "status.hostIP"}
    for f in fields:
        out.append((f, {"fieldRef": {"apiVersion": "v1", "fieldPath": paths[f]}}))
    return out


def C(name: str, image: str, cpu: str, mem: str, *, lcpu: str | None = None, lmem: str | None = None,
      gpu: int = 0, res: str = GPU, eph: str | None = None, **kw) -> dict:
    """One container description for bundle_objects.container_spec."""
    req = {"cpu": cpu, "memory": mem}
    if eph:
        req[EPH] = eph
    lim: dict = {}
    if lcpu:
        lim["cpu"] = lcpu
    if lmem:
        lim["memory"] = lmem
    if gpu:
        lim[res] = str(gpu)
    d = {"name": name, "image": image, "req": req, "lim": lim}
    d.update(kw)
    return d


def container_requests(c: dict) -> dict[str, int]:
    out = {k: qty(k, v) for k, v in (c.get("lim") or {}).items()}
    out.update({k: qty(k, v) for k, v in (c.get("req") or {}).items()})
    return out


def _add(into: dict, more: dict) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def effective_requests(desc: dict) -> dict[str, int]:
    """causes.md's effective request: max(app containers + sidecars, each init + the sidecars
    started before it), plus spec.overhead."""
    total: dict[str, int] = {}
    for c in desc["containers"]:
        _add(total, container_requests(c))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in desc.get("inits") or ():
        r = container_requests(c)
        if c.get("restart") == "Always":
            _add(total, r)
            _add(sidecars, r)
            cur = dict(sidecars)
        else:
            cur = dict(sidecars)
            _add(cur, r)
        for k, v in cur.items():
            init_max[k] = max(init_max.get(k, 0), v)
    for k, v in init_max.items():
        if v > total.get(k, 0):
            total[k] = v
    for k, v in (desc.get("overhead") or {}).items():
        total[k] = total.get(k, 0) + qty(k, v)
    return total


# ===================================================================== node pools


TEAMS = {
    "ml-training": "ml-platform", "ml-inference": "ml-platform", "research": "research", "vision": "vision",
    "nlp": "nlp", "recsys": "recsys", "web": "web", "shop": "commerce", "payments": "commerce", "search": "search",
    "data-pipeline": "data", "analytics": "data", "platform": "platform", "batch": "data", "monitoring": "sre",
    "kube-system": "gke", "default": "platform",
}
QUOTA_NAMESPACES = ("ml-training", "ml-inference", "research", "vision", "nlp", "recsys", "batch")
WORDS = ("atlas", "beacon", "cobalt", "delta", "ember", "falcon", "garnet", "harbor", "iris", "juniper", "kestrel",
         "lumen", "meridian", "nova", "onyx", "pioneer", "quartz", "raven", "sierra", "tundra", "umbra", "vortex",
         "willow", "xenon", "yarrow", "zephyr", "amber", "birch", "cedar", "dune", "echo", "fjord", "glacier",
         "hollow", "indigo", "jasper", "kite", "lotus", "maple", "nectar", "orbit", "pebble", "quill", "ridge",
         "sable", "thistle", "upland", "violet", "wren", "yukon")
