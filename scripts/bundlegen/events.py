"""Kubelet and controller events, and the quotas' status.used."""

from __future__ import annotations

import bundle_objects as bo
from bundle_objects import js
from bundlegen.common import GPU, QUOTA_NAMESPACES, ts, ts_micro
from bundlegen.model import TERMINATED_STATES, Pod, Workload


class Events:
    """Part of Generator (bundlegen/generator.py): its attributes and helpers are the Generator's."""

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
