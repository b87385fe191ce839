"""The straight pipeline the commands share: bundle -> validated documents -> views -> verdicts.

Kept out of the CLI so it is testable and so every command reads a bundle the
same way. The garbage collector is paused while millions of small JSON objects
are created (they hold no cycles); that alone makes loading ~3.5x faster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from analyzer.bundle.catalog import EVENTS, JOBS, KINDS, PODS, Kind
from analyzer.bundle.reading import Bundle, gc_paused, open_bundle
from analyzer.bundle.layout import LAYOUT_SPLIT, LayoutMisread
from analyzer.bundle.streaming import ItemSink, KeepIf, Progress
from analyzer.bundle.validation import Loaded, Violation, load_documents
from analyzer.classify import classify_all, each_verdict
from analyzer.errors import BundleError, UsageError
from analyzer.model.accelerators import AcceleratorConfig
from analyzer.model.autoscalers import EVENT_REASONS as AUTOSCALER_EVENT_REASONS
from analyzer.model.build import build_cluster
from analyzer.model.events import EVENT_REASONS
from analyzer.model.pod_status import is_node_event_reason
from analyzer.model.pods_index import PodsIndex
from analyzer.model.target import Target
from analyzer.model.views import Cluster, Findings
from analyzer.targets.attempts import manifest_attempts, stored_attempts
from analyzer.targets.owners import OWNER_EVENT_REASONS, named_owner, owner_key, owner_refusals
from analyzer.targets.queued import held_job, queued_owners
from analyzer.verdict import Verdict


@dataclass(frozen=True, kw_only=True)
class Options:
    namespaces: tuple[str, ...] = ()
    manifests: tuple[Path, ...] = ()
    gpu_pods: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()

    def config(self) -> AcceleratorConfig:
        pods = []
        for item in self.gpu_pods:
            pods.append(split_key(item))
        return AcceleratorConfig().with_additions(self.resources, pods)


def split_key(text: str) -> tuple[str, str]:
    ns, sep, name = text.partition("/")
    if not sep or not ns or not name or "/" in name:
        raise UsageError(f"{text!r}: expected NAMESPACE/NAME")
    return ns, name


@dataclass(kw_only=True)
class Analysis:
    label: str  # the bundle as the user named it
    bundle: Bundle
    loaded: Loaded
    cluster: Cluster
    extra: list[Target]  # attempts and refused owners
    findings: list[Violation]  # the model's and the attempts' own findings, beside the schema findings
    verdicts: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the person, on stderr; never change an answer
    pod_states: dict[str, tuple[str, str | None]] | None = None  # namespace/name -> (node, phase), when asked

    @property
    def problems(self) -> list[str]:
        """Everything that made the answer partial: unreadable files, schema and model findings (exit 2)."""
        out = [str(e) for e in self.loaded.unreadable]
        out += [str(v) for v in self.loaded.violations]
        out += [str(v) for v in self.findings]
        return out

    @property
    def changed(self) -> list[str]:
        """Files edited since collection (size or sha256 unlike manifest.json): warned about, never a problem."""
        return [str(v) for v in self.loaded.changed]

    @property
    def problem_count(self) -> int:
        return len(self.loaded.unreadable) + self.loaded.violation_count + len(self.findings)


def _merge_attempts(cluster: Cluster, stored: list[Target], given: list[Target], notes: list[str]) -> list[Target]:
    """A --manifest that repeats a stored attempt keeps the stored one (it carries the server's answer).
    An attempt naming a pod that exists is dropped: applying it would not create a pod, and one key
    must give one line (the existing pod is answered)."""
    by_key = {t.key: t for t in stored}
    out = list(stored)
    for t in given:
        old = by_key.get(t.key)
        if old is not None and old.spec == t.spec:
            continue
        if old is not None:
            out.remove(old)
        out.append(t)
    kept = []
    for t in out:
        if t.key in cluster.pod_keys:
            notes.append(f"{t.source}: pod {t.key} already exists in pods.json; the existing pod is answered, not the manifest")
        else:
            kept.append(t)
    return kept


def owner_targets(loaded: Loaded, cluster: Cluster) -> list[Target]:
    """Refused owners, then owners a queue holds (one target per owner: a refusal is the older story)."""
    refused = owner_refusals(loaded)
    keys = {t.key for t in refused}
    return refused + [t for t in queued_owners(loaded, cluster.queues) if t.key not in keys]


def load_streamed(bundle: Bundle, *, engine: str | None = None, strict: bool = False,
                  keep: tuple[str, str] | None = None, progress: Callable[[str], Progress | None] | None = None,
                  pod_states: bool = False) -> tuple[Loaded, PodsIndex]:
    """Every file read once: pods.json item by item into the PodsIndex (nothing of a pod kept but its slim
    record, a target's spec and status, and the pod `keep` names; with pod_states, every pod's node and phase),
    events.json down to the failures the readers use, the owners' files down to the owners they name (_Wanted);
    the small kinds kept whole in `loaded.documents`."""
    for layout in (True, False):
        pods = PodsIndex(file=PODS.file, findings=Findings(), keep=keep, states=pod_states)
        wanted = _Wanted()
        sinks: dict[str, ItemSink] = {PODS.name: pods, EVENTS.name: KeepIf(wanted=wanted.event)}
        sinks.update({k.name: KeepIf(wanted=wanted.owner(k), invalid_too=True) for k in KINDS if k.owns_pods})
        token = LAYOUT_SPLIT.set(layout)
        try:
            return load_documents(bundle, engine=engine, strict=strict, sinks=sinks, progress=progress), pods
        except LayoutMisread:
            continue  # a valid file kubectl's layout split misread (never one kubectl wrote): read it all again
        finally:
            LAYOUT_SPLIT.reset(token)
    raise AssertionError("unreachable: without the layout split no LayoutMisread is raised")


_EVENT_REASONS = frozenset(EVENT_REASONS + OWNER_EVENT_REASONS + AUTOSCALER_EVENT_REASONS)


def _wanted_event(event: dict) -> bool:
    """Only the events something reads are kept: each reader names its reasons (a new reader cannot be starved)."""
    reason = event.get("reason")
    return reason in _EVENT_REASONS or is_node_event_reason(reason)
class _Wanted:
    """The items of events.json and of the owners' files (ReplicaSets, Jobs, StatefulSets, DaemonSets) a reader
    uses; the others are validated and dropped, as pods are (a cluster keeps ten old ReplicaSets per Deployment:
    a fifth of a large bundle's other files, and most of what they would hold in memory). An owner is kept when a
    FailedCreate event names it (targets/owners.py) or, for Jobs, when a queue may hold it (targets/queued.py).
    The catalog reads events.json before the owners' files, so the names are known by then."""

    def __init__(self) -> None:
        self.named: set[tuple[str, str, str]] = set()

    def event(self, event: dict) -> bool:
        if not _wanted_event(event):
            return False
        key = named_owner(event)
        if key is not None:
            self.named.add(key)
        return True

    def owner(self, kind: Kind) -> Callable[[dict], bool]:
        def wanted(item: dict) -> bool:
            return owner_key(kind.item_kind, item) in self.named or (kind is JOBS and held_job(item))

        return wanted


def analyse(path: str | Path, options: Options, *, classify: bool = True, keep: tuple[str, str] | None = None,
            progress: Callable[[str], Progress | None] | None = None, pod_states: bool = False) -> Analysis:
    """Open, validate and classify. Raises BundleError (exit 2) when nothing can be answered.
    `keep`: a pod asked about by name (`why`), kept whole even if it is not a target.
    `pod_states`: keep every pod's node and phase in `Analysis.pod_states` (diff).
    classify=False: `verdicts` stays empty; iter_verdicts() gives them one at a time (streamed output)."""
    config = options.config()
    given = manifest_attempts(list(options.manifests))  # a bad manifest is said before a large bundle is read
    bundle = open_bundle(path)
    try:
        with gc_paused():
            loaded, pods = load_streamed(bundle, keep=keep, progress=progress, pod_states=pod_states)
            cluster = build_cluster(loaded, config, keep=keep, pods=pods)
            stored = stored_attempts(loaded)
            notes: list[str] = cluster.admission.cluster_wide() if cluster.admission is not None else []
            extra = _merge_attempts(cluster, stored.targets, given, notes) + owner_targets(loaded, cluster)
            analysis = Analysis(label=str(path), bundle=bundle, loaded=loaded, cluster=cluster, extra=extra,
                                findings=cluster.findings.items + stored.findings, notes=notes, pod_states=pods.states)
            if classify:
                analysis.verdicts = classify_all(cluster, extra, namespaces=options.namespaces)
    except BaseException:
        bundle.close()
        raise
    return analysis


@dataclass(frozen=True, kw_only=True)
class Checked:
    """`validate`'s answer: schema, size and checksum findings, then the model's own."""

    loaded: Loaded
    findings: list[Violation]

    @property
    def violations(self) -> list[Violation]:
        return self.loaded.violations + self.findings

    @property
    def violation_count(self) -> int:
        return self.loaded.violation_count + len(self.findings)


def iter_verdicts(analysis: Analysis, *, namespaces: tuple[str, ...] = (), evidence: bool = True) -> Iterator[Verdict]:
    """classify_all's verdicts, in the same order, one at a time: the output is written as they come.
    `evidence` False: the word and the reason only (a format that prints nothing else: Format.needs_evidence False)."""
    return each_verdict(analysis.cluster, analysis.extra, namespaces=namespaces, evidence=evidence)


def validate_only(path: str | Path, engine: str | None = None,
                  progress: Callable[[str], Progress | None] | None = None) -> Checked:
    """Schemas, sizes and checksums, plus the findings only the model can make (duplicate pods and
    nodes, fractional extended resources, unusable quantities, attempts that hold no valid pod),
    so `validate` and `analyze` never disagree on whether a bundle is valid."""
    bundle = open_bundle(path)
    with bundle, gc_paused():
        loaded, pods = load_streamed(bundle, engine=engine, strict=True, progress=progress)
        cluster = build_cluster(loaded, AcceleratorConfig(), pods=pods)
        return Checked(loaded=loaded, findings=cluster.findings.items + stored_attempts(loaded).findings)


__all__ = ["Analysis", "BundleError", "Options", "UsageError", "Violation", "analyse", "iter_verdicts", "load_streamed",
           "split_key", "validate_only"]
