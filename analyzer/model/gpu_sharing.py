"""How a pod asks a GPU-sharing scheduler for a GPU (schedulers.md): HAMi's and Volcano's vGPU resources, HAMi's
device-selection annotations, KAI's fraction annotations. Such a pod asks for a GPU, whatever `nvidia.com/gpu`
says (the GPU intent row, `no-gpu-request`, never holds for it).

Names from the schedulers' own sources: HAMi `charts/hami/values.yaml` (the default resource names) and
`pkg/device/nvidia/device.go` (GPUInUse, GPUNoUse, GPUUseUUID); Volcano
`pkg/scheduler/api/devices/config/vgpu.go`; KAI-Scheduler's `gpu-fraction` / `gpu-memory` pod annotations.
"""

from __future__ import annotations

# HAMi's defaults (`resourceMem`, `resourceMemPercentage`, `resourceCores`). The scheduler extender manages them
# with ignoredByScheduler, and no node advertises them: kube-scheduler's fit never counts them.
HAMI_MEMORY = "nvidia.com/gpumem"
HAMI_MEMORY_PERCENTAGE = "nvidia.com/gpumem-percentage"
HAMI_CORES = "nvidia.com/gpucores"
HAMI_RESOURCES: tuple[str, ...] = (HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE, HAMI_CORES)
HAMI_USE_TYPE = "nvidia.com/use-gputype"
HAMI_NOUSE_TYPE = "nvidia.com/nouse-gputype"
HAMI_ANNOTATIONS: tuple[str, ...] = (HAMI_USE_TYPE, HAMI_NOUSE_TYPE, "nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid")

# Volcano's vGPU device plugin advertises these three on its nodes (they are ordinary extended resources there).
VOLCANO_NUMBER = "volcano.sh/vgpu-number"
VOLCANO_MEMORY = "volcano.sh/vgpu-memory"
VOLCANO_CORES = "volcano.sh/vgpu-cores"
VOLCANO_RESOURCES: tuple[str, ...] = (VOLCANO_NUMBER, VOLCANO_MEMORY, "volcano.sh/vgpu-memory-percentage",
                                      VOLCANO_CORES)

KAI_SCHEDULER = "kai-scheduler"
KAI_ANNOTATIONS: tuple[str, ...] = ("gpu-fraction", "gpu-memory")

# A bound pod's allocation as HAMi and Volcano write it (model/vgpu.py reads it): annotation -> whose it is.
ALLOCATION_ANNOTATIONS: dict[str, str] = {"hami.io/vgpu-devices-allocated": "HAMi", "volcano.sh/vgpu-ids-new": "Volcano"}

# The pod annotations a sharing rule reads (model/pods_index.py keeps these on a target).
SHARING_ANNOTATIONS: tuple[str, ...] = HAMI_ANNOTATIONS + KAI_ANNOTATIONS

_RESOURCES = frozenset(HAMI_RESOURCES + VOLCANO_RESOURCES)


def _resource_names(spec: dict) -> list[str]:
    names: list[str] = []
    for section in ("initContainers", "containers"):
        containers = spec.get(section)
        for c in containers if isinstance(containers, list) else ():
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            for kind in ("limits", "requests"):
                given = res.get(kind)
                if isinstance(given, dict):
                    names.extend(given)  # a JSON object's keys are strings
    return names


def sharing_request(spec: dict, annotations: dict[str, str]) -> list[str]:
    """What the pod asks of a sharing scheduler, as `name=value` texts ([] when nothing): its sharing resources, a
    KAI fraction annotation on a pod of kai-scheduler, HAMi's device-selection annotations."""
    found: list[str] = []
    for name in dict.fromkeys(_resource_names(spec)):
        if name in _RESOURCES:
            found.append(f"resource {name}")
    if spec.get("schedulerName") == KAI_SCHEDULER:
        found += [f"annotation {k}={annotations[k]}" for k in KAI_ANNOTATIONS if k in annotations]
    found += [f"annotation {k}={annotations[k]}" for k in HAMI_ANNOTATIONS if k in annotations]
    return found


def unadvertised(name: str) -> bool:
    """A resource kube-scheduler's fit never counts: HAMi's memory and cores (advertised by no node)."""
    return name in HAMI_RESOURCES
