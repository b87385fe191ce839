"""The Generator: identity, nodes, workloads and pods, the pending plan, and build() in order."""

from __future__ import annotations

import hashlib
import random

import bundle_objects as bo
from bundlegen.common import CLUSTER, TEAMS, WORDS, ZONES
from bundlegen.descs import ds_desc
from bundlegen.diverse import Diverse
from bundlegen.events import Events
from bundlegen.filling import Filling
from bundlegen.filters_scenarios import FilterScenarios
from bundlegen.kueue import KueuePods
from bundlegen.model import TERMINATED_STATES, Pod, Shape, Workload, scheduler_message
from bundlegen.pools import Node, make_pools
from bundlegen.scenarios import Scenarios


class Generator(Scenarios, FilterScenarios, Filling, Events, Diverse, KueuePods):
    def __init__(self, n_nodes: int, n_pods: int, seed: int, pending_pct: float, diverse: bool = False,
                 kueue: bool = False, hami: bool = False, kai: bool = False) -> None:
        if n_nodes < 16:
            raise SystemExit("generate_bundle: --nodes must be at least 16 (every pool and special node needs one)")
        self.N = n_nodes
        self.M = n_pods
        self.diverse = diverse
        self.kueue = kueue
        self.hami = hami  # half the GPU pods for hami-scheduler, the GPU nodes registered with HAMi (writer.py)
        self.kai = kai  # a third of the rest for kai-scheduler, with KAI's pods and the lab's (bundlegen/kai.py)
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

    def shape(self, key: str, make, extra: dict | None = None) -> Shape:
        s = self.shapes.get(key)
        if s is None:
            s = self.shapes[key] = Shape(key, make(), extra)
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
            ("vc-wffc", 3), ("vc-zone", 4), ("pa-missing", 3), ("ex-wffc", 2), ("ex-affinity", 2), ("fn-wffc", 2),
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

    def build(self) -> None:
        self.make_nodes()
        self.make_daemonsets()
        self.make_scenarios()
        self.make_filter_scenarios()
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
        diverse = self.diverse_budget()
        kueue = self.kueue_budget()
        self.fill_cpu(self.M - len(self.pods) - diverse - kueue)
        self.make_diverse(diverse)  # pending: they hold nothing, and are judged in the final world
        self.make_kueue(kueue)  # gated: they hold nothing either
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
