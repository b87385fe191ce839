"""The order of causes.md, walked top to bottom: the first rule that holds is the answer.

    admission (never-created only)  1 no-runtimeclass, 2 quota-exceeded
    spec                            3 no-gpu-request
    gate                            4 scheduling-gated
    bound                           5 node-side
    funnel (funnel.py)              6 selector-mismatch, 7 cordoned, 8 untolerated-taint,
                                    9 no-gpu-node, 10 allocatable-zero, 11 exhausted
    rest                            12 unclassified, 13 fits-now

A rule that needs a file the bundle lacks answers insufficient-evidence and
names the file. The scheduler's message is quoted as evidence and never read
to decide. Classification never prints: it returns Verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from analyzer import words
from analyzer.evidence import scheduler_message
from analyzer.rules.admission import judge_admission
from analyzer.rules.funnel import FunnelResult, PodFacts, run_funnel, shortages
from analyzer.model.matching import selector_matches
from analyzer.model.views import TERMINATED, Cluster
from analyzer.targets.target import Target
from analyzer.model.podspec import accelerator_requests, effective_requests, gpu_intent, unmodelled
from analyzer.model.quantity import QuantityError, format_units


@dataclass
class Verdict:
    target: Target
    word: str
    reason: str
    evidence: dict = field(default_factory=dict)
    funnel: FunnelResult | None = None
    shape: "_Shape | None" = None  # the shared per-shape work; fit evidence is built from it on demand
    scheduler: dict | None = None

    @property
    def fit(self) -> list[dict] | None:
        """For exhausted: each candidate's allocatable, used (and by which pods), free, requested."""
        return self.shape.fit_rows() if self.shape is not None and self.word == words.EXHAUSTED else None

    @property
    def fragmented(self) -> bool | None:
        return self.shape.is_fragmented() if self.shape is not None and self.word == words.EXHAUSTED else None

    @property
    def too_large(self) -> list[str] | None:
        return self.shape.too_large() if self.shape is not None and self.word == words.EXHAUSTED else None

    @property
    def key(self) -> str:
        return self.target.key

    def to_dict(self) -> dict:
        """The JSON shape described by schemas/verdicts.schema.json."""
        t = self.target
        out: dict = {
            "kind": t.kind,
            "namespace": t.namespace,
            "name": t.name,
            "word": self.word,
            "reason": self.reason,
            "next_action": words.next_action(self.word),
            "source": t.source,
            "evidence": self.evidence,
            "funnel": None,
            "fit": self.fit,
            "fragmented": self.fragmented,
            "too_large": self.too_large,
            "scheduler_message": None,
        }
        if self.funnel is not None:
            out["funnel"] = self.funnel.as_json()
        if self.scheduler:
            out["scheduler_message"] = self.scheduler.get("message")
            out["scheduler"] = self.scheduler
        return out


_UNSET = object()


class _Unjudgeable(Exception):
    """A spec that is valid JSON but cannot be judged (the message says why)."""

MAX_USED_BY = 20  # pods listed per candidate node in exhausted evidence


class _Shape:
    """Everything that depends only on a pod's scheduling-relevant spec: the funnel, computed once;
    the reason line, the fit evidence and the rebuilt scheduler message, each computed on first use."""

    def __init__(self, cluster: Cluster, facts: PodFacts, funnel: FunnelResult) -> None:
        self.cluster = cluster
        self.facts = facts
        self.funnel = funnel
        self.rebuilt: object = _UNSET
        self._reason: str | None = None
        self._fit: tuple[list[dict], bool, list[str]] | None = None

    def reason(self) -> str:
        if self._reason is None:
            self._reason = _funnel_reason(self.funnel)
        return self._reason

    def fit_rows(self) -> list[dict]:
        if self._fit is None:
            self._fit = _fit_evidence(self.cluster, self.facts, self.funnel)
        return self._fit[0]

    def is_fragmented(self) -> bool:
        self.fit_rows()
        assert self._fit is not None
        return self._fit[1]

    def too_large(self) -> list[str]:
        """Resources the pod asks more of than any candidate's allocatable: it can never fit there."""
        self.fit_rows()
        assert self._fit is not None
        return self._fit[2]


