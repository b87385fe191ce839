"""Filling the GPU and CPU pools with running, finished and failed pods."""

from __future__ import annotations

from bundlegen.common import GPU, MIG
from bundlegen.descs import (
    DEPLOYMENT_DESCS,
    db_desc,
    etl_desc,
    notebook_desc,
    sel_accel,
    sel_pool,
    system_desc,
    trainer_desc,
    triton_desc,
    vllm_desc,
    worker_desc,
)
from bundlegen.model import Workload
from bundlegen.pools import H100


class Filling:
    """Part of Generator (bundlegen/generator.py): its attributes and helpers are the Generator's."""

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
        addons = (("kube-dns", max(2, self.N // 60)), ("konnectivity-agent", max(2, self.N // 120)),
                  ("metrics-server", 1), ("event-exporter-gke", 1), ("l7-default-backend", 1))
        for name, replicas in addons + ((("hami-scheduler", 1),) if self.hami else ()):
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
            for w, kind, nss, bases in kinds:  # noqa: B007 (the one picked is used after the loop)
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
