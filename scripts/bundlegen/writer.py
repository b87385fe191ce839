"""Writing the bundle: every List in kubectl's shape and indentation, version.json and manifest.json."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import bundle_objects as bo

from bundle_objects import MARKER, Tpl, js
from bundlegen.common import (
    CLIENT_VERSION,
    CONTEXT,
    GI,
    NAMESPACED,
    QUOTA_NAMESPACES,
    SERVER_VERSION,
    TEAMS,
    ts,
)
from bundlegen.kai import KaiWorld
from bundlegen.model import TERMINATED_STATES

if TYPE_CHECKING:
    from bundlegen.generator import Generator


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


def _card_memory(gpu: dict) -> int:
    return int(gpu["memory"]) if str(gpu.get("memory", "")).isdigit() else 81920


class HamiWorld:
    """`--hami`: every second pod asking nvidia.com/gpu of the default scheduler goes to hami-scheduler, asking whole
    cards (no nvidia.com/gpumem: all of each card's memory, HAMi's GenerateResourceRequests); a bound one holds the
    node's next free cards in `hami.io/vgpu-devices-allocated` (pkg/device/devices.go EncodeContainerDevices). Every
    GPU node with a device plugin registers its cards in HAMi's JSON format (v2.8.0, DeviceInfo) with a fresh
    handshake. Whole cards keep kube-scheduler's count and HAMi's the same, so every truth word stands."""

    def __init__(self, memory: dict[str, int]) -> None:
        self.memory = memory  # node -> MiB per card
        self.parity = 0
        self.next_card: dict[str, int] = {}

    @staticmethod
    def _dump(text: str, obj: dict) -> str:
        prefix = text[:len(text) - len(text.lstrip(" "))]
        return "\n".join(prefix + line for line in json.dumps(obj, indent=4).split("\n"))

    def node(self, text: str, pool: dict) -> str:
        gpu = pool.get("gpu")
        if not gpu or pool.get("noplugin") or '"nvidia.com/gpu"' not in text:
            return text
        obj = json.loads(text)
        name = obj["metadata"]["name"]
        memory = _card_memory(gpu)
        cards = [{"id": f"GPU-{name}-{i}", "index": i, "count": 1, "devmem": memory, "devcore": 100,
                  "type": f"NVIDIA-{gpu['product']}", "numa": 0, "mode": "hami-core", "health": True}
                 for i in range(int(gpu["count"]))]
        handshake = "Reported_" + ts(10).replace("T", " ").rstrip("Z")
        obj["metadata"].setdefault("annotations", {}).update({"hami.io/node-nvidia-register": json.dumps(cards),
                                                              "hami.io/node-handshake": handshake})
        return self._dump(text, obj)

    def pod(self, text: str) -> str:
        if '"nvidia.com/gpu": "' not in text or '"schedulerName": "default-scheduler"' not in text:  # asked, not tolerated
            return text
        self.parity ^= 1
        if not self.parity:
            return text
        obj = json.loads(text)
        spec = obj["spec"]
        spec["schedulerName"] = "hami-scheduler"
        node = spec.get("nodeName")
        if node and (obj.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            per_container = []
            for c in spec.get("containers") or ():
                n = int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0))
                first = self.next_card.get(node, 0)
                self.next_card[node] = first + n
                mem = self.memory.get(node, 0)
                per_container.append("".join(f"GPU-{node}-{i},NVIDIA,{mem},100:" for i in range(first, first + n)))
            obj["metadata"].setdefault("annotations", {})["hami.io/vgpu-devices-allocated"] = ";".join(per_container) + ";"
        return self._dump(text, obj)


class Writer:
    def __init__(self, gen: Generator, out: Path) -> None:
        self.g = gen
        self.out = out
        self.entries: list[dict] = []
        self.owner_tpls: dict[tuple, Tpl] = {}
        self.hami = HamiWorld({n.name: _card_memory(n.pool["gpu"]) for n in gen.nodes if n.pool["gpu"]}) if gen.hami else None
        self.kai = KaiWorld(gen=gen) if gen.kai else None
        if self.kai is not None:
            self.kai.plan()

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
            text = tpl.render(v)
            if self.hami is not None:
                text = self.hami.pod(text)
            if self.kai is not None:
                yield from self.kai.before((p.ns, p.name))
                text = self.kai.pod(text)
            yield text, tpl
        if self.kai is not None:
            yield from self.kai.rest()

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
            text = tpl.render(v)
            yield (self.hami.node(text, n.pool) if self.hami is not None else text), tpl

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
                       | (self.kai.namespaces if self.kai is not None else set())
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