def _fit_evidence(c: Cluster, facts: PodFacts, funnel: FunnelResult) -> tuple[list[dict], bool, list[str]]:
    """For exhausted: each candidate's allocatable, used (and by whom), free, requested; fragmentation."""
    wanted = c.config.resource_order([r for r, v in facts.requests.items() if v > 0] + ["pods"])
    rows = []
    free_sum: dict[str, int] = {}
    short_everywhere: set[str] | None = None
    pods_doc = c.pods
    for node in funnel.fit_candidates:
        used = c.usage.get(node.name) or {}
        short = [r for r, *_ in shortages(facts, node, c)]
        short_everywhere = set(short) if short_everywhere is None else short_everywhere & set(short)
        resources = {}
        for r in wanted:
            want = 1 if r == "pods" else facts.requests.get(r, 0)
            alloc = node.allocatable.get(r, 0)
            free = alloc - used.get(r, 0)
            free_sum[r] = free_sum.get(r, 0) + max(free, 0)
            resources[r] = {"allocatable": format_units(r, alloc), "used": format_units(r, used.get(r, 0)),
                            "free": format_units(r, free), "requested": format_units(r, want)}
        # The pods holding what is short, largest first; capped per node (the totals above stay exact),
        # so a pod that is short of memory on 5,000 nodes does not list every pod of the cluster.
        first = short[0] if short else None
        holders = [(i, req) for i, req in c.pods_on.get(node.name, ()) if any(req.get(r) for r in short)]
        holders.sort(key=lambda ir: -(ir[1].get(first, 0) if first else 0))
        used_by = []
        for i, req in holders[:MAX_USED_BY]:
            item = pods_doc.items[i] if pods_doc else {}
            meta = item["metadata"]
            used_by.append({"pod": f"{meta['namespace']}/{meta['name']}", "phase": (item.get("status") or {}).get("phase"),
                            "requests": {r: format_units(r, req[r]) for r in short if req.get(r)}})
        row = {"node": node.name, "resources": resources, "short": short, "used_by": used_by}
        if len(holders) > MAX_USED_BY:
            row["used_by_more"] = len(holders) - MAX_USED_BY
        if node.name in c.unknown_usage:
            row["unknown_usage"] = c.unknown_usage[node.name]
        rows.append(row)
    # Fragmented: enough free units summed over the candidates, and a node big enough to hold it once
    # freed, but no single node with enough free now. A request above every candidate's allocatable is
    # not fragmentation: waiting cannot help (too_large).
    fragmented = False
    too_large = []
    for r in short_everywhere or ():
        want = 1 if r == "pods" else facts.requests.get(r, 0)
        biggest = max((node.allocatable.get(r, 0) for node in funnel.fit_candidates), default=0)
        if biggest < want:
            too_large.append(r)
        elif free_sum.get(r, 0) >= want:
            fragmented = True
    return rows, fragmented, too_large


def _funnel_reason(funnel: FunnelResult) -> str:
    last = funnel.stages[-1]
    by_reason: dict[str, list[str]] = {}
    for node, reason in last.removed:
        by_reason.setdefault(reason.text, []).append(node)
    parts = [f"{_names(nodes)}: {text}" for text, nodes in sorted(by_reason.items(), key=lambda kv: -len(kv[1]))]
    head = {"selector": f"no node matches nodeSelector/affinity (0 of {last.nodes_in})",
            "taints": f"every candidate ({last.nodes_in}) is excluded by a taint or cordon",
            "advertised": f"no candidate ({last.nodes_in}) advertises the resource",
            "allocatable": f"every candidate ({last.nodes_in}) reports allocatable 0",
            "fit": f"no candidate ({last.nodes_in}) has room"}[last.name]
    if last.name == "selector":
        return head
    return head + ": " + "; ".join(parts[:3])


