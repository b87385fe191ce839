"""`--diverse`: pending pods the way a real cluster has them, hundreds of distinct shapes rather than a few dozen.

Every Deployment, Job and notebook asks for its own mix: GPU count and product, cpu and memory, a pool, an
accelerator or a product label, zones by required node affinity (In, NotIn), its own tolerations (the GPU taint,
more than it needs, everything, or none); and CPU jobs that ask for more memory than a node has. Most shapes have
hundreds or thousands of candidate nodes. They are added once the world is final (every running pod placed), and
each shape's word is what this world gives, judged here stage by stage as causes.md orders them (selector,
advertised, taints, allocatable, fit), independently of the analyzer: `--truth` stays the answer key.
"""

from __future__ import annotations

import bundle_objects as bo
from bundle_objects import GPU_TOLERATION

from bundlegen.common import GPU, MIG, UNSCHEDULABLE_KEY, ZONES
from bundlegen.descs import (
    notebook_desc,
    sel_accel,
    sel_pool,
    trainer_desc,
    triton_desc,
    vllm_desc,
    worker_desc,
)
from bundlegen.model import Node, Shape, _term_ok, _tolerates
from bundlegen.pools import A100, H100, L4

DIVERSE_SHARE = 0.018  # of all pods: pending pods of the diverse shapes
PODS_PER_SHAPE = 8  # on average (1 to 15)
NAMESPACES = ("ml-training", "ml-inference", "research", "vision", "nlp", "recsys", "batch")
GPU_POOLS = (("h100-pool", H100), ("a100-pool", A100), ("l4-pool", L4))
EXTRA_TOLERATIONS = ({"effect": "NoSchedule", "key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true"},
                     {"effect": "NoExecute", "key": "dedicated", "operator": "Equal", "value": "ml"},
                     {"operator": "Exists"})
CPUS = ("2", "4", "6", "8", "12", "16", "24", "32", "48", "64", "96", "150")
MEMS = ("8Gi", "16Gi", "24Gi", "32Gi", "48Gi", "64Gi", "96Gi", "128Gi", "200Gi", "320Gi", "640Gi", "1200Gi")
BIG_MEMS = ("300Gi", "400Gi", "600Gi", "900Gi", "1Ti", "1500Gi", "2Ti")


