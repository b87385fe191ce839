"""Targets -> verdicts: walk the order (rules/order.py), then complete the verdict with its evidence.

Funnels are cached per distinct pod shape (rules/funnel.PodFacts is the key), so a Deployment's hundred
pending replicas cost one funnel; the evidence built from a funnel (stage table, fit rows, the rebuilt
scheduler message) is built once per shape too. Classification never prints: it returns finished Verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Iterable, Iterator

from analyzer import words
from analyzer.evidence import scheduler_message
from analyzer.evidence.fit import CLOSEST, fit_evidence
from analyzer.evidence.fit import action as fit_action
from analyzer.evidence.gpu_names import gpu_names
from analyzer.evidence.nearest import Nearest
from analyzer.model.quantity import QuantityError
from analyzer.kube import TERMINATED
from analyzer.model.podspec import accelerator_requests
from analyzer.model.quantity import format_units
from analyzer.model.podspec import priority_of
from analyzer.model.views import Cluster
from analyzer.model.pod_filters import PodFilters
from analyzer.evidence.filters import filter_evidence, prefilter_message
from analyzer.rules import dra_devices
from analyzer.rules.case import Case
from analyzer.rules.checks import PodFacts, UnreadableSpec
from analyzer.rules.funnel import run_funnel, stages_as_data
from analyzer.rules.funnel_result import FunnelResult
from analyzer.rules.intent import no_gpu_request
from analyzer.rules.order import walk
from analyzer.model.target import Target
from analyzer.verdict import Fit, Verdict

if TYPE_CHECKING:  # the DRA model is imported only where a pod has claims (rules/dra.py)
    from analyzer.model.dra.outcomes import Resolution


@dataclass(kw_only=True)
class _ShapeEvidence:
    """What every pod of one shape shows alike, built on first use and then shared."""

    stages: list[dict]
    fit: Fit | None = None
    rebuilt: str | None = None
    rebuilt_done: bool = False
    devices: list[dict] | None = None  # per node, the device steps of the pod's claims
    nearest: dict | None = None  # the nodes one change away (evidence/nearest.py)
    filters: dict | None = None  # volumes, inter-pod terms, spread counts (evidence/filters.py)
    gpu_names: dict | None = None  # rows 16-17: other names of the vendor's devices, GPU feature discovery labels


MAX_DEVICE_NODES = 20
NODE_LIMIT = 20  # removed nodes named per reason in a verdict's funnel (the rest counted): -o json stays small
# A queue's words: the queue held the pod, no node was asked, so no scheduler message is rebuilt for it.
QUEUE_DECIDED = frozenset((words.SCHEDULING_GATED, words.QUEUE_MISCONFIGURED, words.QUEUE_QUOTA, words.QUEUE_TOPOLOGY))


def _devices_evidence(cluster: Cluster, funnel: FunnelResult) -> list[dict]:
    """What `cannot allocate all claims` hides: for the nodes the last stage judged (the candidates at that
    stage, at most 20), each claim request's devices left after class, selectors, taints and free."""
    claims = funnel.facts.claims
    out = []
    for node in (funnel.last.kept or [n for n in funnel.fit_candidates] or
                 [cluster.nodes_by_name[name] for name, _ in funnel.last.removed_nodes(limit=MAX_DEVICE_NODES)
                  if name in cluster.nodes_by_name]):
        o = dra_devices.outcome(claims, node, cluster)
        if o is not None:
            out.append(dra_devices.outcome_evidence(o))
        if len(out) >= MAX_DEVICE_NODES:
            break
    if not out:  # the last stage removed them all: show those
        for name, _ in funnel.last.removed_nodes(limit=MAX_DEVICE_NODES):
            node = cluster.nodes_by_name.get(name)
            o = dra_devices.outcome(claims, node, cluster) if node is not None else None
            if o is not None:
                out.append(dra_devices.outcome_evidence(o))
    return out


def _me(target: Target) -> str:
    """The pod itself among the nominated pods (never counted against itself); an attempt is no pod yet."""
    return f"{target.namespace}/{target.name}" if target.kind == "Pod" and target.created else ""


