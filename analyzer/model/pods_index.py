"""One pass over pods.json, one item at a time (model/build.py builds the rest of the model from it).

Kept apart and light (no numpy, no rules): what one pass over pods.json keeps, and nothing that reads it.
"""

from __future__ import annotations


import orjson

from analyzer.bundle.validation import Violation
from analyzer.kube import GROUP_ANNOTATIONS, PROVREQ_ANNOTATIONS, QUEUE_LABEL, TERMINATED
from analyzer.model import quantity
from analyzer.model.accelerators import is_extended
from analyzer.model.gpu_sharing import ALLOCATION_ANNOTATIONS, SHARING_ANNOTATIONS
from analyzer.model.kai import GROUP_ANNOTATION as KAI_GROUP_ANNOTATION
from analyzer.model.pod_status import is_bound_target
from analyzer.model.placement import LabelSets, NominatedRow, Row, anti_terms_json, claim_names, host_ports
from analyzer.model.podspec import effective_requests, nominated_node, priority_of
from analyzer.model.quantity import QuantityError
from analyzer.model.schedulers import RESERVATION_NAMESPACES, Reservation, Says, reservation_of, scheduler_names
from analyzer.model.target import Target
from analyzer.model.views import BoundPod, Findings



def group_name(annotations: dict) -> str:
    """The Volcano PodGroup a pod names (model/volcano.py reads the groups)."""
    for key in GROUP_ANNOTATIONS:
        if isinstance(annotations.get(key), str):
            return annotations[key]
    return ""


def queue_hints(meta: dict) -> dict[str, str]:
    """What a pod says about the queue that holds it: Kueue's queue-name label, Volcano's and KAI's PodGroup
    annotations."""
    out = {}
    label = (meta.get("labels") or {}).get(QUEUE_LABEL)
    if isinstance(label, str):
        out["queue-name"] = label
    group = group_name(meta.get("annotations") or {})
    if group:
        out["group-name"] = group
    kai = (meta.get("annotations") or {}).get(KAI_GROUP_ANNOTATION)
    if isinstance(kai, str) and kai:
        out[KAI_GROUP_ANNOTATION] = kai  # KAI-Scheduler's PodGroup (model/kai.py)
    return out


def _extended_integer_problems(spec: dict, base: str) -> list[tuple[str, str, str]]:
    """Extended resources must be whole numbers (API validation); a hostile bundle may say 0.5."""
    found = []
    for section in ("initContainers", "containers"):
        for ci, c in enumerate(spec.get(section) or ()):
            res = c.get("resources") or {}
            for kind in ("requests", "limits"):
                for name, value in (res.get(kind) or {}).items():
                    if is_extended(name):
                        try:
                            q = quantity.parse(value)
                        except QuantityError:
                            continue
                        if q.denominator != 1:
                            found.append((f"{base}.spec.{section}[{ci}].resources.{kind}[\"{name}\"]",
                                          f"a whole number for extended resource {name}", repr(value)))
    return found


def _controller(meta: dict) -> str | None:
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return f"{ref.get('kind')} {meta['namespace']}/{ref.get('name')}"
    return None


def _controller_uid(meta: dict) -> str | None:
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("uid") or ref.get("name"))
    return None



_KEPT_ANNOTATIONS = PROVREQ_ANNOTATIONS + SHARING_ANNOTATIONS  # a target's: the rules read these
_MAYBE_BOUND_TARGET = ("Running", "Failed")  # pod_status.is_bound_target: never started, rejected, or failed to start


