"""Node pools (GPU and CPU machine shapes, labels, taints) and the generator's Node."""

from __future__ import annotations

from bundlegen.common import ACCOUNTED, EPH, GPU, KI, MIG, UNSCHEDULABLE_KEY

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
    __slots__ = (
        "alloc",
        "cidr",
        "index",
        "ip",
        "ip_next",
        "labels",
        "name",
        "npods",
        "pool",
        "state",
        "t0",
        "taints",
        "uid",
        "unschedulable",
        "used",
        "zone",
    )

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