class Classifier:
    def __init__(self, cluster: Cluster, *, cache: bool = True, node_limit: int | None = NODE_LIMIT,
                 scalar: bool = False, evidence: bool = True) -> None:
        self.cluster = cluster
        # False: the word and the reason only (report.BARE: the table and words print nothing else); the evidence
        # made after the decision (funnel stages, fit rows, nearest nodes, the scheduler's message rebuilt) is
        # left out, a third of classifying. The rules' own evidence stays: it is made while deciding.
        self.evidence = evidence
        self.scalar = scalar  # True: every stage and every evidence node by node (the reference the tests compare)
        self.node_limit = node_limit  # names per removed-nodes group in the funnel evidence (None: every node)
        self.cache = cache  # False: the straightforward path, one funnel per pod (tests compare the two)
        self._funnels: dict[PodFacts, FunnelResult] = {}
        self._evidence: dict[int, _ShapeEvidence] = {}
        self._rebuilder = scheduler_message.Rebuilder(cluster, scalar=scalar)
        self._nearest = Nearest(cluster, scalar=scalar)

    def classify(self, target: Target) -> Verdict:
        case = Case(target=target, cluster=self.cluster, spec=target.spec,
                    funnel_of=partial(self._funnel, me=_me(target)))
        try:
            decision = walk(case)
        except UnreadableSpec as exc:
            return Verdict(target=target, word=words.INSUFFICIENT_EVIDENCE, reason=f"{target.source}: {exc}",
                           evidence={"invalid_file": target.source, "invalid": [str(exc)]},
                           action=f"fix {target.source}, then run again")
        except QuantityError as exc:
            # A value that passed the schema but cannot be used (a quota's hard, a manifest's request):
            # this target cannot be decided; the others still are.
            return Verdict(target=target, word=words.INSUFFICIENT_EVIDENCE,
                           reason=f"{target.source}: unusable quantity: {exc}",
                           evidence={"missing": exc.file or target.source, "invalid": [str(exc)]})
        if not self.evidence:
            return Verdict(target=target, word=decision.word, reason=decision.reason, evidence=case.evidence,
                           action=decision.action)
        funnel = case.funnel if decision.word != words.INSUFFICIENT_EVIDENCE or case.funnel else None
        shape = self._shape_evidence(case.funnel) if funnel is not None else None
        fit = None
        word = decision.underlying or decision.word  # a refined word (rows 26-27) keeps the funnel's evidence
        if shape is not None and word == words.EXHAUSTED:
            if shape.fit is None:
                shape.fit = fit_evidence(self.cluster, funnel.facts, funnel,  # type: ignore[union-attr]
                                         None if self.node_limit is None else CLOSEST, scalar=self.scalar)
            fit = shape.fit
        if shape is not None and funnel is not None and funnel.word is not None and word == funnel.word:
            if shape.nearest is None:
                shape.nearest = self._nearest.of(funnel.facts)
            case.evidence.update(shape.nearest)
        if shape is not None and funnel is not None and funnel.facts.filters is not None:
            if shape.filters is None:
                shape.filters = filter_evidence(self.cluster, funnel)
            case.evidence.update(shape.filters)
        if shape is not None and decision.word in (words.RESOURCE_NAME_MISMATCH, words.NO_GPU_NODE):
            if shape.gpu_names is None:
                shape.gpu_names = gpu_names(funnel, self.cluster)  # type: ignore[arg-type]
            case.evidence.update(shape.gpu_names)
        if shape is not None and case.claims is not None:
            if shape.devices is None:
                shape.devices = _devices_evidence(self.cluster, funnel)  # type: ignore[arg-type]
            if shape.devices:
                case.evidence["devices"] = shape.devices
        scheduler = self._scheduler(target, word, case) if target.kind == "Pod" and target.spec is not None else None
        action = decision.action
        if action is None and fit is not None and decision.word == words.EXHAUSTED:
            action = fit_action(fit)
        return Verdict(target=target, word=decision.word, reason=decision.reason, evidence=case.evidence,
                       funnel=shape.stages if shape else None, fit=fit, scheduler=scheduler, action=action)

    def ask(self, namespace: str, name: str) -> Verdict | None:
        """`why NS/NAME` of a pod: a target, or a pod that is not one (then `running` or `no-gpu-request`)."""
        for t in self.cluster.pod_targets:
            if t.namespace == namespace and t.name == name:
                return self.classify(t)
        asked = self.cluster.asked
        if asked is None or (asked.namespace, asked.name) != (namespace, name):
            return None
        if asked.invalid:
            return self.classify(asked)
        return self._not_a_target(asked)

    def _not_a_target(self, t: Target) -> Verdict:
        """A bound pod past Pending: what it requests is the one fact its ticket needs (the pod runs, but does it
        ask for a GPU?); a pod that ran and ended says so."""
        case = Case(target=t, cluster=self.cluster, spec=t.spec, funnel_of=self._funnel)
        decision = no_gpu_request(case)
        if decision is not None:
            return Verdict(target=t, word=decision.word, reason=f"{t.phase} on {t.node_name}, {decision.reason}",
                           evidence={"phase": t.phase, "nodeName": t.node_name, **case.evidence})
        accel = accelerator_requests(t.spec or {}, self.cluster.config)
        claims = case.evidence.get("resource_claims")
        asks = (", ".join(f"{format_units(r, q)} {r}" for r, q in accel.items()) if accel else
                f"resource claim(s) {', '.join(claims)}" if claims else "no accelerator")
        evidence = {"phase": t.phase, "nodeName": t.node_name, **case.evidence, "accelerator_requests": accel}
        if t.phase in TERMINATED:
            return Verdict(target=t, word=words.RUNNING, evidence=evidence,
                           reason=f"{t.phase} on {t.node_name}: it ran and ended (it asked for {asks}); nothing waits "
                                  "to be scheduled",
                           action="nothing to fix at scheduling: it has finished; read its logs and exit code for "
                                  "how it ended, and recreate it to run again")
        intent = case.evidence.get("gpu_intent")
        seen = f"; GPU intent: {intent}" if intent and not accel and not claims else ""
        if "gpu_stack" in case.evidence:
            seen = f"; it is {case.evidence['gpu_stack']}"
        return Verdict(target=t, word=words.RUNNING, evidence=evidence,
                       reason=f"{t.phase} on {t.node_name}, asking for {asks}{seen}: not a scheduling problem",
                       action=None if accel or claims or "gpu_stack" in case.evidence else
                       "nothing to fix at scheduling; it asks for no accelerator, so no GPU is given to it: add the "
                       "accelerator limit if it needs one")

    def _funnel(self, spec: dict, pin: str, claims: Resolution | None = None,
                filters: PodFilters | None = None, *, me: str = "") -> FunnelResult:
        nominated = self.cluster.nominated
        # A pod with spec.nodeName skips the scheduler, and with it the pods nominated by preemption.
        counting = nominated.counting(priority_of(spec), me) if nominated is not None and not pin else ()
        facts = PodFacts.of(spec, pin, claims, filters, counting)
        funnel = self._funnels.get(facts) if self.cache else None
        if funnel is None:
            funnel = self._funnels[facts] = run_funnel(facts, self.cluster.nodes or [], self.cluster, scalar=self.scalar)
        return funnel

    def _shape_evidence(self, funnel: FunnelResult) -> _ShapeEvidence:
        shape = self._evidence.get(id(funnel))
        if shape is None:
            shape = self._evidence[id(funnel)] = _ShapeEvidence(stages=stages_as_data(funnel, self.cluster.nodes or [],
                                                                                       self.node_limit))
        return shape

    def _scheduler(self, target: Target, word: str, case: Case) -> dict | None:
        c = self.cluster
        said = scheduler_message.recorded(c, target)
        sched: dict = {}
        if said is not None:
            sched = {"message": said.message, "source": said.source, "reason": said.reason}
            event = c.scheduler_events.get((target.namespace, target.name))
            if event is not None and event.source != said.source:
                sched["event"] = {"message": event.message, "source": event.source}
        if word == words.NO_DEVICECLASS:
            missing = case.evidence["missing_classes"][0]
            # A PreFilter failure: no per-node count (seen on a real v1.36.2 scheduler, dra_devices.md).
            sched["rebuilt"] = (f"0/{len(c.nodes or ())} nodes are available: request {missing['request']}: "
                                f"device class {missing['deviceClassName']} does not exist.")
            if said is not None:
                sched["comparison"] = scheduler_message.compare(said.message, sched["rebuilt"])
        elif "prefilter" in case.evidence and word in (words.NO_VOLUMECLAIM, words.VOLUME_UNBOUND):
            # The volume plugin's PreFilter sentence replaces the per-node counts (filters.md).
            sched["rebuilt"] = prefilter_message(c, case.evidence.pop("prefilter"))
            if said is not None:
                sched["comparison"] = scheduler_message.compare(said.message, sched["rebuilt"])
        elif word == words.NO_RESOURCECLAIM:
            sched["rebuilt"] = None
            sched["comparison"] = ("the scheduler never queues a pod whose ResourceClaim or template is missing: "
                                   "no PodScheduled condition and no event are expected")
        elif word == words.NO_SCHEDULER:
            sched["comparison"] = "no scheduler runs for it: no PodScheduled condition and no event are expected"
        elif (c.nodes and target.spec is not None and not target.node_name and word not in QUEUE_DECIDED
              and not (case.evidence.get("queue") or {}).get("rebuilt")):  # a queue decided: no node was asked
            funnel = (case.funnel if case.funnel is not None and not case.funnel.facts.pin
                      else self._funnel(target.spec, "", case.claims, case.filters, me=_me(target)))
            shape = self._shape_evidence(funnel)
            if not shape.rebuilt_done:
                shape.rebuilt = self._rebuilder.rebuild(funnel.facts)
                shape.rebuilt_done = True
            sched["rebuilt"] = shape.rebuilt
            if said is not None:
                sched["comparison"] = scheduler_message.compare(said.message, shape.rebuilt)
        if said is not None and said.message:
            note = scheduler_message.conflation_note(said.message, word)
            if note:
                sched["conflation"] = note
            hint = scheduler_message.preemption_hint(said.message)
            if hint:
                sched["preemption"] = hint
        return sched or None