class Diverse:
    """Part of Generator (bundlegen/generator.py): its attributes and helpers are the Generator's."""

    def diverse_budget(self) -> int:
        return round(self.M * DIVERSE_SHARE) if self.diverse else 0

    def _gpu_shape(self, i: int) -> tuple[str, dict]:
        rng = self.rng
        pool, gpu = GPU_POOLS[rng.randrange(len(GPU_POOLS))]
        count = rng.randint(1, gpu["count"])
        cpu, mem = rng.choice(CPUS[:8]), rng.choice(MEMS[:10])
        how = rng.choice(("pool", "accel", "product", "zones", "not-zones"))
        sel: dict = sel_pool(pool) if how == "pool" else sel_accel(gpu)
        make = rng.choice((vllm_desc, triton_desc, trainer_desc, notebook_desc))
        if make is notebook_desc:
            d = notebook_desc("ReplicaSet", count, sel, True)
        elif make is trainer_desc:
            d = trainer_desc("Job", count, sel, True, cpu, mem)
        else:
            d = make("ReplicaSet", count, sel, True, cpu, mem)
        if how in ("product", "zones", "not-zones"):
            exprs = [{"key": "nvidia.com/gpu.product", "operator": "In", "values": [gpu["product"]]}]
            if how != "product":
                zones = sorted(rng.sample(ZONES, rng.randint(1, len(ZONES) - 1)))
                exprs.append({"key": "topology.kubernetes.io/zone", "operator": "In" if how == "zones" else "NotIn",
                              "values": zones})
            d["node_selector"] = {}
            d["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": exprs}]}}}
        tol = rng.random()
        if tol < 0.12:
            d["tolerations"] = []  # forgot the GPU taint's toleration
        elif tol < 0.4:
            d["tolerations"] = [GPU_TOLERATION] + rng.sample(EXTRA_TOLERATIONS[:2], rng.randint(1, 2))
        elif tol < 0.45:
            d["tolerations"] = [EXTRA_TOLERATIONS[2]]
        key = f"diverse/{i}/{pool}/{count}/{cpu}/{mem}/{how}/{len(d.get('tolerations') or ())}"
        return key, d

    def _cpu_shape(self, i: int) -> tuple[str, dict]:
        rng = self.rng
        d = worker_desc(rng.choice(CPUS[4:]), rng.choice(BIG_MEMS), owner="Job", restart="Never")
        if rng.random() < 0.3:
            d["node_selector"] = sel_pool("highmem-pool")
        return f"diverse/{i}/cpu", d

    def _mig_shape(self, i: int) -> tuple[str, dict]:
        rng = self.rng
        d = notebook_desc("ReplicaSet", rng.randint(1, 7), sel_pool("a100-mig-pool"), True, res=MIG)
        return f"diverse/{i}/mig", d

    def judge(self, shape: Shape) -> str:
        """The word this world gives the shape (causes.md's funnel order); fits-now when some node has room."""
        desc, req = shape.desc, shape.req
        sel = desc.get("node_selector") or {}
        terms = (((desc.get("affinity") or {}).get("nodeAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
        nodes = [n for n in self.nodes if all(n.labels.get(k) == v for k, v in sel.items())
                 and (terms is None or any(_term_ok(t, n.labels) for t in terms))]
        if not nodes:
            return "selector-mismatch"
        wanted = [r for r in (GPU, MIG) if req.get(r)]
        nodes = [n for n in nodes if all(_advertises(n, r) for r in wanted)]
        if not nodes:
            return "no-gpu-node"
        tols = list(desc.get("tolerations") or []) + bo.DEFAULT_TOLERATIONS
        blocked = {n.name: [t for t in n.taints if t[2] in ("NoSchedule", "NoExecute") and not _tolerates(tols, *t)]
                   for n in nodes}
        left = [n for n in nodes if not blocked[n.name]]
        if not left:
            only_cordon = all(all(t[0] == UNSCHEDULABLE_KEY for t in b) for b in blocked.values())
            return "cordoned" if only_cordon else "untolerated-taint"
        left = [n for n in left if all(n.alloc[r] > 0 for r in wanted)]
        if not left:
            return "allocatable-zero"
        return "fits-now" if any(n.fits(req) for n in left) else "exhausted"

    def make_diverse(self, budget: int) -> None:
        rng = self.rng
        i = 0
        while budget > 0:
            roll = rng.random()
            key, desc = self._cpu_shape(i) if roll < 0.15 else self._mig_shape(i) if roll < 0.2 else self._gpu_shape(i)
            shape = self.shape(key, lambda d=desc: d)
            word = self.judge(shape)
            kind = "Job" if desc.get("owner") == "Job" else "Deployment"
            wl = self.new_workload(kind, rng.choice(NAMESPACES), f"{kind.lower()}-{i}-{rng.choice(('svc', 'run', 'nb'))}",
                                   shape, t0=rng.randint(600, 7200) if kind == "Job" else None)
            for _ in range(min(budget, rng.randint(1, 2 * PODS_PER_SHAPE - 1))):
                self.pending(wl, word, mode="stale" if word == "fits-now" else "exact")
                budget -= 1
            i += 1


def _advertises(node: Node, resource: str) -> bool:
    """status.capacity has the resource (bundle_objects.node_obj): a GPU pool's nodes whose plugin came up."""
    gpu = node.pool["gpu"]
    if not gpu or node.state == "noplugin" or node.pool["noplugin"]:
        return False
    return resource == GPU or (resource == MIG and bool(gpu.get("mig")))

