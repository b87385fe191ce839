#!/usr/bin/env python3
"""Write a synthetic, internally consistent gpu-triage bundle of N nodes and M pods.

    python scripts/generate_bundle.py --nodes 500 --pods 15000 --seed 1 --out /tmp/gen-med \\
        [--truth /tmp/gen-med.truth.tsv] [--pending-percent 3] [--force] [--dra] [--node-side]

The bundle is what `scripts/collect.py` would write for a GKE-like cluster
(v1.36): every `<resource>.json` in kubectl's List shape and indentation (4
spaces, keys sorted, final newline), `version.json`, and `manifest.json` with
sizes, sha256 and redaction counts (env values and last-applied annotations
carry the collector's marker). Objects come from ``bundle_objects.py``
(pre-encoded templates), so 150,000 pods (~1.6 GB) stream to disk in minutes.

Deterministic: one ``random.Random(seed)`` drives every choice, names and
uids are hashes of the seed, and every time is an offset from a fixed clock;
the same arguments give the same bytes.

The cluster: GPU node pools (H100 x8 and A100 x4 tainted ``nvidia.com/gpu=
present:NoSchedule``, L4 x4 untainted, an A100 MIG pool with
``nvidia.com/mig-1g.10gb``, an L4 spot pool whose device plugin never came
up), CPU pools, a few cordoned nodes, single GPU nodes without the plugin
and with allocatable 0; DaemonSet pods on every node, Deployments
(ReplicaSets), Jobs (some from CronJobs), StatefulSets and bare pods; init
containers and native sidecars; RuntimeClass overhead; Succeeded and Failed
pods that keep their nodeName; per-namespace quotas whose status.used is the
sum over the namespace's non-terminated pods.

A few percent of the pods are Pending, built so that exactly one cause word of
shared/spec/causes.md holds (see Generator.make_scenarios), plus a ReplicaSet
refused by quota and a Job refused for a missing RuntimeClass (FailedCreate
events, owners short of replicas). Scheduler messages (PodScheduled condition
and FailedScheduling event, v1.36 wording) are rebuilt from the final world;
for fits-now they are deliberately stale. The one deliberate overcommit: a
node whose GPUs went unhealthy (allocatable 0) still runs the pod it had.
``--truth FILE`` writes the intended word per target: ``namespace/name<TAB>word``
(owners ``namespace/replicaset/NAME``, ``namespace/job/NAME``), sorted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analyzer.bundle.catalog import KINDS as CATALOG  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bundle_objects as bo  # noqa: E402
from bundle_objects import GPU_TOLERATION, MARKER, P, Tpl, js  # noqa: E402

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
             "resource-name-mismatch", "cordoned", "untolerated-taint", "no-gpu-node", "allocatable-zero", "pod-affinity",
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

IMAGES_BASE = [
    ("gke.gcr.io/gke-metadata-server:20260910_2300_RC0", 126412911),
    ("gke.gcr.io/fluent-bit:v1.8.12-gke.41", 84326112),
    ("gke.gcr.io/gcp-compute-persistent-disk-csi-driver:v1.15.3-gke.0", 23146987),
    ("gke.gcr.io/cilium/cilium:v1.16.7-gke.300", 246118020),
    ("quay.io/prometheus/node-exporter:v1.8.2", 11748305),
    ("gke.gcr.io/csi-node-driver-registrar:v2.11.1-gke.12", 11214519),
    ("gcr.io/istio-release/proxyv2:1.24.1", 97331440),
]
IMAGES_GPU = [
    ("nvcr.io/nvidia/pytorch:24.09-py3", 9912412411),
    ("vllm/vllm-openai:v0.6.3.post1", 5126612221),
    ("nvcr.io/nvidia/tritonserver:24.09-py3", 7323120177),
    ("gke.gcr.io/nvidia-gpu-device-plugin:v0.16.2-gke.7", 58213115),
    ("nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04", 343221003),
]
IMAGES_CPU = [
    ("us-docker.pkg.dev/prod-ml-platform/apps/web:2026.11.4", 143212003),
    ("us-docker.pkg.dev/prod-ml-platform/apps/api:2026.11.2", 211332102),
    ("postgres:16.4", 157331201),
    ("redis:7.4.1", 44012391),
]


def _pool(name: str, machine: str, family: str, cpu: int, mem_gi: int, *, weight: float, minimum: int,
          gpu: dict | None = None, taint: bool = False, noplugin: bool = False, spot: bool = False,
          handlers: tuple = ()) -> dict:
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": machine,
        "beta.kubernetes.io/os": "linux",
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-cpu-scaling-level": str(cpu),
        "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/gke-max-pods-per-node": "110",
        "cloud.google.com/gke-nodepool": name,
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/gke-provisioning": "spot" if spot else "standard",
        "cloud.google.com/gke-stack-type": "IPV4",
        "cloud.google.com/machine-family": family,
        "cloud.google.com/private-node": "false",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": machine,
    }
    if spot:
        labels["cloud.google.com/gke-spot"] = "true"
    cap_ki = mem_gi * 1024 * 1024 - 2_133_412
    alloc_ki = cap_ki - (cap_ki * 3 // 100) - 102_400
    cpu_alloc_m = cpu * 1000 - (60 + 10 + 10 + max(0, cpu - 4) * 25 // 10)
    capacity = {"cpu": str(cpu), EPH: "202445884Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                "memory": f"{cap_ki}Ki", "pods": "110"}
    allocatable = {"cpu": f"{cpu_alloc_m}m", EPH: "75850396219", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                   "memory": f"{alloc_ki}Ki", "pods": "110"}
    taints = []
    images = list(IMAGES_BASE)
    if gpu:
        labels.update({
            "cloud.google.com/gke-accelerator": gpu["accel"],
            "cloud.google.com/gke-gpu": "true",
            "cloud.google.com/gke-gpu-driver-version": "default",
            "nvidia.com/gpu.count": str(gpu["count"]),
            "nvidia.com/gpu.memory": gpu["memory"],
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": gpu["product"],
        })
        capacity[GPU] = allocatable[GPU] = str(gpu["count"])
        if gpu.get("mig"):
            capacity[MIG] = allocatable[MIG] = str(gpu["mig"])
            labels["nvidia.com/mig.strategy"] = "mixed"
        if taint:
            taints.append({"effect": "NoSchedule", "key": GPU, "value": "present"})
        images += IMAGES_GPU
        handlers = ("nvidia",) + tuple(handlers)
    else:
        images += IMAGES_CPU
    return {
        "name": name, "machine": machine, "weight": weight, "min": minimum, "gpu": gpu, "noplugin": noplugin,
        "labels": labels, "capacity": capacity, "allocatable": allocatable, "taints": taints,
        "images": images, "handlers": handlers,
        "alloc": {"cpu": cpu_alloc_m, "memory": alloc_ki * KI, EPH: 75850396219, "pods": 110,
                  GPU: gpu["count"] if gpu else 0, MIG: gpu.get("mig", 0) if gpu else 0},
    }


H100 = {"accel": "nvidia-h100-80gb", "product": "NVIDIA-H100-80GB-HBM3", "count": 8, "memory": "81559"}
A100 = {"accel": "nvidia-tesla-a100", "product": "NVIDIA-A100-SXM4-40GB", "count": 4, "memory": "40960"}
L4 = {"accel": "nvidia-l4", "product": "NVIDIA-L4", "count": 4, "memory": "23034"}
A100_MIG = {"accel": "nvidia-a100-80gb", "product": "NVIDIA-A100-SXM4-80GB", "count": 4, "memory": "81920", "mig": 28}
L4_SPOT = {"accel": "nvidia-l4", "product": "NVIDIA-L4", "count": 2, "memory": "23034"}


def make_pools() -> list[dict]:
    return [
        _pool("h100-pool", "a3-highgpu-8g", "a3", 208, 1872, weight=12, minimum=3, gpu=H100, taint=True),
        _pool("a100-pool", "a2-highgpu-4g", "a2", 48, 340, weight=9, minimum=2, gpu=A100, taint=True),
        _pool("l4-pool", "g2-standard-48", "g2", 48, 192, weight=7, minimum=3, gpu=L4),
        _pool("a100-mig-pool", "a2-ultragpu-8g", "a2", 96, 1360, weight=1.5, minimum=1, gpu=A100_MIG, taint=True),
        _pool("l4-spot-pool", "g2-standard-24", "g2", 24, 96, weight=0.3, minimum=1, gpu=L4_SPOT, taint=True,
              noplugin=True, spot=True),
        _pool("default-pool", "n2-standard-32", "n2", 32, 128, weight=52, minimum=4, handlers=("runsc",)),
        _pool("highmem-pool", "n2-highmem-32", "n2", 32, 256, weight=15, minimum=1, handlers=("runsc",)),
        _pool("system-pool", "e2-standard-8", "e2", 8, 32, weight=3.2, minimum=1),
    ]


class Node:
    __slots__ = ("name", "pool", "state", "zone", "ip", "cidr", "t0", "uid", "labels", "taints",
                 "unschedulable", "alloc", "used", "npods", "ip_next", "index")

    def __init__(self, name: str, pool: dict, state: str, zone: str, index: int) -> None:
        self.name = name
        self.pool = pool
        self.state = state
        self.zone = zone
        self.index = index
        self.ip = f"10.128.{index // 250}.{index % 250 + 2}"
        self.cidr = f"10.{64 + index // 256}.{index % 256}.0/24"
        self.ip_next = 2
        self.labels = dict(pool["labels"])
        self.labels["kubernetes.io/hostname"] = name
        self.labels["topology.kubernetes.io/zone"] = zone
        self.labels["failure-domain.beta.kubernetes.io/zone"] = zone
        self.labels["topology.gke.io/zone"] = zone
        self.taints = [(t["key"], t.get("value", ""), t["effect"]) for t in pool["taints"]]
        self.unschedulable = state == "cordoned"
        if self.unschedulable:
            self.taints.append((UNSCHEDULABLE_KEY, "", "NoSchedule"))
        # What the scheduler can hand out (status.allocatable; absent counts as 0). The node
        # objects themselves come from bundle_objects.node_obj with the same state.
        alloc = dict(pool["alloc"])
        if state in ("noplugin", "alloczero") or pool["noplugin"]:
            alloc[GPU] = alloc[MIG] = 0
        if state == "noplugin" or pool["noplugin"]:
            self.labels.pop("nvidia.com/gpu.count", None)
        self.alloc = alloc
        self.used = {k: 0 for k in ACCOUNTED}
        self.npods = 0

    def fits(self, req: dict[str, int]) -> bool:
        if self.npods >= self.alloc["pods"]:
            return False
        used, alloc = self.used, self.alloc
        for k, v in req.items():
            if v and used[k] + v > alloc[k]:
                return False
        return True

    def take(self, req: dict[str, int]) -> None:
        for k, v in req.items():
            self.used[k] += v
        self.npods += 1

    def next_ip(self) -> str:
        n = self.ip_next
        self.ip_next += 1
        base = self.cidr.rsplit(".", 1)[0]
        return f"{base}.{n % 254 + 1}"


# ===================================================================== shapes

ISTIO = "gcr.io/istio-release/proxyv2:1.24.1"
SC_APP = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
          "runAsNonRoot": True, "runAsUser": 1000}
SC_ISTIO = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "privileged": False,
            "readOnlyRootFilesystem": True, "runAsGroup": 1337, "runAsNonRoot": True, "runAsUser": 1337}
SC_ISTIO_INIT = {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]},
                 "privileged": False, "readOnlyRootFilesystem": False, "runAsGroup": 0, "runAsNonRoot": False, "runAsUser": 0}


def istio(desc: dict, app_port: int) -> dict:
    """Istio in native-sidecar mode: an ordinary init container and a restartable proxy."""
    env = env_of("PROXY_CONFIG", "ISTIO_META_CLUSTER_ID", "ISTIO_META_WORKLOAD_NAME", "ISTIO_KUBE_APP_PROBERS",
                 fields=("POD_NAME", "POD_NAMESPACE", "POD_IP"))
    mounts = [("istiod-ca-cert", "/var/run/secrets/istio", False), ("istio-data", "/var/lib/istio/data", False),
              ("istio-envoy", "/etc/istio/proxy", False), ("istio-token", "/var/run/secrets/tokens", False),
              ("istio-podinfo", "/etc/istio/pod", False)]
    init = C("istio-init", ISTIO, "10m", "40Mi", lcpu="2", lmem="1Gi",
             args=["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-b", "*",
                   "-d", "15090,15021,15020"], sc=SC_ISTIO_INIT)
    proxy = C("istio-proxy", ISTIO, "100m", "128Mi", lcpu="2", lmem="1Gi", restart="Always", env=env,
              args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning"],
              ports=[("http-envoy-prom", 15090)], probe=(15021, "/healthz/ready"), mounts=mounts, sc=SC_ISTIO)
    desc["inits"] = [init, proxy] + list(desc.get("inits") or [])
    vols = [{"emptyDir": {"medium": "Memory"}, "name": "istio-envoy"},
            {"emptyDir": {}, "name": "istio-data"},
            {"downwardAPI": {"defaultMode": 420, "items": [
                {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}, "path": "labels"},
                {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations"}, "path": "annotations"}]},
             "name": "istio-podinfo"},
            {"name": "istio-token", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"audience": "istio-ca", "expirationSeconds": 43200, "path": "istio-token"}}]}},
            {"configMap": {"defaultMode": 420, "name": "istio-ca-root-cert"}, "name": "istiod-ca-cert"}]
    desc["volumes"] = vols + list(desc.get("volumes") or [])
    ann = dict(desc.get("annotations") or {})
    ann.update({
        "istio.io/rev": "default",
        "kubectl.kubernetes.io/default-container": desc["containers"][0]["name"],
        "kubectl.kubernetes.io/default-logs-container": desc["containers"][0]["name"],
        "prometheus.io/path": "/stats/prometheus",
        "prometheus.io/port": "15020",
        "prometheus.io/scrape": "true",
        "sidecar.istio.io/status": json.dumps({
            "initContainers": ["istio-init", "istio-proxy"], "containers": None,
            "volumes": ["istio-envoy", "istio-data", "istio-podinfo", "istio-token", "istiod-ca-cert"],
            "imagePullSecrets": None, "revision": "default"}, separators=(",", ":")),
    })
    desc["annotations"] = ann
    labels = dict(desc.get("labels") or {})
    labels.update({"security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": P("app"),
                   "service.istio.io/canonical-revision": "latest"})
    desc["labels"] = labels
    return desc


def gpu_volumes(shm: str = "16Gi") -> list:
    return [{"emptyDir": {"medium": "Memory", "sizeLimit": shm}, "name": "dshm"},
            {"emptyDir": {}, "name": "model-cache"}]


GPU_MOUNTS = [("dshm", "/dev/shm", False), ("model-cache", "/root/.cache/huggingface", False)]


def owner_labels(kind: str) -> dict:
    """Labels of a pod for its owner kind (placeholders filled per workload / per pod)."""
    base = {"app": P("app"), "app.kubernetes.io/name": P("app"), "app.kubernetes.io/part-of": P("team"),
            "team": P("team")}
    if kind == "ReplicaSet":
        base["pod-template-hash"] = P("hash")
    elif kind == "Job":
        base.update({"batch.kubernetes.io/controller-uid": P("ouid"), "batch.kubernetes.io/job-name": P("oname"),
                     "controller-uid": P("ouid"), "job-name": P("oname")})
    elif kind == "StatefulSet":
        base.update({"apps.kubernetes.io/pod-index": P("idx"), "controller-revision-hash": P("crh"),
                     "statefulset.kubernetes.io/pod-name": P("name")})
    elif kind == "DaemonSet":
        base = {"k8s-app": P("app"), "controller-revision-hash": P("crh"), "pod-template-generation": "1"}
    return base


def selector_of(kind: str) -> dict:
    return {"k8s-app": P("app")} if kind == "DaemonSet" else {"app": P("app")}


def desc_base(owner: str | None, containers: list, **kw) -> dict:
    d = {"owner": owner, "containers": containers, "labels": owner_labels(owner or "Pod"),
         "owner_labels": {"app.kubernetes.io/name": P("app"), "team": P("team")}, "selector": selector_of(owner or "Pod")}
    if owner is None:
        d["labels"] = {"app": P("app"), "team": P("team")}
    d.update(kw)
    return d


# -- GPU shapes -----------------------------------------------------------------------------

def sel_accel(gpu: dict) -> dict:
    return {"cloud.google.com/gke-accelerator": gpu["accel"]}


def sel_pool(pool: str) -> dict:
    return {"cloud.google.com/gke-nodepool": pool}


def vllm_desc(owner: str | None, gpus: int, sel: dict, tol: bool, cpu: str, mem: str, *, image: str = "vllm/vllm-openai:v0.6.3.post1",
              res: str = GPU, **kw) -> dict:
    c = C("vllm", image, cpu, mem, lmem=mem, gpu=gpus, res=res,
          args=["--model", "/models/llama-3.1-8b-instruct", "--tensor-parallel-size", str(max(1, gpus)),
                "--max-model-len", "8192", "--gpu-memory-utilization", "0.92", "--port", "8000"],
          env=env_of("HF_TOKEN", "VLLM_LOGGING_LEVEL", fields=("POD_NAME",)),
          ports=[("http", 8000)], probe=(8000, "/health"), mounts=GPU_MOUNTS)
    return desc_base(owner, [c], node_selector=sel, tolerations=[GPU_TOLERATION] if tol else [],
                     volumes=gpu_volumes(), priority_class="ml-serving", priority=100000, **kw)


def trainer_desc(owner: str | None, gpus: int, sel: dict | None, tol: bool, cpu: str, mem: str, *, res: str = GPU,
                 restart: str = "Never", **kw) -> dict:
    fetch = C("fetch-dataset", "gcr.io/google.com/cloudsdktool/google-cloud-cli:497.0.0-slim", "1", "2Gi",
              cmd=["gcloud", "storage", "cp", "-r", "gs://prod-ml-datasets/shards/", "/data/"],
              mounts=[("data", "/data", False)])
    metrics = C("metrics-agent", "us-docker.pkg.dev/prod-ml-platform/infra/metrics-agent:1.9.2", "100m", "128Mi",
                restart="Always")
    train = C("trainer", "nvcr.io/nvidia/pytorch:24.09-py3", cpu, mem, lmem=mem, gpu=gpus, res=res,
              cmd=["torchrun"], args=["--nnodes", "1", "--nproc-per-node", str(max(1, gpus)), "/workspace/train.py",
                                      "--config", "/workspace/configs/run.yaml"],
              env=env_of("NCCL_DEBUG", "WANDB_API_KEY", "CHECKPOINT_BUCKET", fields=("POD_NAME",)),
              mounts=[("dshm", "/dev/shm", False), ("data", "/data", False)])
    vols = [{"emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}, "name": "dshm"}, {"emptyDir": {}, "name": "data"}]
    d = desc_base(owner, [train], inits=[fetch, metrics], tolerations=[GPU_TOLERATION] if tol else [], volumes=vols,
                  restart=restart, priority_class="ml-batch", priority=1000, **kw)
    if sel:
        d["node_selector"] = sel
    return d


def triton_desc(owner: str | None, gpus: int, sel: dict, tol: bool, cpu: str, mem: str, **kw) -> dict:
    c = C("triton", "nvcr.io/nvidia/tritonserver:24.09-py3", cpu, mem, lmem=mem, gpu=gpus,
          cmd=["tritonserver"], args=["--model-repository=gs://prod-ml-models/triton", "--strict-model-config=false",
                                      "--log-verbose=0"],
          env=env_of("GOOGLE_APPLICATION_CREDENTIALS", "TRITON_CACHE", fields=("POD_NAME",)),
          ports=[("http", 8000), ("grpc", 8001), ("metrics", 8002)], probe=(8000, "/v2/health/ready"),
          mounts=GPU_MOUNTS)
    return desc_base(owner, [c], node_selector=sel, tolerations=[GPU_TOLERATION] if tol else [], volumes=gpu_volumes("8Gi"),
                     priority_class="ml-serving", priority=100000, **kw)


def notebook_desc(owner: str | None, gpus: int, sel: dict, tol: bool, *, res: str = GPU, **kw) -> dict:
    c = C("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-03", "2", "16Gi", lmem="16Gi", gpu=gpus, res=res,
          args=["start-notebook.py", "--ServerApp.base_url=/user/$(JUPYTERHUB_USER)/"],
          env=env_of("JUPYTERHUB_USER", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "JUPYTERHUB_SERVICE_PREFIX",
                     "MEM_GUARANTEE", "CPU_GUARANTEE"), ports=[("notebook-port", 8888)],
          mounts=[("home", "/home/jovyan", False), ("dshm", "/dev/shm", False)])
    vols = [{"emptyDir": {}, "name": "home"}, {"emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}, "name": "dshm"}]
    d = desc_base(owner, [c], tolerations=[GPU_TOLERATION] if tol else [], volumes=vols, **kw)
    if sel:
        d["node_selector"] = sel
    return d


# -- CPU shapes -------------------------------------------------------------------------------

def web_desc(cpu: str, mem: str, **kw) -> dict:
    c = C("app", "us-docker.pkg.dev/prod-ml-platform/apps/web:2026.11.4", cpu, mem, lmem=mem,
          env=env_of("DATABASE_URL", "REDIS_URL", fields=("POD_NAME",)),
          ports=[("http", 8080)], probe=(8080, "/healthz"), sc=SC_APP, mounts=[("tmp", "/tmp", False)])
    d = desc_base("ReplicaSet", [c], volumes=[{"emptyDir": {}, "name": "tmp"}], pod_sc={"fsGroup": 1000, "seccompProfile": {"type": "RuntimeDefault"}}, **kw)
    return istio(d, 8080)


def api_desc(cpu: str, mem: str, **kw) -> dict:
    proxy = C("cloud-sql-proxy", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1", "100m", "128Mi", lmem="256Mi",
              restart="Always", args=["--structured-logs", "--port=5432", "prod-ml-platform:us-central1:prod-pg"])
    c = C("api", "us-docker.pkg.dev/prod-ml-platform/apps/api:2026.11.2", cpu, mem, lmem=mem,
          env=env_of("DB_HOST", "DB_PASSWORD", "SENTRY_DSN"), ports=[("http", 8000)], probe=(8000, "/livez"))
    return desc_base("ReplicaSet", [c], inits=[proxy], pod_sc={"fsGroup": 1000}, sa="api", **kw)


def worker_desc(cpu: str, mem: str, owner: str = "ReplicaSet", **kw) -> dict:
    c = C("worker", "us-docker.pkg.dev/prod-ml-platform/apps/worker:2026.11.1", cpu, mem, env=env_of("BROKER_URL"))
    return desc_base(owner, [c], **kw)


def static_desc(cpu: str, mem: str) -> dict:
    c = C("nginx", "nginx:1.27.2", cpu, mem, ports=[("http", 80)])
    return desc_base("ReplicaSet", [c])


def sandbox_desc(cpu: str, mem: str, owner: str = "ReplicaSet", **kw) -> dict:
    c = C("runner", "us-docker.pkg.dev/prod-ml-platform/apps/code-runner:2026.10.9", cpu, mem, lmem=mem,
          env=env_of("SANDBOX_TIMEOUT", "LOG_LEVEL"), ports=[("http", 8080)], probe=(8080, "/ready"), sc=SC_APP)
    return desc_base(owner, [c], runtime_class="gvisor", overhead={"cpu": "250m", "memory": "64Mi"}, **kw)


# Deployment-owned CPU workloads whose shape depends only on (cpu, memory).
DEPLOYMENT_DESCS = {"web": web_desc, "api": api_desc, "worker": worker_desc, "static": static_desc, "sandbox": sandbox_desc}


def etl_desc(cpu: str, mem: str, *, wait: bool = False, **kw) -> dict:
    c = C("etl", "us-docker.pkg.dev/prod-ml-platform/data/etl:2026.11.5", cpu, mem, lmem=mem,
          cmd=["python", "-m", "etl.run"], args=["--date", "$(RUN_DATE)"], env=env_of("RUN_DATE", "WAREHOUSE_DSN"))
    inits = [C("wait-for-warehouse", "busybox:1.36", "10m", "16Mi",
               cmd=["sh", "-c", "until nc -z warehouse-proxy 5432; do sleep 2; done"])] if wait else []
    return desc_base("Job", [c], inits=inits, restart="OnFailure", **kw)


def db_desc(kind: str, cpu: str, mem: str, **kw) -> dict:
    image = {"postgres": "postgres:16.4", "redis": "redis:7.4.1", "kafka": "bitnami/kafka:3.8.0",
             "milvus": "milvusdb/milvus:v2.4.13"}[kind]
    port = {"postgres": 5432, "redis": 6379, "kafka": 9092, "milvus": 19530}[kind]
    c = C(kind, image, cpu, mem, lmem=mem, env=env_of("DATA_DIR", "CLUSTER_NAME", "ADMIN_PASSWORD", fields=("POD_NAME",)),
          ports=[("tcp", port)], mounts=[("data", "/var/lib/data", False)])
    d = desc_base("StatefulSet", [c], sts_service=P("app") + "-headless",
                  pod_volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-" + P("name")}}],
                  claims=[("data", "100Gi", "premium-rwo")], **kw)
    return d


def system_desc(name: str) -> dict:
    if name == "kube-dns":
        cs = [C("kubedns", "gke.gcr.io/k8s-dns-kube-dns:1.23.0-gke.9", "100m", "70Mi", lmem="210Mi",
                args=["--domain=cluster.local.", "--dns-port=10053", "--config-dir=/kube-dns-config", "--v=2"],
                ports=[("dns-local", 10053), ("metrics", 10055)], probe=(8081, "/readiness")),
              C("dnsmasq", "gke.gcr.io/k8s-dns-dnsmasq-nanny:1.23.0-gke.9", "150m", "20Mi",
                args=["-v=2", "-logtostderr", "-configDir=/etc/k8s/dns/dnsmasq-nanny", "-restartDnsmasq=true"],
                ports=[("dns", 53)]),
              C("sidecar", "gke.gcr.io/k8s-dns-sidecar:1.23.0-gke.9", "10m", "20Mi", ports=[("metrics", 10054)])]
    elif name == "konnectivity-agent":
        cs = [C("konnectivity-agent", "gke.gcr.io/proxy-agent:v0.31.0-gke.4", "10m", "30Mi", lmem="125Mi",
                args=["--logtostderr=true", "--ca-cert=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                      "--proxy-server-port=8132", "--sync-forever=true"], ports=[("metrics", 8093)])]
    elif name == "metrics-server":
        cs = [C("metrics-server", "gke.gcr.io/metrics-server:v0.7.2-gke.2", "48m", "105Mi",
                args=["--secure-port=10250", "--kubelet-port=10255", "--metric-resolution=30s"],
                ports=[("https", 10250)], probe=(10250, "/readyz"))]
    else:
        cs = [C(name, f"gke.gcr.io/{name}:v0.9.3-gke.1", "50m", "64Mi", lmem="128Mi", ports=[("http", 8080)])]
    return desc_base("ReplicaSet", cs, node_selector=sel_pool("system-pool"), priority_class="system-cluster-critical",
                     priority=2000000000, sa=name,
                     tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}])


def ds_desc(name: str, gpu_only: bool) -> dict:
    tol_all = [{"operator": "Exists"}]
    if name == "fluentbit-gke":
        cs = [C("fluentbit", "gke.gcr.io/fluent-bit:v1.8.12-gke.41", "50m", "100Mi", lmem="250Mi",
                mounts=[("varlog", "/var/log", False)]),
              C("fluentbit-gke", "gke.gcr.io/fluent-bit-gke-exporter:v0.28.0-gke.3", "50m", "100Mi", lmem="250Mi",
                ports=[("metrics", 2021)])]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, priority_class="system-node-critical",
                      priority=2000001000, sa="fluentbit-gke",
                      volumes=[{"hostPath": {"path": "/var/log", "type": ""}, "name": "varlog"}])
    elif name == "gke-metadata-server":
        cs = [C("gke-metadata-server", "gke.gcr.io/gke-metadata-server:20260910_2300_RC0", "100m", "100Mi", lmem="200Mi",
                args=["--logtostderr", "--token-exchange-endpoint=https://securetoken.googleapis.com/v1/identitybindingtoken"],
                ports=[("metrics", 54898)], probe=(54898, "/healthz"))]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, host_network=True, dns="Default",
                      priority_class="system-node-critical", priority=2000001000, sa="gke-metadata-server")
    elif name == "pdcsi-node":
        cs = [C("csi-driver-registrar", "gke.gcr.io/csi-node-driver-registrar:v2.11.1-gke.12", "5m", "10Mi",
                args=["--v=5", "--csi-address=/csi/csi.sock"], mounts=[("plugin-dir", "/csi", False)]),
              C("gce-pd-driver", "gke.gcr.io/gcp-compute-persistent-disk-csi-driver:v1.15.3-gke.0", "5m", "10Mi",
                args=["--v=5", "--endpoint=unix:/csi/csi.sock"],
                mounts=[("kubelet-dir", "/var/lib/kubelet", False), ("plugin-dir", "/csi", False)],
                sc={"privileged": True})]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, priority_class="system-node-critical", priority=2000001000,
                      sa="pdcsi-node-sa",
                      volumes=[{"hostPath": {"path": "/var/lib/kubelet", "type": "Directory"}, "name": "kubelet-dir"},
                               {"hostPath": {"path": "/var/lib/kubelet/plugins/pd.csi.storage.gke.io/", "type": "DirectoryOrCreate"}, "name": "plugin-dir"}])
    elif name == "anetd":
        cs = [C("cilium-agent", "gke.gcr.io/cilium/cilium:v1.16.7-gke.300", "200m", "300Mi",
                cmd=["cilium-agent"], args=["--config-dir=/tmp/cilium/config-map"],
                env=env_of(fields=("NODE_NAME",)), ports=[("health", 9879)],
                mounts=[("bpf-maps", "/sys/fs/bpf", False), ("cilium-run", "/var/run/cilium", False)],
                sc={"privileged": True})]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, host_network=True,
                      priority_class="system-node-critical", priority=2000001000, sa="anetd",
                      volumes=[{"hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}, "name": "bpf-maps"},
                               {"hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"}, "name": "cilium-run"}])
    elif name == "node-exporter":
        cs = [C("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", "25m", "32Mi", lmem="128Mi",
                args=["--path.procfs=/host/proc", "--path.sysfs=/host/sys"], ports=[("metrics", 9100)],
                mounts=[("proc", "/host/proc", True), ("sys", "/host/sys", True)], token=False)]
        d = desc_base("DaemonSet", cs, tolerations=tol_all, host_network=True, sa="node-exporter",
                      automount=False,
                      volumes=[{"hostPath": {"path": "/proc", "type": ""}, "name": "proc"},
                               {"hostPath": {"path": "/sys", "type": ""}, "name": "sys"}])
    elif name == "nvidia-gpu-device-plugin-large-cos":
        cs = [C("nvidia-gpu-device-plugin", "gke.gcr.io/nvidia-gpu-device-plugin:v0.16.2-gke.7", "50m", "50Mi", lmem="50Mi",
                cmd=["/usr/bin/nvidia-gpu-device-plugin", "-logtostderr", "--enable-container-gpu-metrics",
                     "--enable-health-monitoring"],
                env=env_of("LD_LIBRARY_PATH", "GPU_CONFIG_FILE", fields=("NODE_NAME",)), ports=[("metrics", 2112)],
                mounts=[("device-plugin", "/device-plugin", False), ("dev", "/dev", False), ("nvidia", "/usr/local/nvidia", False)],
                sc={"privileged": True})]
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]}}}
        d = desc_base("DaemonSet", cs, affinity=aff, tolerations=tol_all, priority_class="system-node-critical",
                      priority=2000001000,
                      volumes=[{"hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": ""}, "name": "device-plugin"},
                               {"hostPath": {"path": "/dev", "type": ""}, "name": "dev"},
                               {"hostPath": {"path": "/home/kubernetes/bin/nvidia", "type": "Directory"}, "name": "nvidia"}])
    else:  # dcgm-exporter
        cs = [C("dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04", "100m", "256Mi", lmem="512Mi",
                args=["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv"],
                env=env_of("DCGM_EXPORTER_KUBERNETES", "DCGM_EXPORTER_LISTEN", fields=("NODE_NAME",)),
                ports=[("metrics", 9400)], probe=(9400, "/health"),
                mounts=[("pod-resources", "/var/lib/kubelet/pod-resources", True), ("nvidia", "/usr/local/nvidia", True)],
                sc={"privileged": True})]
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]}}}
        d = desc_base("DaemonSet", cs, affinity=aff, tolerations=tol_all, sa="dcgm-exporter",
                      volumes=[{"hostPath": {"path": "/var/lib/kubelet/pod-resources", "type": ""}, "name": "pod-resources"},
                               {"hostPath": {"path": "/home/kubernetes/bin/nvidia", "type": "Directory"}, "name": "nvidia"}])
    d["owner_labels"] = {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": P("app")}
    return d


# ===================================================================== model

class Shape:
    """One pod description; templates per state are encoded on first use."""

    __slots__ = ("key", "desc", "req", "tpls", "n_ctr", "n_init")

    def __init__(self, key: str, desc: dict) -> None:
        self.key = key
        self.desc = desc
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

    __slots__ = ("kind", "ns", "name", "shape", "uid", "t0", "vals", "pods", "rs_name", "rs_uid", "hash",
                 "old_hash", "refused", "missing", "cron", "job_state", "gen_n", "fail_msg")

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
    __slots__ = ("ns", "name", "wl", "state", "node", "t0", "word", "msg", "mode", "pip", "idx", "pin")

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


def node_reasons(node: Node, desc: dict, req: dict, pin: str) -> tuple[list[str], bool]:
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
        reasons, unresolvable = node_reasons(node, shape.desc, shape.req, pin)
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


class Generator:
    def __init__(self, n_nodes: int, n_pods: int, seed: int, pending_pct: float) -> None:
        if n_nodes < 16:
            raise SystemExit("generate_bundle: --nodes must be at least 16 (every pool and special node needs one)")
        self.N = n_nodes
        self.M = n_pods
        self.seed = str(seed)
        self.rng = random.Random(seed)
        self.pending_pct = pending_pct
        self.pools = make_pools()
        self.nodes: list[Node] = []
        self.workloads: list[Workload] = []
        self.pods: list[Pod] = []
        self.names: dict[str, set[str]] = {}
        self.shapes: dict[str, Shape] = {}
        self.truth: dict[str, str] = {}
        self.events: list[tuple[str, str, str, dict]] = []  # (ns, name, tpl key, values)
        self.msg_cache: dict[tuple, str] = {}
        self.wl_names: dict[str, set[str]] = {}

    # -- identity -----------------------------------------------------------------------------
    def h(self, *parts: str) -> bytes:
        return bo.h64(self.seed, *parts)

    def uid(self, *parts: str) -> str:
        return bo.uid_from(self.h(*parts))

    def rv(self, *parts: str) -> str:
        return str(int.from_bytes(self.h("rv", *parts)[:4], "big") % 90_000_000 + 1_000_000)

    def unique_pod_name(self, ns: str, base: str, salt: str) -> str:
        taken = self.names.setdefault(ns, set())
        i = 0
        while True:
            name = f"{base}-{bo.suffix_from(self.h('pod', ns, base, salt, str(i)))}"
            if name not in taken:
                taken.add(name)
                return name
            i += 1

    def claim_pod_name(self, ns: str, name: str) -> str:
        taken = self.names.setdefault(ns, set())
        assert name not in taken, (ns, name)
        taken.add(name)
        return name

    def workload_name(self, ns: str, base: str) -> str:
        taken = self.wl_names.setdefault(ns, set())
        if base not in taken:
            taken.add(base)
            return base
        for _ in range(1000):
            name = f"{base}-{self.rng.choice(WORDS)}"
            if name not in taken:
                taken.add(name)
                return name
        i = 2
        while f"{base}-{i}" in taken:
            i += 1
        taken.add(f"{base}-{i}")
        return f"{base}-{i}"

    def shape(self, key: str, make) -> Shape:
        s = self.shapes.get(key)
        if s is None:
            s = self.shapes[key] = Shape(key, make())
        return s

    # -- nodes ------------------------------------------------------------------------------------
    def make_nodes(self) -> None:
        pools = self.pools
        counts = [p["min"] for p in pools]
        rest = self.N - sum(counts)
        if rest < 0:
            raise SystemExit(f"generate_bundle: --nodes must be at least {sum(counts)}")
        total_w = sum(p["weight"] for p in pools)
        shares = [rest * p["weight"] / total_w for p in pools]
        floors = [int(s) for s in shares]
        counts = [c + f for c, f in zip(counts, floors)]
        left = rest - sum(floors)
        order = sorted(range(len(pools)), key=lambda i: (-(shares[i] - floors[i]), i))
        for i in order[:left]:
            counts[i] += 1
        index = 0
        for pool, count in zip(pools, counts):
            states = ["ok"] * count
            name = pool["name"]
            if name == "h100-pool":
                special = ["cordoned"] * max(1, round(count * 0.01)) + ["alloczero"] * max(1, round(count * 0.004)) \
                    + ["noplugin"] * round(count * 0.004)
            elif name == "l4-pool":
                special = ["cordoned"] * max(1, round(count * 0.01))
            elif name == "a100-pool":
                special = ["alloczero"] * round(count * 0.004)
            elif name == "default-pool":
                special = ["cordoned"] * round(count * 0.002)
            else:
                special = []
            assert len(special) < count, (name, count)
            slots = self.rng.sample(range(count), len(special))
            for s, st in zip(slots, special):
                states[s] = st
            groups = {z: hashlib.sha256(f"{self.seed}/{name}/{z}".encode()).hexdigest()[:8] for z in ZONES}
            taken: set[str] = set()
            for i in range(count):
                zone = ZONES[i % len(ZONES)]
                j = 0
                while True:
                    sfx = bo.suffix_from(self.h("node", name, str(i), str(j)), 4)
                    node_name = f"gke-{CLUSTER}-{name}-{groups[zone]}-{sfx}"
                    if node_name not in taken:
                        taken.add(node_name)
                        break
                    j += 1
                node = Node(node_name, pool, states[i], zone, index)
                node.t0 = self.rng.randint(3 * 86400, 160 * 86400)
                node.uid = self.uid("node", node_name)
                self.nodes.append(node)
                index += 1
        self.by_pool: dict[str, list[Node]] = {}
        for n in self.nodes:
            self.by_pool.setdefault(n.pool["name"], []).append(n)

    def nodes_where(self, pool: str, state: str = "ok") -> list[Node]:
        return [n for n in self.by_pool[pool] if n.state == state]

    # -- workloads and pods ---------------------------------------------------------------------
    def new_workload(self, kind: str, ns: str, base: str, shape: Shape, *, t0: int | None = None,
                     app: str | None = None) -> Workload:
        name = self.workload_name(ns, base)
        uid = self.uid(kind, ns, name)
        if t0 is None:
            t0 = self.rng.randint(2 * 86400, 90 * 86400)
        vals = {"app": app or name, "team": TEAMS.get(ns, "platform"), "ns": ns}
        wl = Workload(kind, ns, name, shape, uid, t0, vals)
        if kind == "Deployment":
            wl.hash = bo.suffix_from(self.h("hash", ns, name), 10)
            wl.rs_name = f"{name}-{wl.hash}"
            wl.rs_uid = self.uid("ReplicaSet", ns, wl.rs_name)
            wl.gen_n = self.rng.randint(1, 9)
            if wl.gen_n > 1:
                wl.old_hash = bo.suffix_from(self.h("oldhash", ns, name), 10)
            vals.update({"oname": wl.rs_name, "ouid": wl.rs_uid, "gen": wl.rs_name + "-", "hash": wl.hash})
        elif kind in ("Job", "StatefulSet", "DaemonSet"):
            vals.update({"oname": name, "ouid": uid, "gen": name + "-"})
            if kind in ("StatefulSet", "DaemonSet"):
                wl.hash = bo.suffix_from(self.h("crh", ns, name), 10)
                vals["crh"] = f"{name}-{wl.hash}" if kind == "StatefulSet" else wl.hash
        self.workloads.append(wl)
        return wl

    def add_pod(self, wl: Workload, state: str, node: Node | None, *, t0: int | None = None, word: str | None = None,
                name: str | None = None, pin: str = "") -> Pod:
        if name is None:
            if wl.kind == "StatefulSet":
                name = self.claim_pod_name(wl.ns, f"{wl.name}-{len(wl.pods)}")
            elif wl.kind == "Pod":
                name = self.claim_pod_name(wl.ns, wl.name) if not wl.pods else self.unique_pod_name(wl.ns, wl.name, str(len(wl.pods)))
            else:
                owner = wl.rs_name if wl.kind == "Deployment" else wl.name
                name = self.unique_pod_name(wl.ns, owner, str(len(wl.pods)))
        if t0 is None:
            hi = wl.t0 - 30
            if node is not None:
                hi = min(hi, node.t0 - 120)
            t0 = self.rng.randint(120, max(121, hi))
        pod = Pod(wl.ns, name, wl, state, node, t0)
        pod.idx = len(wl.pods)
        pod.pin = pin
        if node is not None:
            if state not in TERMINATED_STATES:
                node.take(wl.shape.req)
            pod.pip = node.ip if wl.shape.desc.get("host_network") else node.next_ip()
        wl.pods.append(pod)
        self.pods.append(pod)
        if word:
            pod.word = word
            self.truth[f"{wl.ns}/{name}"] = word
        return pod

    def place(self, pool_nodes: list[Node], req: dict[str, int], tries: int = 24) -> Node | None:
        """A random node of the list with room, else the first with room, else None."""
        if not pool_nodes:
            return None
        rng = self.rng
        for _ in range(min(tries, len(pool_nodes))):
            n = pool_nodes[rng.randrange(len(pool_nodes))]
            if n.fits(req):
                return n
        start = rng.randrange(len(pool_nodes))
        for i in range(len(pool_nodes)):
            n = pool_nodes[(start + i) % len(pool_nodes)]
            if n.fits(req):
                return n
        return None

    # -- DaemonSets --------------------------------------------------------------------------
    DAEMONSETS = (("kube-system", "fluentbit-gke", False), ("kube-system", "pdcsi-node", False), ("kube-system", "anetd", False),
                  ("monitoring", "node-exporter", False), ("kube-system", "nvidia-gpu-device-plugin-large-cos", True),
                  ("monitoring", "dcgm-exporter", True))

    def make_daemonsets(self) -> None:
        for ns, name, gpu_only in self.DAEMONSETS:
            shape = self.shape(f"ds/{name}", lambda n=name, g=gpu_only: ds_desc(n, g))
            wl = self.new_workload("DaemonSet", ns, name, shape, t0=400 * 86400)
            wl.vals["app"] = name
            for node in self.nodes:
                if gpu_only and not node.pool["gpu"]:
                    continue
                state = "running"
                if name == "nvidia-gpu-device-plugin-large-cos" and (node.state == "noplugin" or node.pool["noplugin"]):
                    state = "crashloop"  # the plugin never registered: no nvidia.com/gpu in capacity
                self.add_pod(wl, state, node, t0=node.t0 - 40)

    # -- the pending scenarios -----------------------------------------------------------------
    def pending_plan(self) -> list[tuple[str, int]]:
        """(scenario, pods) for every scenario; each at least one pod."""
        weights = [
            ("nr-unsched", 4), ("nr-bound", 1), ("gated", 8), ("ns-imagepull", 6), ("ns-init", 4), ("ns-mount", 3),
            ("sm-accel", 4), ("sm-affinity", 3), ("cordoned", 3), ("ut-h100", 6), ("ut-mig", 2),
            ("ng-spot", 4), ("ng-mig", 3), ("ng-node", 2), ("az", 2), ("ex-a100", 12), ("ex-frag", 4),
            ("ex-memory", 2), ("uc-pvc", 3), ("uc-anti", 4), ("uc-sched", 3), ("fn-gpu", 8), ("fn-cpu", 4),
        ]
        if not any(n.state == "noplugin" for n in self.nodes):
            weights = [w for w in weights if w[0] != "ng-node"]
        target = max(len(weights), round(self.M * self.pending_pct / 100))
        total_w = sum(w for _, w in weights)
        extra = target - len(weights)
        shares = [extra * w / total_w for _, w in weights]
        counts = [int(x) for x in shares]
        order = sorted(range(len(weights)), key=lambda i: (-(shares[i] - counts[i]), i))
        for i in order[:extra - sum(counts)]:
            counts[i] += 1
        return [(name, 1 + c) for (name, _), c in zip(weights, counts)]

    def msg(self, shape: Shape, pin: str = "", mode: str = "exact") -> str:
        key = (shape.key, pin, mode)
        m = self.msg_cache.get(key)
        if m is None:
            m = self.msg_cache[key] = scheduler_message(self.nodes, shape, pin, mode)
        return m

    def pending(self, wl: Workload, word: str, state: str = "unsched", *, mode: str = "exact", pin: str = "",
                name: str | None = None) -> Pod:
        t0 = self.rng.randint(60, max(61, min(6 * 3600, wl.t0 - 5)))
        pod = self.add_pod(wl, state, None, t0=t0, word=word, name=name, pin=pin)
        if state == "unsched":
            pod.mode = mode  # the message is written once every pod is placed
        return pod

    def chunks(self, n: int, size: int) -> list[int]:
        out = []
        while n > 0:
            k = min(n, self.rng.randint(max(1, size // 2), size))
            out.append(k)
            n -= k
        return out

    def make_scenarios(self) -> None:
        """The pending pods, one construction per word (causes.md order; the first rule that holds wins):

        no-gpu-request     accelerator nodeSelector (no toleration, no GPU limit): unscheduled; and a bare pod
                           with runtimeClassName nvidia-cdi bound to an L4 node, still ContainerCreating
        scheduling-gated   bare Kueue pods with the kueue.x-k8s.io/admission gate (8 GPUs, tolerating)
        image-pull         bound and Pending: ImagePullBackOff on H100 (1 GPU)
        node-side          bound and Pending: Init:0/1 Job pods, a missing secret volume (ContainerCreating)
        selector-mismatch  nodeSelector gke-accelerator=nvidia-h200-141gb; required affinity gpu.product In [A10G]
        cordoned           kubernetes.io/hostname pin to a cordoned GPU node whose other taints it tolerates
        untolerated-taint  H100 accelerator selector without the nvidia.com/gpu toleration; MIG pool the same
        resource-name-mismatch  MIG request on the H100 pool (no MIG resource there, nvidia.com/gpu instead)
        no-gpu-node        the L4 spot pool (device plugin never up); hostname pin to a plugin-less H100 node
                           (when there is one)
        allocatable-zero   hostname pin to a node whose GPUs report allocatable 0
        exhausted          A100 pool (kept exactly full); 4 GPUs on L4 (each L4 node runs a reranker: at most
                           3 free, fragmented); 1Ti of memory, no selector
        unclassified       StatefulSet replica with an unbound claim; reranker with required pod anti-affinity
                           (one running per L4 node, the rest pending; a node fits by the funnel);
                           schedulerName volcano (no condition, no event)
        fits-now           L4 embedder and gVisor code-runner (spec.overhead) with a stale "Insufficient" message
        """
        rng = self.rng
        h100_ok = self.nodes_where("h100-pool")
        l4_ok = self.nodes_where("l4-pool")
        cpu_nodes = self.by_pool["default-pool"] + self.by_pool["highmem-pool"]
        cpu_ok = [n for n in cpu_nodes if n.state == "ok"]
        plan = dict(self.pending_plan())

        # Owners' running replicas first (they shape what is free): the anti-affinity reranker on
        # every schedulable L4 node (1 GPU each: no L4 node has all 4 free, yet each has room).
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": P("app")}}, "topologyKey": "kubernetes.io/hostname"}]}}
        rr_shape = self.shape("uc-anti", lambda: triton_desc("ReplicaSet", 1, sel_pool("l4-pool"), False, "6", "24Gi", affinity=anti))
        reranker = self.new_workload("Deployment", "search", "reranker", rr_shape)
        for node in l4_ok:
            assert node.fits(rr_shape.req)
            self.add_pod(reranker, "running", node)

        # no-gpu-request: GPU intent (an accelerator nodeSelector / the nvidia runtime) without an accelerator limit.
        shape = self.shape("nr-unsched", lambda: notebook_desc("ReplicaSet", 0, sel_accel(H100), False))
        for k in self.chunks(plan["nr-unsched"], 4):
            wl = self.new_workload("Deployment", "research", "notebook-h100", shape)
            for _ in range(k):
                self.pending(wl, "no-gpu-request")
        shape = self.shape("nr-bound", lambda: notebook_desc(None, 0, sel_accel(L4), False, runtime_class="nvidia-cdi", applied=True))
        for i in range(plan["nr-bound"]):
            node = self.place(l4_ok, shape.req)
            if node is None:
                continue
            wl = self.new_workload("Pod", "research", f"cuda-smoke-{rng.choice(WORDS)}", shape)
            pod = self.add_pod(wl, "creating", node, t0=rng.randint(300, 3600), word="no-gpu-request")
            self.kubelet_event(pod, "FailedCreatePodSandBox", "Warning",
                               'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: '
                               'failed to create shim task: OCI runtime create failed: runc create failed: unable to start container '
                               'process: error during container init: error running prestart hook #0: exit status 1, stdout: , '
                               'stderr: nvidia-container-cli: device error: void: unknown device: unknown', rng.randint(5, 40))

        # scheduling-gated: Kueue holds the pods (gate kueue.x-k8s.io/admission).
        shape = self.shape("gated", lambda: trainer_desc(None, 8, sel_accel(H100), True, "24", "200Gi", gates=["kueue.x-k8s.io/admission"],
                                                          annotations={"kueue.x-k8s.io/queue-name": "h100-queue"}, applied=True))
        for k in self.chunks(plan["gated"], 6):
            base = f"sweep-{rng.choice(WORDS)}"
            wl = self.new_workload("Pod", "research", base, shape)
            for i in range(k):
                self.pending(wl, "scheduling-gated", "gated", name=self.unique_pod_name("research", base, str(i)))

        # node-side: bound and still Pending.
        shape = self.shape("ns-imagepull", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), True, "12", "96Gi",
                                                              image="vllm/vllm-openai:v0.6.3-post1"))
        for k in self.chunks(plan["ns-imagepull"], 4):
            wl = self.new_workload("Deployment", "ml-inference", "llm-canary", shape)
            for _ in range(k):
                node = self.place(h100_ok, shape.req)
                if node is None:
                    break
                pod = self.add_pod(wl, "imagepull", node, t0=rng.randint(600, 5400), word="image-pull")
                image = "vllm/vllm-openai:v0.6.3-post1"
                self.kubelet_event(pod, "Failed", "Warning",
                                   f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
                                   f'"docker.io/{image}": failed to resolve reference "docker.io/{image}": docker.io/{image}: not found',
                                   rng.randint(3, 9), field="spec.containers{vllm}")
                self.kubelet_event(pod, "BackOff", "Normal", f'Back-off pulling image "{image}"', rng.randint(20, 120),
                                   field="spec.containers{vllm}")
        shape = self.shape("ns-init", lambda: etl_desc("2", "8Gi", wait=True))
        for k in self.chunks(plan["ns-init"], 3):
            wl = self.new_workload("Job", "data-pipeline", "backfill-warehouse", shape, t0=rng.randint(900, 7200))
            wl.job_state = "running"
            for _ in range(k):
                node = self.place(cpu_ok, shape.req)
                if node is None:
                    break
                self.add_pod(wl, "initrunning", node, t0=wl.t0 - 5, word="node-side")
        shape = self.shape("ns-mount", lambda: api_desc("500m", "1Gi", volumes=[{"name": "tls", "secret": {"defaultMode": 420, "secretName": P("app") + "-tls"}}]))
        for k in self.chunks(plan["ns-mount"], 3):
            wl = self.new_workload("Deployment", "payments", "report-api", shape)
            for _ in range(k):
                node = self.place(cpu_ok, shape.req)
                if node is None:
                    break
                pod = self.add_pod(wl, "creating", node, t0=rng.randint(300, 3600), word="node-side")
                self.kubelet_event(pod, "FailedMount", "Warning",
                                   f'MountVolume.SetUp failed for volume "tls" : secret "{wl.vals["app"]}-tls" not found',
                                   rng.randint(4, 30))

        # selector-mismatch: no node has the label.
        shape = self.shape("sm-accel", lambda: trainer_desc("Job", 8, {"cloud.google.com/gke-accelerator": "nvidia-h200-141gb"}, True, "24", "200Gi"))
        for k in self.chunks(plan["sm-accel"], 4):
            wl = self.new_workload("Job", "nlp", "eval-h200", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "selector-mismatch")
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A10G"]}]}]}}}
        shape = self.shape("sm-affinity", lambda: triton_desc("ReplicaSet", 1, {}, True, "4", "16Gi", affinity=aff))
        for k in self.chunks(plan["sm-affinity"], 4):
            wl = self.new_workload("Deployment", "vision", "detector-a10g", shape)
            for _ in range(k):
                self.pending(wl, "selector-mismatch")

        # cordoned: pinned (kubernetes.io/hostname) to a cordoned GPU node it otherwise tolerates.
        cordoned = [n for n in self.nodes if n.state == "cordoned" and n.pool["gpu"]]
        for i in range(plan["cordoned"]):
            node = cordoned[i % len(cordoned)]
            gpus = node.alloc[GPU]
            shape = self.shape(f"cordoned/{gpus}", lambda g=gpus: trainer_desc(None, g, {"kubernetes.io/hostname": P("pin")}, True, "16", "64Gi", applied=True))
            wl = self.new_workload("Pod", "ml-training", f"nccl-test-{node.name.rsplit('-', 1)[1]}", shape)
            self.pending(wl, "cordoned", pin=node.name)

        # untolerated-taint: the GPU pools' taint, not tolerated.
        shape = self.shape("ut-h100", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), False, "8", "64Gi"))
        for k in self.chunks(plan["ut-h100"], 5):
            wl = self.new_workload("Deployment", "vision", "sdxl-serve", shape)
            for _ in range(k):
                self.pending(wl, "untolerated-taint")
        shape = self.shape("ut-mig", lambda: notebook_desc("Job", 1, sel_pool("a100-mig-pool"), False, res=MIG, restart="Never"))
        for k in self.chunks(plan["ut-mig"], 3):
            wl = self.new_workload("Job", "research", "mig-tune", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "untolerated-taint")

        # no-gpu-node: every candidate lacks the resource in status.capacity.
        shape = self.shape("ng-spot", lambda: vllm_desc("ReplicaSet", 1, sel_pool("l4-spot-pool"), True, "4", "16Gi"))
        for k in self.chunks(plan["ng-spot"], 4):
            wl = self.new_workload("Deployment", "recsys", "batch-infer-spot", shape)
            for _ in range(k):
                self.pending(wl, "no-gpu-node")
        shape = self.shape("ng-mig", lambda: trainer_desc("Job", 1, sel_accel(H100), True, "4", "32Gi", res=MIG))
        for k in self.chunks(plan["ng-mig"], 3):
            wl = self.new_workload("Job", "nlp", "finetune-mig", shape, t0=rng.randint(600, 7200))
            for _ in range(k):  # the H100 nodes offer the vendor's GPUs as nvidia.com/gpu (row 16)
                self.pending(wl, "resource-name-mismatch")
        noplugin = [n for n in self.nodes if n.state == "noplugin"]
        for i in range(plan.get("ng-node", 0)):
            node = noplugin[i % len(noplugin)]
            shape = self.shape("ng-node", lambda: trainer_desc(None, 8, {"kubernetes.io/hostname": P("pin")}, True, "16", "64Gi", applied=True))
            wl = self.new_workload("Pod", "ml-training", f"dcgm-diag-{node.name.rsplit('-', 1)[1]}", shape)
            self.pending(wl, "no-gpu-node", pin=node.name)

        # allocatable-zero: pinned to a node that reports the GPUs with allocatable 0.
        zero = [n for n in self.nodes if n.state == "alloczero"]
        for i in range(plan["az"]):
            node = zero[i % len(zero)]
            shape = self.shape("az", lambda: trainer_desc(None, 1, {"kubernetes.io/hostname": P("pin")}, True, "8", "32Gi", applied=True))
            wl = self.new_workload("Pod", "ml-training", f"gpu-burn-{node.name.rsplit('-', 1)[1]}", shape)
            self.pending(wl, "allocatable-zero", pin=node.name)

        # exhausted: the A100 pool is full (fill_gpu keeps it so); 4-GPU pods on L4 (each L4 node holds a reranker).
        shape = self.shape("ex-a100", lambda: trainer_desc("Job", 4, sel_pool("a100-pool"), True, "10", "64Gi"))
        shape1 = self.shape("ex-a100-1", lambda: triton_desc("ReplicaSet", 1, sel_pool("a100-pool"), True, "4", "32Gi"))
        for k in self.chunks(plan["ex-a100"], 8):
            if rng.random() < 0.5:
                wl = self.new_workload("Job", "ml-training", "pretrain-queue", shape, t0=rng.randint(600, 7200))
            else:
                wl = self.new_workload("Deployment", "recsys", "ranker-a100", shape1)
            for _ in range(k):
                self.pending(wl, "exhausted")
        shape = self.shape("ex-frag", lambda: vllm_desc("ReplicaSet", 4, sel_pool("l4-pool"), False, "16", "64Gi"))
        for k in self.chunks(plan["ex-frag"], 4):
            wl = self.new_workload("Deployment", "ml-inference", "llm-70b-l4", shape)
            for _ in range(k):
                self.pending(wl, "exhausted")
        shape = self.shape("ex-memory", lambda: worker_desc("16", "1Ti", owner="Job", restart="Never"))
        for k in self.chunks(plan["ex-memory"], 2):
            wl = self.new_workload("Job", "analytics", "genome-assembly", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "exhausted")

        # unclassified: fits by the funnel, but depends on what it does not model.
        shape = self.shape("uc-pvc", lambda: db_desc("milvus", "2", "8Gi"))
        for k in self.chunks(plan["uc-pvc"], 2):
            wl = self.new_workload("StatefulSet", "search", "milvus-querynode", shape)
            for _ in range(rng.randint(1, 3)):
                node = self.place(cpu_ok, shape.req)
                if node is not None:
                    self.add_pod(wl, "running", node)
            for _ in range(k):
                self.pending(wl, "volume-unbound", mode="pvc")  # its claim binds Immediate (generate_filters.py)
        for _ in range(plan["uc-anti"]):
            self.pending(reranker, "pod-affinity", mode="antiaffinity")
        shape = self.shape("uc-sched", lambda: trainer_desc("Job", 1, sel_accel(L4), True, "4", "16Gi", scheduler="volcano"))
        for k in self.chunks(plan["uc-sched"], 3):
            wl = self.new_workload("Job", "research", "volcano-sweep", shape, t0=rng.randint(600, 7200))
            for _ in range(k):
                self.pending(wl, "unclassified", "nocond")

        # fits-now: the scheduler's last word is stale, a node has room now.
        shape = self.shape("fn-gpu", lambda: triton_desc("ReplicaSet", 1, sel_pool("l4-pool"), False, "4", "16Gi"))
        for k in self.chunks(plan["fn-gpu"], 6):
            wl = self.new_workload("Deployment", "search", "embedder", shape)
            for _ in range(k):
                self.pending(wl, "fits-now", mode="stale")
        shape = self.shape("fn-cpu", lambda: sandbox_desc("2", "4Gi"))
        for k in self.chunks(plan["fn-cpu"], 4):
            wl = self.new_workload("Deployment", "platform", "code-runner", shape)
            for _ in range(k):
                self.pending(wl, "fits-now", mode="stale")

    # -- admission refusals ----------------------------------------------------------------------
    def make_refusals(self) -> None:
        """ReplicaSets refused by a GPU quota and Jobs refused for a missing RuntimeClass (owners short of pods)."""
        rng = self.rng
        h100_ok = self.nodes_where("h100-pool")
        n = 1 + self.M // 60000
        self.quota_refused: list[Workload] = []
        for i, ns in enumerate(("vision", "nlp", "recsys", "research")[:n]):
            shape = self.shape("quota-rs", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), True, "8", "64Gi"))
            wl = self.new_workload("Deployment", ns, "trainer" if i == 0 else "trainer-" + rng.choice(WORDS), shape,
                                   t0=rng.randint(3600, 86400))
            for _ in range(rng.randint(1, 3)):
                node = self.place(h100_ok, shape.req)
                if node is not None:
                    self.add_pod(wl, "running", node, t0=wl.t0 - 10)
            wl.refused = "quota"
            wl.missing = rng.randint(1, 2)
            self.quota_refused.append(wl)
            self.truth[f"{ns}/replicaset/{wl.rs_name}"] = "quota-exceeded"
        for i in range(n):
            shape = self.shape("rc-job", lambda: trainer_desc("Job", 1, sel_accel(L4), False, "4", "16Gi", runtime_class="nvidia"))
            wl = self.new_workload("Job", "batch", "batch-rc" if i == 0 else f"batch-rc-{rng.choice(WORDS)}", shape,
                                   t0=rng.randint(1800, 20000))
            wl.refused = "runtimeclass"
            wl.job_state = "refused"
            wl.missing = rng.randint(1, 4)  # parallelism; none exist
            self.truth[f"batch/job/{wl.name}"] = "no-runtimeclass"

    # -- filling the GPU pools -------------------------------------------------------------------
    def fill_gpu(self) -> None:
        rng = self.rng
        catalogs = {
            "h100-pool": [(8, "Job", "ml-training", "pretrain", lambda: trainer_desc("Job", 8, sel_accel(H100), True, "24", "200Gi")),
                          (4, "Job", "nlp", "finetune", lambda: trainer_desc("Job", 4, sel_accel(H100), True, "24", "200Gi")),
                          (2, "Deployment", "ml-inference", "llm-serve-tp2", lambda: vllm_desc("ReplicaSet", 2, sel_accel(H100), True, "16", "128Gi")),
                          (1, "Deployment", "ml-inference", "llm-serve", lambda: vllm_desc("ReplicaSet", 1, sel_accel(H100), True, "8", "64Gi"))],
            "a100-pool": [(4, "Job", "vision", "a100-train", lambda: trainer_desc("Job", 4, sel_pool("a100-pool"), True, "10", "64Gi")),
                          (2, "Job", "ml-training", "a100-dist", lambda: trainer_desc("Job", 2, sel_pool("a100-pool"), True, "10", "64Gi")),
                          (1, "Deployment", "recsys", "ranker", lambda: triton_desc("ReplicaSet", 1, sel_pool("a100-pool"), True, "4", "32Gi"))],
            "l4-pool": [(1, "Deployment", "ml-inference", "whisper", lambda: triton_desc("ReplicaSet", 1, sel_pool("l4-pool"), False, "6", "24Gi")),
                        (1, "Deployment", "search", "embedder", lambda: triton_desc("ReplicaSet", 1, sel_pool("l4-pool"), False, "4", "16Gi"))],
            "a100-mig-pool": [(1, "Deployment", "recsys", "ranker-mig", lambda: triton_desc("ReplicaSet", 1, sel_pool("a100-mig-pool"), True, "6", "48Gi"))],
        }
        mig_entry = (1, "Deployment", "research", "notebook-mig", lambda: notebook_desc("ReplicaSet", 1, sel_pool("a100-mig-pool"), True, res=MIG))
        open_wl: dict[str, tuple[Workload, int]] = {}

        def workload_for(pool: str, entry) -> Workload:
            size, kind, ns, base, make = entry
            key = f"{pool}/{base}"
            cur = open_wl.get(key)
            if cur is not None and len(cur[0].pods) < cur[1]:
                return cur[0]
            shape = self.shape(f"fill/{key}", make)
            wl = self.new_workload(kind, ns, base, shape)
            open_wl[key] = (wl, rng.randint(1, 4) if kind == "Job" else rng.randint(2, 10))
            return wl

        for pool, entries in catalogs.items():
            for node in self.by_pool[pool]:
                if node.state in ("noplugin",):
                    continue
                if node.state == "alloczero":
                    # Deliberate: one pod placed before the GPUs went unhealthy still holds its GPU.
                    entry = [e for e in entries if e[0] == 1] or entries[-1:]
                    wl = workload_for(pool, entry[0])
                    self.add_pod(wl, "running", node)
                    continue
                cap = node.alloc[GPU]
                if pool == "a100-pool" and node.state == "ok":
                    target = cap  # full: the exhausted scenario depends on it
                elif pool == "l4-pool" and node.state == "ok":
                    target = min(cap - 1, node.used[GPU] + rng.randint(0, 2))  # keeps 1..3 used (reranker), >= 1 free
                elif pool == "h100-pool":
                    target = cap if rng.random() < 0.7 else rng.randint(0, cap)
                else:
                    target = rng.randint(0, cap)
                guard = 0
                while node.used[GPU] < target and guard < 20:
                    guard += 1
                    room = target - node.used[GPU]
                    fitting = [e for e in entries if e[0] <= room and e[0] > 0]
                    if not fitting:
                        break
                    entry = rng.choice(fitting)
                    wl = workload_for(pool, entry)
                    if not node.fits(wl.shape.req):
                        break
                    self.add_pod(wl, "crashloop" if rng.random() < 0.01 else "running", node)
                if pool == "a100-pool" and node.state == "ok":
                    assert node.used[GPU] == cap, node.name
                if pool == "a100-mig-pool":
                    mig_target = rng.randint(node.alloc[MIG] // 2, node.alloc[MIG])
                    while node.used[MIG] < mig_target:
                        wl = workload_for(pool, mig_entry)
                        if not node.fits(wl.shape.req):
                            break
                        self.add_pod(wl, "running", node)

    # -- history: finished GPU and CPU jobs, evicted pods ------------------------------------------
    def finished_jobs(self, budget: int) -> int:
        """Completed/failed Jobs whose pods keep their nodeName; returns the pods made."""
        rng = self.rng
        made = 0
        gpu_nodes = [n for n in self.nodes if n.pool["gpu"] and n.state == "ok" and n.alloc[GPU]]
        cpu_nodes = self.by_pool["default-pool"] + self.by_pool["highmem-pool"]
        etl = self.shape("etl", lambda: etl_desc("1", "4Gi"))
        train = self.shape("fill/h100-pool/pretrain", lambda: trainer_desc("Job", 8, sel_accel(H100), True, "24", "200Gi"))
        crons = []
        while made < budget:
            r = rng.random()
            if r < 0.25 and gpu_nodes:
                wl = self.new_workload("Job", rng.choice(("ml-training", "nlp", "research")), "train-done", train,
                                       t0=rng.randint(3600, 5 * 86400))
                k = min(budget - made, rng.randint(1, 4))
                wl.job_state = "complete" if rng.random() < 0.8 else "failed"
                state = "succeeded" if wl.job_state == "complete" else rng.choice(("failed", "oom"))
                for _ in range(k):
                    node = rng.choice(gpu_nodes)
                    self.add_pod(wl, state, node, t0=wl.t0 - 5)
                made += k
            else:
                if not crons or rng.random() < 0.3:
                    ns = rng.choice(("data-pipeline", "analytics"))
                    base = rng.choice(("etl-hourly", "export-daily", "compact-tables", "refresh-features", "sync-crm"))
                    crons.append((ns, self.workload_name(ns, base)))
                ns, cron = rng.choice(crons)
                minute = 29_400_000 + rng.randint(0, 90_000)
                name = f"{cron}-{minute}"
                if name in self.wl_names.setdefault(ns, set()):
                    continue
                wl = self.new_workload("Job", ns, name, etl, t0=rng.randint(600, 3 * 86400))
                wl.cron = cron
                wl.job_state = "complete" if rng.random() < 0.9 else "failed"
                k = 1 if wl.job_state == "complete" else min(budget - made, rng.randint(1, 3))
                for _ in range(k):
                    node = rng.choice(cpu_nodes)
                    self.add_pod(wl, "succeeded" if wl.job_state == "complete" else "failed", node, t0=wl.t0 - 2)
                made += k
        return made

    # -- CPU workloads ---------------------------------------------------------------------------
    def fill_cpu(self, budget: int) -> None:
        rng = self.rng
        cpu_pool = [n for n in self.by_pool["default-pool"] + self.by_pool["highmem-pool"] if n.state == "ok"]
        system = [n for n in self.by_pool["system-pool"] if n.state == "ok"]
        made = 0
        # system add-ons
        for name, replicas in (("kube-dns", max(2, self.N // 60)), ("konnectivity-agent", max(2, self.N // 120)),
                               ("metrics-server", 1), ("event-exporter-gke", 1), ("l7-default-backend", 1)):
            shape = self.shape(f"sys/{name}", lambda n=name: system_desc(n))
            wl = self.new_workload("Deployment", "kube-system", name, shape, t0=380 * 86400)
            for _ in range(min(replicas, budget - made)):
                node = self.place(system, shape.req) or self.place(cpu_pool, shape.req)
                if node is None:
                    break
                self.add_pod(wl, "running", node)
                made += 1
        kinds = [
            (0.015, "web", ("web", "shop", "search"), ("frontend", "checkout", "cart", "catalog", "reviews", "inventory", "profile", "autocomplete", "storefront", "wishlist")),
            (0.06, "api", ("payments", "shop", "platform", "web"), ("payments-api", "ledger", "orders-api", "auth", "accounts", "billing", "pricing", "notifications")),
            (0.49, "worker", ("data-pipeline", "platform", "analytics", "shop"), ("celery-worker", "kafka-consumer", "thumbnailer", "mailer", "indexer", "scheduler")),
            (0.17, "static", ("web", "shop", "platform"), ("docs", "status-page", "static-assets", "landing", "help-center")),
            (0.05, "sandbox", ("platform",), ("code-runner", "notebook-exec", "untrusted-builds")),
            (0.065, "db", ("data-pipeline", "shop", "monitoring", "search"), ("postgres", "redis", "kafka")),
            (0.15, "batch", ("data-pipeline", "analytics", "batch"), ("reindex", "backfill", "dedupe", "rollup")),
        ]
        sizes = {"web": [("250m", "256Mi"), ("500m", "512Mi"), ("1", "1Gi")], "api": [("250m", "512Mi"), ("500m", "1Gi")],
                 "worker": [("500m", "1Gi"), ("1", "2Gi"), ("250m", "512Mi")], "sandbox": [("500m", "512Mi")],
                 "static": [("100m", "128Mi"), ("250m", "256Mi")],
                 "db": [("1", "4Gi"), ("2", "8Gi")], "batch": [("1", "2Gi"), ("2", "4Gi")]}
        evict_budget = int(budget * 0.02)
        while made < budget:
            r = rng.random()
            acc = 0.0
            for w, kind, nss, bases in kinds:
                acc += w
                if r <= acc:
                    break
            ns = rng.choice(nss)
            cpu, mem = rng.choice(sizes[kind])
            base = rng.choice(bases)
            if kind in DEPLOYMENT_DESCS:
                desc = DEPLOYMENT_DESCS[kind]
                shape = self.shape(f"{kind}/{cpu}/{mem}", lambda d=desc, c=cpu, m=mem: d(c, m))
                wk = "Deployment"
            elif kind == "db":
                shape = self.shape(f"db/{base}/{cpu}/{mem}", lambda b=base, c=cpu, m=mem: db_desc(b, c, m))
                wk = "StatefulSet"
            else:
                shape = self.shape(f"batch/{cpu}/{mem}", lambda c=cpu, m=mem: worker_desc(c, m, owner="Job", restart="OnFailure"))
                wk = "Job"
            replicas = min(budget - made, {"Deployment": rng.choice((1, 2, 2, 3, 3, 4, 6, 8, 12, 20)),
                                           "StatefulSet": rng.choice((1, 3, 3, 5)), "Job": rng.randint(1, 6)}[wk])
            wl = self.new_workload(wk, ns, base, shape, t0=rng.randint(3600, 90 * 86400) if wk != "Job" else rng.randint(900, 86400))
            for _ in range(replicas):
                node = self.place(cpu_pool, shape.req)
                if node is None:
                    node = rng.choice(cpu_pool)
                    state = "evicted" if wk == "Deployment" else "succeeded" if wk == "Job" else None
                    if state is None:
                        break
                    self.add_pod(wl, state, node)
                else:
                    state = "running"
                    x = rng.random()
                    if x < 0.01:
                        state = "crashloop"
                    self.add_pod(wl, state, node)
                made += 1
                if wk == "Deployment" and evict_budget > 0 and made < budget and rng.random() < 0.05:
                    self.add_pod(wl, "evicted", rng.choice(cpu_pool))
                    evict_budget -= 1
                    made += 1
            if not wl.pods:
                self.workloads.remove(wl)

    # -- events ----------------------------------------------------------------------------------
    def kubelet_event(self, pod: Pod, reason: str, type_: str, message: str, count: int, field: str | None = None) -> None:
        t_first = max(60, pod.t0 - 5)
        vals = {"oname": pod.name, "ons": pod.ns, "orv": self.rv("pod", pod.ns, pod.name),
                "ouid": self.uid("pod", pod.ns, pod.name), "msg": js(message), "count": str(count),
                "tfirst": ts(t_first), "tlast": ts(self.rng.randint(30, t_first)), "host": pod.node.name if pod.node else "",
                "fpath": field or ""}
        key = f"kubelet/{reason}/{type_}/{'f' if field else ''}"
        self.events.append((pod.ns, self.event_name(pod.name, reason), key, vals))

    def event_name(self, obj: str, salt: str) -> str:
        h = self.h("event", obj, salt).hex()
        return f"{obj}.18{h[:14]}"

    def make_events(self) -> None:
        rng = self.rng
        for pod in self.pods:
            if pod.state == "unsched":
                series = rng.random() < 0.6
                t_first = max(30, pod.t0 - 1)
                vals = {"oname": pod.name, "ons": pod.ns, "orv": self.rv("pod", pod.ns, pod.name),
                        "ouid": self.uid("pod", pod.ns, pod.name), "msg": js(pod.msg),
                        "etime": ts_micro(t_first, int.from_bytes(self.h("us", pod.name)[:3], "big") % 1_000_000),
                        "tfirst": ts(t_first), "count": str(rng.randint(2, 40)),
                        "tlastobs": ts_micro(rng.randint(5, t_first), rng.randint(0, 999_999))}
                self.events.append((pod.ns, self.event_name(pod.name, "FailedScheduling"),
                                    "sched/series" if series else "sched/plain", vals))
        for node in self.nodes:
            if node.state == "cordoned":
                t = rng.randint(3600, 4 * 86400)
                vals = {"oname": node.name, "ons": "", "orv": "", "ouid": node.uid,
                        "msg": js(f"Node {node.name} status is now: NodeNotSchedulable"), "count": "1",
                        "tfirst": ts(t), "tlast": ts(t), "host": node.name, "fpath": ""}
                self.events.append(("default", self.event_name(node.name, "NodeNotSchedulable"), "node/NodeNotSchedulable", vals))
        for wl in self.workloads:
            if wl.refused == "quota":
                used = self.quota_used[wl.ns]["requests.nvidia.com/gpu"]
                t = wl.t0 - 20
                msgs = []
                for i in range(rng.randint(3, 8)):
                    pod = f"{wl.rs_name}-{bo.suffix_from(self.h('refused', wl.ns, wl.rs_name, str(i)))}"
                    msg = (f'Error creating: pods "{pod}" is forbidden: exceeded quota: gpu-quota, requested: '
                           f'requests.nvidia.com/gpu={wl.shape.req[GPU]}, used: requests.nvidia.com/gpu={used}, '
                           f'limited: requests.nvidia.com/gpu={used}')
                    msgs.append(msg)
                    tt = max(40, t - i)
                    self.controller_event(wl, "ReplicaSet", wl.rs_name, wl.rs_uid, "replicaset-controller", "FailedCreate",
                                          "Warning", msg, 1, tt, tt, salt=str(i))
                last = rng.randint(30, max(31, t - 20))
                self.controller_event(wl, "ReplicaSet", wl.rs_name, wl.rs_uid, "replicaset-controller", "FailedCreate",
                                      "Warning", "(combined from similar events): " + msgs[-1], rng.randint(10, 60),
                                      max(last + 1, t - 15), last, salt="combined")
                wl.fail_msg = msgs[-1]
            elif wl.refused == "runtimeclass":
                msg = f'Error creating: pods "{wl.name}-" is forbidden: pod rejected: RuntimeClass "nvidia" not found'
                first = wl.t0 - 1
                self.controller_event(wl, "Job", wl.name, wl.uid, "job-controller", "FailedCreate", "Warning", msg,
                                      rng.randint(6, 40), first, rng.randint(20, max(21, first - 1)))
            elif wl.kind in ("Deployment", "Job") and any(p.word and p.t0 < 7200 for p in wl.pods):
                for p in wl.pods[:3]:
                    kind, name, uid = ("ReplicaSet", wl.rs_name, wl.rs_uid) if wl.kind == "Deployment" else ("Job", wl.name, wl.uid)
                    comp = "replicaset-controller" if wl.kind == "Deployment" else "job-controller"
                    tt = max(40, p.t0)
                    self.controller_event(wl, kind, name, uid, comp, "SuccessfulCreate", "Normal", f"Created pod: {p.name}",
                                          1, tt, tt, salt=p.name)

    def controller_event(self, wl: Workload, kind: str, name: str, uid: str, component: str, reason: str, type_: str,
                         message: str, count: int, t_first: int, t_last: int, salt: str = "") -> None:
        api = "apps/v1" if kind == "ReplicaSet" else "batch/v1"
        vals = {"oname": name, "ons": wl.ns, "orv": self.rv(kind, wl.ns, name), "ouid": uid, "msg": js(message),
                "count": str(count), "tfirst": ts(t_first), "tlast": ts(t_last), "host": "", "fpath": ""}
        self.events.append((wl.ns, self.event_name(name, reason + salt), f"ctrl/{reason}/{type_}/{component}/{api}/{kind}", vals))

    # -- quotas ----------------------------------------------------------------------------------
    def compute_quotas(self) -> None:
        used: dict[str, dict[str, int]] = {ns: {"pods": 0, "requests.cpu": 0, "requests.memory": 0, "requests.nvidia.com/gpu": 0}
                                           for ns in QUOTA_NAMESPACES}
        for pod in self.pods:
            u = used.get(pod.ns)
            if u is None or pod.state in TERMINATED_STATES:
                continue
            req = pod.wl.shape.req
            u["pods"] += 1
            u["requests.cpu"] += req["cpu"]
            u["requests.memory"] += req["memory"]
            u["requests.nvidia.com/gpu"] += req[GPU]
        self.quota_used = used

    # -- everything ------------------------------------------------------------------------------
    def build(self) -> None:
        self.make_nodes()
        self.make_daemonsets()
        self.make_scenarios()
        self.make_refusals()
        self.fill_gpu()
        left = self.M - len(self.pods)
        cpu_nodes = len([n for n in self.nodes if not n.pool["gpu"]])
        if left < 40:
            raise SystemExit(f"generate_bundle: --pods {self.M} is too few for --nodes {self.N}: DaemonSets, GPU pools "
                             f"and the pending cases already need {len(self.pods)}; ask for at least {len(self.pods) + 40}")
        if left / max(1, cpu_nodes) > 85:
            raise SystemExit(f"generate_bundle: --pods {self.M} is too many for --nodes {self.N} (more than ~85 pods per CPU node)")
        finished = self.finished_jobs(int(left * 0.10))
        self.fill_cpu(self.M - len(self.pods))
        assert len(self.pods) == self.M, (len(self.pods), self.M)
        # The scheduler's messages, from the final world (a message that claims "exact" and finds a node
        # that fits is a design error and raises).
        for pod in self.pods:
            if pod.state == "unsched":
                pod.msg = self.msg(pod.wl.shape, pod.pin, pod.mode)
        self.compute_quotas()
        self.make_events()
        del finished


# ===================================================================== writing

class ListWriter:
    """Streams one kubectl List to disk, hashing and counting as it goes."""

    def __init__(self, path: Path) -> None:
        self.f = open(path, "wb")
        self.sha = hashlib.sha256()
        self.size = 0
        self.items = 0
        self.buf: list[str] = []
        self.buf_len = 0
        self.redactions = {"env-value": 0, "last-applied-configuration": 0}
        self._emit('{\n    "apiVersion": "v1",\n    "items": [')

    def _emit(self, s: str) -> None:
        self.buf.append(s)
        self.buf_len += len(s)
        if self.buf_len > (4 << 20):
            self.flush()

    def flush(self) -> None:
        data = "".join(self.buf).encode("utf-8")
        self.f.write(data)
        self.sha.update(data)
        self.size += len(data)
        self.buf = []
        self.buf_len = 0

    def add(self, text: str, tpl: Tpl) -> None:
        self._emit(("\n" if self.items == 0 else ",\n") + text)
        self.items += 1
        for k, v in tpl.redactions.items():
            self.redactions[k] += v

    def close(self) -> tuple[int, str, int]:
        self._emit(("\n    ]" if self.items else "]") + ',\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
        self.flush()
        self.f.close()
        return self.size, self.sha.hexdigest(), self.items


class Writer:
    def __init__(self, gen: Generator, out: Path) -> None:
        self.g = gen
        self.out = out
        self.entries: list[dict] = []
        self.owner_tpls: dict[tuple, Tpl] = {}

    def tpl(self, key: tuple, make) -> Tpl:
        t = self.owner_tpls.get(key)
        if t is None:
            t = self.owner_tpls[key] = Tpl(make())
        return t

    def entry(self, kind: str, size: int, sha: str, items: int | None, red: dict | None) -> None:
        cmd = ["kubectl", "get", kind] + (["-A"] if NAMESPACED[kind] else []) + ["-o", "json"]
        e = {"path": f"{kind}.json", "kind": kind, "status": "ok", "command": cmd, "exitStatus": 0, "stderr": "",
             "bytes": size, "sha256": sha, "items": items}
        if red is not None:
            e["redactions"] = red
        self.entries.append(e)

    def write_list(self, kind: str, items) -> None:
        w = ListWriter(self.out / f"{kind}.json")
        for text, tpl in items:
            w.add(text, tpl)
        size, sha, n = w.close()
        self.entry(kind, size, sha, n, dict(w.redactions))

    # -- per kind ------------------------------------------------------------------------------
    def pod_items(self):
        g = self.g
        seed = g.seed
        pods = sorted(g.pods, key=lambda p: (p.ns, p.name))
        for p in pods:
            wl = p.wl
            shape = wl.shape
            tpl = shape.tpl(p.state)
            hb = bo.h64(seed, "pod", p.ns, p.name)
            uid = bo.uid_from(hb)
            v = dict(wl.vals)
            node = p.node
            t0 = p.t0
            t1 = max(1, t0 - 2)
            t2 = max(1, t1 - 3 - hb[20] % 40)
            t3 = max(1, t2 - 5 - hb[21] % 50)
            v.update({"name": p.name, "uid": uid, "rv": str(int.from_bytes(hb[16:20], "big") % 90_000_000 + 1_000_000),
                      "t0": ts(t0), "t1": ts(t1), "t2": ts(t2), "t3": ts(t3), "tok": bo.suffix_from(hb[24:29]),
                      "msg": js(p.msg) if p.msg else "", "restarts": str(3 + hb[30] % 60), "idx": str(p.idx),
                      "pin": p.pin})
            if node is not None:
                v["node"] = node.name
                v["hip"] = node.ip
                v["pip"] = p.pip
            for i in range(shape.n_ctr):
                v[f"cid{i}"] = hashlib.blake2b(hb, digest_size=32, salt=bytes([i])).hexdigest()
            for i in range(shape.n_init):
                v[f"icid{i}"] = hashlib.blake2b(hb, digest_size=32, salt=bytes([100 + i])).hexdigest()
            yield tpl.render(v), tpl

    def node_items(self):
        g = self.g
        for n in sorted(g.nodes, key=lambda n: n.name):
            state = "noplugin" if n.pool["noplugin"] else n.state
            tpl = self.tpl(("node", n.pool["name"], state), lambda: bo.node_obj(n.pool, state))
            hb = g.h("nodeinfo", n.name)
            v = {"name": n.name, "uid": n.uid, "rv": g.rv("node", n.name), "t0": ts(n.t0), "zone": n.zone,
                 "cidr": n.cidr, "ip": n.ip, "iid": str(int.from_bytes(hb[:8], "big") % 10**19),
                 "boot": bo.uid_from(hb[8:24]), "mid": hb[24:40].hex(), "tn0": ts(n.t0 - 60), "tn1": ts(g.rng.randint(5, 50)),
                 "tc": ts(g.rng.randint(3600, 4 * 86400))}
            yield tpl.render(v), tpl

    def owner_items(self, kind: str):
        g = self.g
        out = []
        for wl in g.workloads:
            live = [p for p in wl.pods if p.state not in TERMINATED_STATES]
            ready = [p for p in live if p.state == "running"]
            if kind == "replicasets" and wl.kind == "Deployment":
                desired = len(live) + wl.missing
                refused = wl.refused == "quota"
                tpl = self.tpl(("rs", wl.shape.key, refused, bool(ready), bool(live)),
                               lambda: bo.replicaset_obj(wl.shape.desc, refused, ready=bool(ready), existing=bool(live)))
                v = dict(wl.vals)
                v.update({"name": wl.rs_name, "uid": wl.rs_uid, "rv": g.rv("rs", wl.ns, wl.rs_name), "t0": ts(wl.t0 - 1),
                          "gen_n": "1", "hash": wl.hash, "desired": str(desired), "maxr": str(desired + max(1, desired // 4)),
                          "revision": str(wl.gen_n), "oname": wl.name, "ouid": wl.uid, "existing": str(len(live)),
                          "ready": str(len(ready)), "desired_n": str(desired), "tf": ts(max(30, wl.t0 - 20)),
                          "fmsg": js(wl.fail_msg)})
                out.append(((wl.ns, wl.rs_name), tpl.render(v), tpl))
                if wl.old_hash:
                    old = f"{wl.name}-{wl.old_hash}"
                    tpl = self.tpl(("rs-idle", wl.shape.key), lambda: bo.replicaset_idle_obj(wl.shape.desc))
                    v.update({"name": old, "uid": g.uid("ReplicaSet", wl.ns, old), "rv": g.rv("rs", wl.ns, old),
                              "t0": ts(wl.t0), "hash": wl.old_hash, "revision": str(wl.gen_n - 1), "desired": "0",
                              "maxr": "0", "desired_n": "0"})
                    out.append(((wl.ns, old), tpl.render(v), tpl))
            elif kind == "jobs" and wl.kind == "Job":
                state = wl.job_state
                tpl = self.tpl(("job", wl.shape.key, state, bool(wl.cron)), lambda: bo.job_obj(wl.shape.desc, state, bool(wl.cron)))
                succeeded = sum(1 for p in wl.pods if p.state == "succeeded")
                failed = sum(1 for p in wl.pods if p.state in ("failed", "oom"))
                par = len(live) if state == "running" else max(1, succeeded or failed)
                if state == "refused":
                    par = wl.missing
                v = dict(wl.vals)
                v.update({"name": wl.name, "uid": wl.uid, "rv": g.rv("job", wl.ns, wl.name), "t0": ts(wl.t0),
                          "t1": ts(max(1, wl.t0 - 1)), "t3": ts(max(1, wl.t0 - 300)), "gen_n": "1",
                          "completions": str(max(1, par if state != "complete" else succeeded)), "parallelism": str(par),
                          "succeeded": str(succeeded), "failed": str(failed), "active": str(len(live)),
                          "ready": str(len(ready)), "oname": wl.cron, "ouid": g.uid("CronJob", wl.ns, wl.cron) if wl.cron else ""})
                out.append(((wl.ns, wl.name), tpl.render(v), tpl))
            elif kind == "statefulsets" and wl.kind == "StatefulSet":
                tpl = self.tpl(("sts", wl.shape.key), lambda: bo.statefulset_obj(wl.shape.desc))
                v = dict(wl.vals)
                v.update({"name": wl.name, "uid": wl.uid, "rv": g.rv("sts", wl.ns, wl.name), "t0": ts(wl.t0), "gen_n": "1",
                          "desired_n": str(len(live)), "ready": str(len(ready)), "existing": str(len(live)),
                          "oname": wl.name, "hash": wl.hash})
                out.append(((wl.ns, wl.name), tpl.render(v), tpl))
            elif kind == "daemonsets" and wl.kind == "DaemonSet":
                unavailable = len(live) - len(ready)
                tpl = self.tpl(("ds", wl.shape.key, bool(unavailable)), lambda: bo.daemonset_obj(wl.shape.desc, bool(unavailable)))
                v = dict(wl.vals)
                v.update({"name": wl.name, "uid": wl.uid, "rv": g.rv("ds", wl.ns, wl.name), "t0": ts(wl.t0), "gen_n": "1",
                          "desired": str(len(live)), "available": str(len(ready)), "unavailable": str(unavailable)})
                out.append(((wl.ns, wl.name), tpl.render(v), tpl))
        out.sort(key=lambda x: x[0])
        for _, text, tpl in out:
            yield text, tpl

    def event_items(self):
        g = self.g
        tpls = {}

        def tpl_for(key: str) -> Tpl:
            t = tpls.get(key)
            if t is None:
                parts = key.split("/")
                if parts[0] == "sched":
                    t = Tpl(bo.event_scheduler("FailedScheduling", "Warning", "Scheduling", parts[1] == "series"))
                elif parts[0] == "kubelet":
                    t = Tpl(bo.event_controller(parts[1], parts[2], "kubelet", "v1", "Pod", host=True, field_path=parts[3] == "f"))
                elif parts[0] == "node":
                    t = Tpl(bo.event_controller(parts[1], "Normal", "kubelet", "v1", "Node", host=True))
                else:
                    _, reason, type_, comp, api1, api2, kind = parts
                    t = Tpl(bo.event_controller(reason, type_, comp, f"{api1}/{api2}", kind))
                tpls[key] = t
            return t

        for ns, name, key, vals in sorted(g.events, key=lambda e: (e[0], e[1])):
            t = tpl_for(key)
            v = dict(vals)
            v.update({"name": name, "ns": ns, "rv": g.rv("event", ns, name), "uid": g.uid("event", ns, name)})
            if key.startswith("sched"):
                v["tfirst"] = vals["tfirst"]
            yield t.render(v), t

    def namespace_items(self):
        g = self.g
        names = sorted({p.ns for p in g.pods} | {w.ns for w in g.workloads} | set(QUOTA_NAMESPACES)
                       | {"default", "kube-node-lease", "kube-public", "kube-system"})
        for name in names:
            system = name in ("default", "kube-node-lease", "kube-public", "kube-system")
            labels = {"kubernetes.io/metadata.name": name}
            if not system:
                labels["team"] = TEAMS.get(name, "platform")
                if name in ("web", "shop", "payments", "search"):
                    labels["istio-injection"] = "enabled"
            tpl = self.tpl(("ns", tuple(sorted(labels.items())), not system), lambda: bo.namespace_obj(not system, labels))
            v = {"name": name, "uid": g.uid("ns", name), "rv": g.rv("ns", name), "t0": ts(400 * 86400 if system else 200 * 86400)}
            yield tpl.render(v), tpl

    def quota_items(self):
        g = self.g
        refused = {w.ns for w in g.quota_refused}
        out = []
        for ns in QUOTA_NAMESPACES:
            used = g.quota_used[ns]
            hard = {"pods": str(max(20, -(-used["pods"] * 5 // 4) // 10 * 10 + 10)),
                    "requests.cpu": str(max(8, -(-used["requests.cpu"] * 5 // 4000) + 4)),
                    "requests.memory": f"{max(32, -(-used['requests.memory'] * 5 // (4 * GI)) + 16)}Gi",
                    "requests.nvidia.com/gpu": str(used["requests.nvidia.com/gpu"] + 8 if ns not in refused else used["requests.nvidia.com/gpu"] + 16)}
            shown = {"pods": str(used["pods"]), "requests.cpu": bo.fmt_cpu(used["requests.cpu"]),
                     "requests.memory": bo.fmt_mem(used["requests.memory"]), "requests.nvidia.com/gpu": str(used["requests.nvidia.com/gpu"])}
            out.append(((ns, "compute-resources"), hard, shown))
            if ns in refused:
                gpu = str(used["requests.nvidia.com/gpu"])
                out.append(((ns, "gpu-quota"), {"requests.nvidia.com/gpu": gpu}, {"requests.nvidia.com/gpu": gpu}))
        for (ns, name), hard, shown in sorted(out, key=lambda x: x[0]):
            tpl = Tpl(bo.quota_obj(hard, shown))
            v = {"name": name, "ns": ns, "uid": g.uid("quota", ns, name), "rv": g.rv("quota", ns, name), "t0": ts(150 * 86400)}
            yield tpl.render(v), tpl

    def runtimeclass_items(self):
        g = self.g
        for name, handler, overhead in (("gvisor", "runsc", {"cpu": "250m", "memory": "64Mi"}), ("nvidia-cdi", "nvidia", None)):
            tpl = Tpl(bo.runtimeclass_obj(name, handler, overhead, None))
            v = {"uid": g.uid("rc", name), "rv": g.rv("rc", name), "t0": ts(300 * 86400)}
            yield tpl.render(v), tpl

    def version(self) -> None:
        doc = {
            "clientVersion": {"major": "1", "minor": "32", "gitVersion": CLIENT_VERSION,
                              "gitCommit": "6b25d0a3a8c4c9b3d8d5d8b2c9a5a0a3c4f1e6d2", "gitTreeState": "clean",
                              "buildDate": "2025-04-22T16:03:51Z", "goVersion": "go1.23.8", "compiler": "gc",
                              "platform": "linux/amd64"},
            "kustomizeVersion": "v5.5.0",
            "serverVersion": {"major": "1", "minor": "36", "gitVersion": SERVER_VERSION,
                              "gitCommit": "98b35193b2ac7a23a673325f5e9b830ecd5ba406", "gitTreeState": "clean",
                              "buildDate": "2026-10-14T09:12:40Z", "goVersion": "go1.27.3", "compiler": "gc",
                              "platform": "linux/amd64"},
        }
        data = (json.dumps(doc, indent=2) + "\n").encode()
        (self.out / "version.json").write_bytes(data)
        self.entries.insert(0, {"path": "version.json", "kind": "version", "status": "ok",
                                "command": ["kubectl", "version", "-o", "json"], "exitStatus": 0, "stderr": "",
                                "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "items": None})

    def write_all(self) -> None:
        self.write_list("pods", self.pod_items())
        self.write_list("nodes", self.node_items())
        self.write_list("resourcequotas", self.quota_items())
        self.write_list("runtimeclasses", self.runtimeclass_items())
        self.write_list("events", self.event_items())
        self.write_list("replicasets", self.owner_items("replicasets"))
        self.write_list("jobs", self.owner_items("jobs"))
        self.write_list("statefulsets", self.owner_items("statefulsets"))
        self.write_list("daemonsets", self.owner_items("daemonsets"))
        self.write_list("namespaces", self.namespace_items())
        self.version()
        counts = {"env-value": 0, "last-applied-configuration": 0}
        for e in self.entries:
            for k, v in (e.get("redactions") or {}).items():
                counts[k] += v
        created = bo.ts(0)
        manifest = {
            "format": "gpu-triage/bundle",
            "formatVersion": 1,
            "created": created,
            "completed": created,
            "collector": {"name": "generate_bundle.py", "version": "0.1.0"},
            "kubectl": {"clientVersion": CLIENT_VERSION, "serverVersion": SERVER_VERSION},
            "context": CONTEXT,
            "namespaces": None,
            "redaction": {"enabled": True, "marker": MARKER, "rules": ["env-value", "last-applied-configuration"],
                          "counts": counts},
            "partial": False,
            "files": self.entries,
            "attempts": [],
        }
        (self.out / "manifest.json").write_bytes((json.dumps(manifest, indent=2) + "\n").encode())


def write_truth(gen: Generator, path: Path) -> None:
    lines = [f"{k}\t{v}\n" for k, v in sorted(gen.truth.items())]
    path.write_text("".join(lines))


def add_stuck_daemonset(out: Path) -> int:
    """The stuck DaemonSet rollout (issue 10's cliff case, common after a GPU driver upgrade): one Pending pod
    of DaemonSet gpu-operator/nvidia-driver-daemonset per node, each pinned to its own node the way the
    DaemonSet controller pins them (required node affinity `matchFields metadata.name In [node]`,
    kubernetes pkg/controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity), tolerating every taint
    and asking more memory than any node has, so every pod needs the per-node funnel. Appended to
    pods.json; the manifest's size, sha256 and item count for pods.json are updated. Returns the count."""
    import hashlib

    import orjson

    nodes = [n["metadata"]["name"] for n in orjson.loads((out / "nodes.json").read_bytes())["items"]]
    doc = orjson.loads((out / "pods.json").read_bytes())
    total = len(nodes)
    ds_uid = "5d0c1a2b-0000-4000-8000-00000000d5d5"
    for i, node in enumerate(nodes):
        doc["items"].append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"nvidia-driver-daemonset-{i:05d}", "namespace": "gpu-operator",
                         "uid": f"5d0c1a2b-{i:04x}-4000-8000-{i:012x}", "creationTimestamp": ts(600),
                         "labels": {"app": "nvidia-driver-daemonset", "controller-revision-hash": "7c9d5b8f6d"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "nvidia-driver-daemonset",
                                              "uid": ds_uid, "controller": True, "blockOwnerDeletion": True}]},
            "spec": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
                "containers": [{"name": "nvidia-driver-ctr", "image": "nvcr.io/nvidia/driver:570.86.15-ubuntu22.04",
                                "resources": {"requests": {"cpu": "500m", "memory": "4Ti"}}}],
                "tolerations": [{"operator": "Exists"}],
                "priorityClassName": "system-node-critical", "priority": 2000001000,
                "schedulerName": "default-scheduler"},
            "status": {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": ts(590),
                "message": f"0/{total} nodes are available: 1 Insufficient memory, {total - 1} node(s) didn't match "
                           f"Pod's node affinity/selector. preemption: 0/{total} nodes are available: 1 No preemption "
                           f"victims found for incoming pod, {total - 1} Preemption is not helpful for scheduling."}],
                "qosClass": "Burstable"},
        })
    data = orjson.dumps(doc)
    (out / "pods.json").write_bytes(data)
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        manifest = orjson.loads(manifest_path.read_bytes())
        for e in manifest.get("files") or ():
            if e.get("path") == "pods.json":
                e["bytes"] = len(data)
                e["sha256"] = hashlib.sha256(data).hexdigest()
                if "items" in e:
                    e["items"] = len(doc["items"])
        manifest_path.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, required=True, help="number of nodes (at least 16)")
    ap.add_argument("--pods", type=int, required=True, help="number of pods in pods.json, every phase included")
    ap.add_argument("--seed", type=int, default=1, help="same seed, same bytes (default 1)")
    ap.add_argument("--out", type=Path, required=True, help="bundle directory to create")
    ap.add_argument("--truth", type=Path, help="write the intended cause word per target here (TSV, sorted)")
    ap.add_argument("--pending-percent", type=float, default=3.0, help="share of pods that are pending targets (default 3)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    ap.add_argument("--stuck-daemonset", action="store_true",
                    help="also one Pending DaemonSet pod per node, each pinned to its node by matchFields (issue 10's cliff)")
    ap.add_argument("--dra", action="store_true", help="add DRA objects and claim pods (scripts/generate_dra.py)")
    ap.add_argument("--node-side", action="store_true",
                    help="add time-sliced and MIG nodes and bound pods the node will not start (scripts/generate_nodeside.py)")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        if not args.force:
            print(f"generate_bundle: {out} exists and is not empty (use --force to replace it)", file=sys.stderr)
            return 2
    gen = Generator(args.nodes, args.pods, args.seed, args.pending_percent)
    gen.build()
    t_built = time.perf_counter()
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        Writer(gen, tmp).write_all()
        from generate_filters import add_filters  # volumes, inter-pod terms, spread, host ports
        add_filters(tmp, args.seed)
        if args.stuck_daemonset:
            add_stuck_daemonset(tmp)
        if args.dra:  # after the device-plugin world is written: its pods and truth stay as they are
            from generate_dra import add_dra
            gen.truth.update(add_dra(tmp, args.seed))
        if args.node_side:  # last: its namespace sorts after the DRA one, its nodes after every generated node
            from generate_nodeside import add_node_side
            gen.truth.update(add_node_side(tmp, args.seed))
        if out.exists():
            shutil.rmtree(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if args.truth:
        write_truth(gen, args.truth)
    words: dict[str, int] = {}
    for w in gen.truth.values():
        words[w] = words.get(w, 0) + 1
    size = (out / "pods.json").stat().st_size
    print(f"generate_bundle: {out}: {len(gen.nodes)} nodes, {len(gen.pods)} pods ({size / 1e6:,.1f} MB pods.json), "
          f"{len(gen.truth)} targets; planned in {t_built - t_start:.1f} s, total {time.perf_counter() - t_start:.1f} s",
          file=sys.stderr)
    extra = sorted(set(words) - set(POD_WORDS) - {"no-runtimeclass", "quota-exceeded"})
    print("  " + ", ".join(f"{w} {words.get(w, 0)}" for w in ("no-runtimeclass", "quota-exceeded") + POD_WORDS + tuple(extra)),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