def each_verdict(cluster: Cluster, extra: Iterable[Target] = (), *, cache: bool = True,
                 namespaces: tuple[str, ...] = (), scalar: bool = False, evidence: bool = True) -> Iterator[Verdict]:
    """Every target, one verdict at a time (the output is written as they come): pods that will not start,
    then attempts and refused owners (optionally only some namespaces). `cache` False: one funnel per pod;
    `scalar`: node by node, no columns (both the references the tests compare); `evidence` False: each verdict's
    word and reason only (Classifier)."""
    clf = Classifier(cluster, cache=cache, scalar=scalar, evidence=evidence)
    wanted = set(namespaces)
    for t in (*cluster.pod_targets, *extra):
        if not wanted or t.namespace in wanted:
            yield clf.classify(t)


def classify_all(cluster: Cluster, extra: Iterable[Target] = (), *, cache: bool = True,
                 namespaces: tuple[str, ...] = (), scalar: bool = False) -> list[Verdict]:
    return list(each_verdict(cluster, extra, cache=cache, namespaces=namespaces, scalar=scalar))


# The API groups of the owner kinds, so `jobs.batch` or `job.batch` (as kubectl prints them) name a Job.
_GROUPS = {"job": "batch", "cronjob": "batch", "replicaset": "apps", "statefulset": "apps", "daemonset": "apps",
           "deployment": "apps"}