def _names(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


class Classifier:
    """Answers targets against one cluster view. Funnels are cached per distinct pod shape,
    so a Deployment's hundred pending replicas cost one funnel, not a hundred."""

    def __init__(self, cluster: Cluster, *, cache: bool = True) -> None:
        self.cluster = cluster
        self.cache = cache  # False: the straightforward path, one funnel per pod (tests compare the two)
        self._funnels: dict[bytes, _Shape] = {}

    # -- public ------------------------------------------------------------------------
    def classify(self, target: Target) -> Verdict:
        try:
            v = self._decide(target)
        except _Unjudgeable as exc:
            return Verdict(target, words.INSUFFICIENT_EVIDENCE, f"{target.source}: {exc}",
                           {"missing": target.source, "invalid": [str(exc)]})
        except QuantityError as exc:
            # A value that passed the schema but cannot be used (a quota's hard, a manifest's request):
            # this target cannot be decided; the others still are.
            text = str(exc)
            missing = text.split(":")[0] if text.startswith(("resourcequotas.json", "pods.json")) else target.source
            return Verdict(target, words.INSUFFICIENT_EVIDENCE, f"{target.source}: unusable quantity: {text}",
                           {"missing": missing, "invalid": [text]})
        if target.kind == "Pod" and target.spec is not None:
            self._attach_scheduler(v)
        return v

    def ask(self, namespace: str, name: str, extra: list[Target] = ()) -> Verdict | None:  # type: ignore[assignment]
        """`why NS/NAME`: a target, or a pod that is not one (then `running` or `no-gpu-request`)."""
        for t in list(self.cluster.pod_targets) + list(extra):
            if t.namespace == namespace and t.name == name:
                return self.classify(t)
        doc = self.cluster.pods
        if doc is None:
            return None
        for i, found in self.cluster.pod_invalid.items():
            item = doc.items[i]
            meta = item.get("metadata") if isinstance(item, dict) else None
            if isinstance(meta, dict) and meta.get("namespace") == namespace and meta.get("name") == name:
                t = Target("Pod", namespace, name, None, True, f"pods.json {doc.item_path(i)}", invalid=list(found))
                return self.classify(t)
        for i, item in self.cluster.valid_pods():
            meta = item["metadata"]
            if meta["namespace"] == namespace and meta["name"] == name:
                status = item.get("status") or {}
                t = Target("Pod", namespace, name, item["spec"], True, f"pods.json {doc.item_path(i)}",
                           status.get("phase"), item["spec"].get("nodeName") or "", status, str(meta.get("uid") or ""))
                return self._not_a_target(t)
        return None

    # -- the order -------------------------------------------------------------------------
    def _decide(self, t: Target) -> Verdict:
        c = self.cluster
        if t.invalid:
            return Verdict(t, words.INSUFFICIENT_EVIDENCE, f"{t.source} is invalid: {t.invalid[0]}",
                           {"invalid": [str(v) for v in t.invalid[:20]], "missing": t.invalid[0].file})
        evidence: dict = {}
        if not t.created:
            adm = judge_admission(c, t.spec, t.namespace, t.server_text)
            evidence["admission"] = adm.evidence
            if t.owner:
                evidence["owner"] = t.owner
            if t.answer is not None:
                evidence["answer"] = {k: t.answer.get(k) for k in ("command", "exitStatus", "stderr") if k in t.answer}
            if adm.word is not None:
                return Verdict(t, adm.word, adm.reason, evidence)
        spec = adm.spec if not t.created else t.spec
        if spec is None:
            return Verdict(t, words.INSUFFICIENT_EVIDENCE, "the pod's spec is not in the bundle", evidence)

        intent = gpu_intent(spec, c.runtimeclasses, c.config, (t.namespace, t.name))
        accel = accelerator_requests(spec, c.config)
        if intent and not accel:
            evidence.update({"gpu_intent": intent, "accelerator_requests": {}})
            return Verdict(t, words.NO_GPU_REQUEST, f"GPU intent ({intent}) but no container requests an accelerator", evidence)
        if intent:
            evidence["gpu_intent"] = intent
        if accel:
            evidence["accelerator_requests"] = accel

        gates = [g.get("name") for g in spec.get("schedulingGates") or ()]
        if gates:
            evidence["schedulingGates"] = gates
            return Verdict(t, words.SCHEDULING_GATED, "scheduling gates: " + ", ".join(map(str, gates)), evidence)

        if t.created and t.node_name and t.phase == "Pending":
            evidence.update(self._node_side_evidence(t))
            return Verdict(t, words.NODE_SIDE, f"bound to {t.node_name} but still Pending: the node could not start it", evidence)

        if c.nodes is None:
            evidence["missing"] = "nodes.json"
            return Verdict(t, words.INSUFFICIENT_EVIDENCE, f"cannot run the node funnel: {c.why_missing('nodes')}", evidence)
        if not c.nodes:
            evidence["missing"] = "nodes.json"
            return Verdict(t, words.INSUFFICIENT_EVIDENCE, "nodes.json lists no usable node: nothing to judge the pod against", evidence)

        shape = self._shape(spec, "" if t.created else t.node_name)
        facts, funnel = shape.facts, shape.funnel
        evidence["requests"] = {r: format_units(r, v) for r, v in sorted(facts.requests.items()) if v}
        if funnel.word is not None:
            relevant = [n for n in c.node_problems if n.labels is None or n.name is None
                        or (selector_matches(facts.node_selector, facts.terms, n.labels, n.name) and (not facts.pin or n.name == facts.pin))]
            if relevant:
                # An invalid node is out of the funnel; its labels say it might have taken the pod.
                evidence["missing"] = "nodes.json"
                evidence["invalid_nodes"] = [n.finding for n in relevant[:20]]
                return Verdict(t, words.INSUFFICIENT_EVIDENCE,
                               f"the funnel says {funnel.word}, but {len(relevant)} invalid node(s) it might select could not "
                               f"be judged: {relevant[0].finding}", evidence, funnel, shape)
            return Verdict(t, funnel.word, shape.reason(), evidence, funnel, shape)

        fits = [n.name for n in funnel.fits]
        unknown = [n for n in fits if n in c.unknown_usage]
        if unknown and len(unknown) == len(fits):
            evidence["missing"] = c.unknown_usage[unknown[0]].split(":")[0]
            evidence["unknown_usage"] = {n: c.unknown_usage[n] for n in unknown[:20]}
            return Verdict(t, words.INSUFFICIENT_EVIDENCE,
                           f"only {_names(unknown)} could take it, and an invalid pod bound there hides its usage", evidence, funnel, shape)
        needs = unmodelled(spec)
        evidence["fits_on"] = fits[:50]
        if needs:
            evidence["not_modelled"] = needs
            return Verdict(t, words.UNCLASSIFIED, f"{len(fits)} node(s) fit, but it depends on: " + "; ".join(needs), evidence, funnel, shape)
        return Verdict(t, words.FITS_NOW, f"fits now on {_names(fits)}", evidence, funnel, shape)

    def _not_a_target(self, t: Target) -> Verdict:
        c = self.cluster
        spec = t.spec or {}
        intent = gpu_intent(spec, c.runtimeclasses, c.config, (t.namespace, t.name))
        accel = accelerator_requests(spec, c.config)
        evidence = {"phase": t.phase, "nodeName": t.node_name}
        if intent and not accel:
            evidence.update({"gpu_intent": intent, "accelerator_requests": {}})
            return Verdict(t, words.NO_GPU_REQUEST, f"{t.phase} on {t.node_name}, GPU intent ({intent}) but no accelerator requested", evidence)
        note = "" if t.phase not in TERMINATED else " (it ran and ended)"
        return Verdict(t, words.RUNNING, f"{t.phase} on {t.node_name}{note}: not a scheduling problem", evidence)

    # -- helpers -------------------------------------------------------------------------------
    def _shape(self, spec: dict, pin: str) -> _Shape:
        """The per-shape work for this spec, shared by every pod with the same scheduling-relevant spec."""
        requests = effective_requests(spec)
        # Only what the funnel reads: pod (anti-)affinity is not modelled and must not split or break the key.
        node_affinity = (spec.get("affinity") or {}).get("nodeAffinity")
        try:
            key = (orjson.dumps([spec.get("nodeSelector"), node_affinity, spec.get("tolerations"), pin],
                                option=orjson.OPT_SORT_KEYS), tuple(sorted(requests.items())))
        except orjson.JSONEncodeError as exc:  # nesting beyond any real spec, or a value with no JSON form
            raise _Unjudgeable(f"the spec's selector, affinity or tolerations cannot be read ({exc})") from None
        shape = self._funnels.get(key) if self.cache else None
        if shape is None:
            facts = PodFacts.of(spec, pin)
            shape = self._funnels[key] = _Shape(self.cluster, facts, run_funnel(facts, self.cluster.nodes or [], self.cluster))
        return shape

    def _node_side_evidence(self, t: Target) -> dict:
        c = self.cluster
        ev: dict = {"nodeName": t.node_name, "phase": t.phase, "node_in_bundle": t.node_name in c.nodes_by_name if c.nodes is not None else None}
        waiting = []
        for cs in (t.status.get("initContainerStatuses") or []) + (t.status.get("containerStatuses") or []):
            w = (cs.get("state") or {}).get("waiting")
            if w:
                waiting.append({"container": cs.get("name"), "reason": w.get("reason"), "message": w.get("message")})
        if waiting:
            ev["waiting"] = waiting
        return ev

    def _attach_scheduler(self, v: Verdict) -> None:
        said = scheduler_message.recorded(self.cluster, v.target)
        sched: dict = {}
        if said is not None:
            sched = {"message": said.message, "source": said.source, "reason": said.reason}
            event = self.cluster.scheduler_events.get((v.target.namespace, v.target.name))
            if event is not None and event.source != said.source:
                sched["event"] = {"message": event.message, "source": event.source}
        if self.cluster.nodes and v.target.spec is not None and not v.target.node_name and v.word != words.SCHEDULING_GATED:
            shape = self._shape(v.target.spec, "")
            if shape.rebuilt is _UNSET:
                shape.rebuilt = scheduler_message.rebuild(self.cluster, shape.facts)
            rebuilt = shape.rebuilt
            sched["rebuilt"] = rebuilt
            if said is not None:
                sched["comparison"] = scheduler_message.compare(said.message, rebuilt)
        if said is not None and said.message:
            note = scheduler_message.conflation_note(said.message, v.word)
            if note:
                sched["conflation"] = note
            hint = scheduler_message.preemption_hint(said.message)
            if hint:
                sched["preemption"] = hint
        v.scheduler = sched or None


def classify_all(cluster: Cluster, extra: list[Target] = (), *, cache: bool = True,  # type: ignore[assignment]
                 namespaces: tuple[str, ...] = ()) -> list[Verdict]:
    """Every target: pods that will not start, then attempts and refused owners (optionally only some namespaces)."""
    clf = Classifier(cluster, cache=cache)
    wanted = set(namespaces)
    return [clf.classify(t) for t in list(cluster.pod_targets) + list(extra) if not wanted or t.namespace in wanted]
