"""Targets -> verdicts: walk the order (rules/order.py), then complete the verdict with the evidence each family
adds once the answer is found (its hooks, rules/family.py); no family and no word of the order is named here.

Funnels are cached per distinct pod shape (rules/funnel.PodFacts is the key), so a Deployment's hundred
pending replicas cost one funnel; the evidence built from a funnel (stage table, fit rows, the rebuilt
scheduler message) is built once per shape too, kept with the funnel (FunnelResult.evidence). Classification
never prints: it returns finished Verdicts.
"""

from __future__ import annotations

from functools import partial
from typing import Iterable, Iterator

from analyzer import words
from analyzer.evidence import scheduler_message
from analyzer.evidence.makers import Makers
from analyzer.model.quantity import QuantityError
from analyzer.model.views import Cluster
from analyzer.rules.case import Case
from analyzer.rules.checks import UnreadableSpec
from analyzer.rules.family import Answered, EvidenceMakers, Placed, families, with_hook
from analyzer.rules.order import ORDER, Funnels, running_pod, walk
from analyzer.model.target import Target
from analyzer.verdict import Verdict



NODE_LIMIT = 20  # removed nodes named per reason in a verdict's funnel (the rest counted): -o json stays small


def _own_key(target: Target) -> str:
    """The pod itself among the nominated pods (never counted against itself); an attempt is no pod yet."""
    return f"{target.namespace}/{target.name}" if target.kind == "Pod" and target.created else ""


class Classifier:
    def __init__(self, cluster: Cluster, *, cache: bool = True, node_limit: int | None = NODE_LIMIT,
                 evidence: bool = True, order: tuple[Placed, ...] = ORDER, funnels: Funnels | None = None,
                 makers: EvidenceMakers | None = None) -> None:
        self.cluster = cluster
        # False: the word and the reason only (a format whose needs_evidence is False: the table and words print nothing else); the evidence
        # made after the decision (funnel stages, fit rows, nearest nodes, the scheduler's message rebuilt) is
        # left out, a third of classifying. The rules' own evidence stays: it is made while deciding.
        self.evidence = evidence
        self.node_limit = node_limit  # names per removed-nodes group in the funnel evidence (None: every node)
        self.order = order  # rules/order.py's; a test may place a family of its own
        self.families = families(order)
        # From the last family back: a family's evidence may read what a later one found (DRA's devices read the
        # funnel's last stage), so the later family's keys come first.
        self._evidence_hooks = with_hook(self.families[::-1], "evidence")
        self._scheduler_hooks = with_hook(self.families, "scheduler")  # the first that speaks for the word
        self._asks_hooks = with_hook(self.families, "asks_nodes")
        # One funnel per pod shape, shared by the rules (cache False: one per pod, the reference the tests compare;
        # the tests also pass funnels and makers that judge node by node, tests/reference_funnel.py).
        self._funnels = funnels if funnels is not None else Funnels(cluster, cache=cache)
        self._makers = makers if makers is not None else Makers(cluster)  # the evidence the families' hooks make

    def classify(self, target: Target) -> Verdict:
        case = Case(target=target, cluster=self.cluster, spec=target.spec,
                    funnel_of=partial(self._funnels.of, own_key=_own_key(target)))
        try:
            decision = walk(case, self.order)
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
        answered = Answered(case=case, decision=decision, word=decision.underlying or decision.word,
                            makers=self._makers, node_limit=self.node_limit, action=decision.action)
        for family in self._evidence_hooks:
            family.evidence(answered)
        scheduler = self._scheduler(answered) if target.kind == "Pod" and target.spec is not None else None
        return Verdict(target=target, word=decision.word, reason=decision.reason, evidence=case.evidence,
                       funnel=answered.stages, fit=answered.fit, scheduler=scheduler, action=answered.action)

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
        """A bound pod past Pending, asked for by name: its own answer (rules/intent.running_pod, by the order)."""
        case = Case(target=t, cluster=self.cluster, spec=t.spec, funnel_of=self._funnels.of)
        decision = running_pod(case)
        return Verdict(target=t, word=decision.word, reason=decision.reason, evidence=case.evidence,
                       action=decision.action)

    def _scheduler(self, answered: Answered) -> dict | None:
        """The scheduler's message: as recorded, then what the first family (in the order) that speaks for the
        answer's word rebuilds or says of it, compared with the recorded one."""
        c, target = self.cluster, answered.case.target
        said = scheduler_message.recorded(c, target)
        sched: dict = {}
        if said is not None:
            sched = {"message": said.message, "source": said.source, "reason": said.reason}
            event = c.scheduler_events.get((target.namespace, target.name))
            if event is not None and event.source != said.source:
                sched["event"] = {"message": event.message, "source": event.source}
        answered.nodes_asked = all(f.asks_nodes(answered) for f in self._asks_hooks)
        for family in self._scheduler_hooks:
            says = family.scheduler(answered, said)
            if says is not None:
                sched.update(says)
                if said is not None and "rebuilt" in says and "comparison" not in says:
                    sched["comparison"] = scheduler_message.compare(said.message, says["rebuilt"])
                break
        word = answered.word
        if said is not None and said.message:
            note = scheduler_message.conflation_note(said.message, word)
            if note:
                sched["conflation"] = note
            hint = scheduler_message.preemption_hint(said.message)
            if hint:
                sched["preemption"] = hint
        return sched or None


def each_verdict(cluster: Cluster, extra: Iterable[Target] = (), *, cache: bool = True,
                 namespaces: tuple[str, ...] = (), evidence: bool = True) -> Iterator[Verdict]:
    """Every target, one verdict at a time (the output is written as they come): pods that will not start,
    then attempts and refused owners (optionally only some namespaces). `cache` False: one funnel per pod (the
    reference the tests compare); `evidence` False: each verdict's word and reason only (Classifier)."""
    clf = Classifier(cluster, cache=cache, evidence=evidence)
    wanted = set(namespaces)
    for t in (*cluster.pod_targets, *extra):
        if not wanted or t.namespace in wanted:
            yield clf.classify(t)


def classify_all(cluster: Cluster, extra: Iterable[Target] = (), *, cache: bool = True,
                 namespaces: tuple[str, ...] = ()) -> list[Verdict]:
    return list(each_verdict(cluster, extra, cache=cache, namespaces=namespaces))


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