def same_owner(key: str, t: Target) -> bool:
    """`NS/KIND/NAME` names the owner target `t` as kubectl would accept its kind: any case, singular or plural,
    with or without its API group (`Job`, `job`, `jobs`, `jobs.batch`, `job.batch`)."""
    ns, _, rest = key.partition("/")
    kind, sep, name = rest.partition("/")
    if not sep or t.kind in ("Pod", "Attempt") or ns != t.namespace or name != t.name:
        return False
    mine = t.kind.lower()
    asked = kind.lower()
    group = _GROUPS.get(mine)
    forms = {mine, mine + "s"} | ({f"{mine}.{group}", f"{mine}s.{group}"} if group else set())
    if "." in mine:  # a CRD kind with its group (Volcano's): the plural sits before the first dot
        head, _, tail = mine.partition(".")
        forms |= {f"{head}s.{tail}", head, head + "s"}
    return asked in forms


def verdict_of(cluster: Cluster, extra: Iterable[Target], key: str) -> Verdict | None:
    """`why KEY`: a stored attempt, a --manifest or a refused owner by its key (ns/name, ns/Kind/name), else a
    pod by ns/name (a target, or a pod that is not one: `running`, `no-gpu-request`). Every removed node named."""
    clf = Classifier(cluster, node_limit=None)
    verdict = None
    for t in extra:
        if t.key == key or same_owner(key, t):
            verdict = clf.classify(t)
    ns, sep, name = key.partition("/")
    if verdict is None and sep and "/" not in name:
        verdict = clf.ask(ns, name)
    return verdict