class PodsIndex:
    """One pass over pods.json, one item at a time: usage per node (non-terminated pods bound there),
    the holders, the targets (Pending or node-less pods) and the model's own findings. Nothing of a pod
    is kept but its slim record, except a target's spec and status (the rules read them)."""

    def __init__(self, *, file: str, findings: Findings, keep: tuple[str, str] | None = None,
                 states: bool = False) -> None:
        self.file = file
        self.findings = findings
        self.keep = keep
        # states=True (diff): every pod's node and phase by namespace/name, valid or not, the last copy winning,
        # so a resolved target can say "now runs on", "finished" or "deleted".
        self.states: dict[str, tuple[str, str | None]] | None = {} if states else None
        self.usage: dict[str, dict[str, int]] = {}
        self.pods_on: dict[str, list[BoundPod]] = {}
        self.unknown: dict[str, Violation] = {}
        self.targets: list[Target] = []
        self.keys: set[str] = set()
        self.uids: set[str] = set()
        self.asked: Target | None = None
        self._by_resources: dict[bytes, dict[str, int]] = {}
        # Every non-terminated bound pod's labels, claims, host ports and anti-affinity (model/placement.py).
        self.label_sets = LabelSets()
        self.placed: list[Row] = []
        self.nominated: list[NominatedRow] = []  # pending pods nominated to a node (model/nominated.py)
        # controller's uid -> its newest pod (creationTimestamp, name, phase, node): a rejected pod's replacement
        self.newest: dict[str, tuple[str, str, str, str]] = {}
        # Running pods that say they run a scheduler: namespace/name -> (its --scheduler-name values, other names)
        self.schedulers: dict[str, Says] = {}
        # KAI's reservation pods (model/schedulers.py Reservation): GPU group -> what its pod shows
        self.reservations: dict[str, Reservation] = {}
        # Bound pods' vGPU allocations (model/vgpu.py): (node, namespace/name, annotation key, its text)
        self.vgpu_allocations: list[tuple[str, str, str, str]] = []

    def _requests(self, spec: dict) -> dict[str, int]:
        """effective_requests, once per distinct set of the fields it reads: a Deployment's replicas and a
        DaemonSet's pods share one answer (150,000 pods have a few hundred). The dict is shared: never mutated."""
        try:
            key = orjson.dumps([[c.get("resources") for c in spec.get("containers") or ()],
                                [[c.get("resources"), c.get("restartPolicy")] for c in spec.get("initContainers") or ()],
                                spec.get("resources"), spec.get("overhead")])
        except (TypeError, orjson.JSONEncodeError):
            return effective_requests(spec)  # odd values: no memo, the rule itself decides
        found = self._by_resources.get(key)
        if found is None:
            found = self._by_resources[key] = effective_requests(spec)
        return found

    def add(self, path: str, item: dict) -> list[Violation] | None:
        """A valid item; returns the model's findings when it is invalid after all (duplicate, bad quantity)."""
        meta = item["metadata"]
        spec = item["spec"]
        status = item.get("status") or {}
        ns, name = meta["namespace"], meta["name"]
        key = f"{ns}/{name}"
        if self.states is not None:
            self.states[key] = (spec.get("nodeName") or "", status.get("phase"))
        uid = meta.get("uid")
        if key in self.keys or (uid and uid in self.uids):
            by_name = key in self.keys
            what = f"a second pod {key}" if by_name else f"a second pod with uid {uid}"
            return self.findings.add(self.file, [(f"{path}.metadata.{'name' if by_name else 'uid'}", "each pod once", what)])
        self.keys.add(key)
        if uid:
            self.uids.add(uid)
        phase = status.get("phase")
        node = spec.get("nodeName") or ""
        counts = node and phase not in TERMINATED
        is_target = phase == "Pending" or not node
        if not is_target and phase in _MAYBE_BOUND_TARGET:
            first = status.get("containerStatuses")
            # Asked of every running pod: the first container having started settles it without a call.
            if not (phase == "Running" and isinstance(first, list) and first and isinstance(first[0], dict)
                    and first[0].get("started") is True):
                is_target = is_bound_target(node, status, spec.get("restartPolicy"))
        created = meta.get("creationTimestamp") or ""
        refs = meta.get("ownerReferences")
        if refs:  # asked of every pod: the owner's uid as the key, the tuple made only for a newer pod
            for ref in refs:
                if isinstance(ref, dict) and ref.get("controller"):
                    owner = str(ref.get("uid") or ref.get("name"))
                    seen = self.newest.get(owner)
                    if seen is None or created >= seen[0]:  # equal times: the later in the file
                        self.newest[owner] = (str(created), name, str(phase or ""), node)
                    break
        if phase == "Running":
            says = scheduler_names(spec, meta.get("labels") or {})
            if says[0] or says[1]:
                self.schedulers[key] = says
        if ns in RESERVATION_NAMESPACES:
            found = reservation_of(key, meta, node, status)
            if found is not None:
                self.reservations[found.group] = found
        if counts:
            annotations = meta.get("annotations")
            if annotations:
                for k in ALLOCATION_ANNOTATIONS:
                    text = annotations.get(k)
                    if isinstance(text, str):
                        self.vgpu_allocations.append((node, key, k, text))
        requests = None
        try:
            # Targets are parsed now too, so an unusable quantity marks the pod, not the whole run.
            if counts or is_target:
                requests = self._requests(spec)
        except QuantityError as exc:
            # The slow, precise path only for the bad pod: name the container and the field.
            bad = _extended_integer_problems(spec, path) or [(f"{path}.spec", "quantities the scheduler can use", str(exc))]
            found = self.findings.add(self.file, bad)
            self.add_invalid(path, item, found)
            return found
        if counts and requests is not None:
            used = self.usage.get(node)
            if used is None:
                used = self.usage[node] = {}
                self.pods_on[node] = []
            for k, v in requests.items():
                used[k] = used.get(k, 0) + v
            used["pods"] = used.get("pods", 0) + 1
            self.pods_on[node].append(BoundPod(ns, name, phase, requests))
            self.placed.append((ns, name, node, self.label_sets.id_of(meta.get("labels") or {}),
                                claim_names(spec, name), host_ports(spec),
                                anti_terms_json(spec) if spec.get("affinity") else b""))
        if is_target and phase not in TERMINATED and requests is not None and status.get("nominatedNodeName"):
            nominated = nominated_node(spec, status)
            if nominated:
                self.nominated.append((ns, name, nominated, priority_of(spec), requests, host_ports(spec)))
        if is_target or (ns, name) == self.keep:
            annotations = meta.get("annotations") or {}
            target = Target(kind="Pod", namespace=ns, name=name, spec=spec, created=True, source=f"{self.file} {path}",
                            phase=phase, node_name=node, status=status, controller=_controller(meta),
                            queue_hints=queue_hints(meta), labels=meta.get("labels") or {}, uid=str(meta.get("uid") or ""),
                            annotations={k: str(annotations[k]) for k in _KEPT_ANNOTATIONS if k in annotations},
                            controller_uid=_controller_uid(meta), created_at=str(created))
            if is_target:
                self.targets.append(target)
            else:
                self.asked = target
        return None

    def add_invalid(self, path: str, item: object, violations: list[Violation]) -> None:
        """An invalid pod: its node's usage becomes unknown, and it is answered insufficient-evidence
        if it is a target (or the pod asked about)."""
        if not isinstance(item, dict):
            return
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        spec = item.get("spec") if isinstance(item.get("spec"), dict) else {}
        status = item.get("status") if isinstance(item.get("status"), dict) else {}
        node = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) else ""
        phase = status.get("phase") if isinstance(status.get("phase"), str) else None
        first = violations[0] if violations else Violation(file=self.file, path=path, expected="a valid pod", found="invalid")
        if node and phase not in TERMINATED:
            self.unknown.setdefault(node, first)
        ns, name = meta.get("namespace"), meta.get("name")
        if self.states is not None and isinstance(ns, str) and isinstance(name, str):
            self.states[f"{ns}/{name}"] = (node, phase)
        if not (isinstance(ns, str) and isinstance(name, str) and ns and name):
            return
        target = Target(kind="Pod", namespace=ns, name=name, spec=None, created=True, source=f"{self.file} {path}",
                        phase=phase, node_name=node, invalid=list(violations))
        if phase == "Pending" or not node:
            self.targets.append(target)
        elif (ns, name) == self.keep:
            self.asked = target
