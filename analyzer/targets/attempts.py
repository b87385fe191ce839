"""Targets that never came to exist: attempts (manifests judged against the bundle) and
controller refusals (owners whose FailedCreate events say `pods "…" is forbidden`).

Pods that exist are found by model.build_cluster; this module adds the rest.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from analyzer.rules.admission import text_for_pod, text_from_event
from analyzer.errors import UsageError
from analyzer.model.events import event_time
from analyzer.model.views import Cluster
from analyzer.targets.target import ServerText, Target
from analyzer.bundle.validation import Violation, check_pod_object

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")
OWNER_FILES = {"ReplicaSet": "replicasets", "Job": "jobs", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets"}


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _pod_templates(doc: dict) -> list[tuple[str, dict, dict, bool]]:
    """(name, metadata, pod, is_pod) for a Pod, the pod template of a workload, or each item of a List.
    Odd shapes give a pod whose spec fails the pod schema: reported, never a crash."""
    kind = doc.get("kind")
    if kind == "List":
        out = []
        items = doc.get("items")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                out += _pod_templates(item)
        return out
    meta = _dict(doc.get("metadata"))
    if kind == "Pod":
        return [(str(meta.get("name") or ""), meta, doc, True)]
    if kind in WORKLOAD_KINDS:
        spec = _dict(doc.get("spec"))
        if kind == "CronJob":
            spec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
        template = _dict(spec.get("template"))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {**_dict(template.get("metadata")),
               "name": meta.get("name", ""), "namespace": meta.get("namespace")}, "spec": template.get("spec")}
        return [(str(meta.get("name") or ""), meta, pod, False)]
    return []


# Bounds for a manifest: a real pod manifest is a few hundred nodes. YAML aliases let a few bytes
# stand for billions of nodes ("billion laughs"); Kubernetes' YAML reader refuses excessive aliasing
# too. The expanded size is counted without expanding (shared nodes are counted once per use).
MAX_MANIFEST_NODES = 200_000
MAX_MANIFEST_DEPTH = 100


def _check_tree(doc: object, label: str) -> None:
    sizes: dict[int, int] = {}

    def size(node: object, depth: int) -> int:
        if depth > MAX_MANIFEST_DEPTH:
            raise UsageError(f"{label}: not a usable manifest: nested more than {MAX_MANIFEST_DEPTH} levels deep")
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise UsageError(f"{label}: not a usable manifest: a string is not valid Unicode (lone surrogate)") from None
            return 1
        if node is None or isinstance(node, (bool, int)):
            return 1
        if isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                raise UsageError(f"{label}: not a usable manifest: {node!r} is not a JSON number")
            return 1
        if not isinstance(node, (dict, list)):
            raise UsageError(f"{label}: not a usable manifest: a {type(node).__name__} value has no JSON form")
        if isinstance(node, dict) and not all(isinstance(k, str) for k in node):
            raise UsageError(f"{label}: not a usable manifest: a mapping key is not a string")
        known = sizes.get(id(node))
        if known is not None:
            return known
        children = list(node.items()) if isinstance(node, dict) else node
        total = 1
        for child in children:
            if isinstance(child, tuple):
                total += size(child[0], depth + 1) + size(child[1], depth + 1)
            else:
                total += size(child, depth + 1)
            if total > MAX_MANIFEST_NODES:
                raise UsageError(f"{label}: not a usable manifest: expands to more than {MAX_MANIFEST_NODES} "
                                 f"values (excessive YAML aliasing)")
        sizes[id(node)] = total
        return total

    size(doc, 0)


class _Loader(yaml.SafeLoader):
    """safe_load, but as Kubernetes reads YAML (into JSON): a timestamp stays the string it was written as."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_manifest_text(text: str, label: str) -> list[dict]:
    try:
        docs = [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except yaml.YAMLError as exc:
        raise UsageError(f"{label}: not YAML or JSON: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise UsageError(f"{label}: not a usable manifest: nested too deeply") from None
    _check_tree(docs, label)
    return [d for d in docs if isinstance(d, dict)]


def attempts_from(docs: list[dict], label: str, answer: dict | None, default_ns: str = "default") -> list[Target]:
    out: list[Target] = []
    for di, doc in enumerate(docs):
        for name, meta, pod, is_pod in _pod_templates(doc):
            ns = str(meta.get("namespace") or default_ns)
            pod.setdefault("metadata", {})
            if isinstance(pod["metadata"], dict):
                pod["metadata"].setdefault("namespace", ns)
                pod["metadata"].setdefault("name", name or "unnamed")
            prefix = (f"document {di}",) if len(docs) > 1 else ()
            findings = check_pod_object(pod)
            text: ServerText | None = None
            if answer is not None:
                # A dry run of a Deployment admits the Deployment, not its pods: only a Pod's own
                # success counts as "admitted"; a refusal naming the pod counts either way.
                status = int(answer.get("exitStatus") or 0) if is_pod else 1
                text = text_for_pod(str(answer.get("stderr") or ""), status, name)
            t = Target("Attempt", ns, name or "unnamed", pod.get("spec") if not findings else None, False,
                       f"{label}" + (f" {prefix[0]}" if prefix else ""), answer=answer)
            t.server_text = text
            t.node_name = str((pod.get("spec") or {}).get("nodeName") or "") if isinstance(pod.get("spec"), dict) else ""
            t.invalid = [Violation(label, p, e, f) for p, e, f in findings]
            out.append(t)
    if not out:
        raise UsageError(f"{label}: no Pod (or workload with a pod template) in it")
    return out


def stored_attempts(cluster: Cluster) -> list[Target]:
    out: list[Target] = []
    for rel, doc in cluster.loaded.attempts:
        answer = doc.get("answer")
        if isinstance(doc.get("object"), dict):
            docs = [doc["object"]]
        else:
            try:
                docs = parse_manifest_text(str(doc.get("sourceText") or ""), rel)
            except UsageError as exc:
                why = str(exc).removeprefix(f"{rel}: ")
                cluster.findings.add(rel, [("$.sourceText", "a YAML or JSON pod manifest", why)])
                continue
        try:
            found = attempts_from(docs, rel, answer)
        except UsageError:
            field = "$.object" if isinstance(doc.get("object"), dict) else "$.sourceText"
            kinds = ", ".join(sorted({str(d.get("kind")) for d in docs})) or "nothing"
            cluster.findings.add(rel, [(field, "a Pod or a workload with a pod template", f"kind {kinds}")])
            continue
        for t in found:
            if t.invalid:
                field = "$.object" if isinstance(doc.get("object"), dict) else "$.sourceText"
                cluster.findings.add(rel, [(f"{field} {v.path}".replace(" $", ""), v.expected, v.found) for v in t.invalid])
        out += found
    return out


def manifest_attempts(paths: list[Path]) -> list[Target]:
    out: list[Target] = []
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{p}: cannot read: {exc}") from None
        out += attempts_from(parse_manifest_text(text, str(p)), str(p), None)
    return out


def owner_refusals(cluster: Cluster) -> list[Target]:
    """One target per owner whose latest FailedCreate event says the pod was forbidden
    (a later FailedCreate for another reason, a timeout say, means the refusal is not the story now)."""
    doc = cluster.loaded.documents.get("events")
    if doc is None:
        return []
    latest: dict[tuple[str, str, str], tuple[str, dict]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for _, e in doc.valid_items():
        if e.get("reason") != "FailedCreate":
            continue
        io = e.get("involvedObject") or {}
        kind = io.get("kind")
        if kind not in OWNER_FILES:
            continue
        key = (kind, str(io.get("namespace") or ""), str(io.get("name") or ""))
        t = event_time(e)
        if key not in latest or t >= latest[key][0]:
            latest[key] = (t, e)
        if text_from_event(str(e.get("message") or "")) is not None:
            n = e.get("count") if isinstance(e.get("count"), int) else (_dict(e.get("series")).get("count") or 1)
            counts[key] = counts.get(key, 0) + (n if isinstance(n, int) and n > 0 else 1)
    owners = _owner_index(cluster)
    out: list[Target] = []
    for key in sorted(latest):
        kind, ns, name = key
        t, event = latest[key]
        message = str(event.get("message") or "")
        text = text_from_event(message)
        if text is None:
            continue  # the latest failure is not an admission refusal
        owner_obj, problem = owners.get(key, (None, None))
        spec = None
        owner: dict = {"event": message, "event_time": t, "events_counted": counts.get(key, 1)}
        if owner_obj is None:
            owner["object"] = problem or (f"{kind} {ns}/{name} is not in {OWNER_FILES[kind]}.json "
                                          f"({cluster.why_missing(OWNER_FILES[kind])})")
        else:
            spec = _dict(owner_obj.get("spec")).get("template", {}).get("spec")
            desired, existing = _replicas(kind, owner_obj)
            owner.update({"desired": desired, "existing": existing})
            if desired is not None and existing is not None and existing >= desired:
                continue  # the controller has since created every pod it wants: resolved
        target = Target(kind, ns, name, spec, False, f"events.json FailedCreate for {kind} {ns}/{name}", owner=owner)
        target.server_text = text
        out.append(target)
    return out


def _owner_index(cluster: Cluster) -> dict[tuple[str, str, str], tuple[dict | None, str | None]]:
    """(kind, namespace, name) -> (object, None), or (None, why) for an owner present but invalid."""
    index: dict[tuple[str, str, str], tuple[dict | None, str | None]] = {}
    for kind, file in OWNER_FILES.items():
        doc = cluster.loaded.documents.get(file)
        if doc is None:
            continue
        for i, item in enumerate(doc.items):
            meta = _dict(item.get("metadata")) if isinstance(item, dict) else {}
            key = (kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            if i in doc.invalid:
                index.setdefault(key, (None, f"{kind} {key[1]}/{key[2]} is invalid: {doc.invalid[i][0] if doc.invalid[i] else doc.item_path(i)}"))
            else:
                index[key] = (item, None)
    return index


def _replicas(kind: str, obj: dict) -> tuple[int | None, int | None]:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if kind in ("ReplicaSet", "StatefulSet"):
        r = spec.get("replicas")
        return (1 if r is None else r), (status.get("replicas") or 0)
    if kind == "Job":
        if spec.get("suspend"):
            return 0, status.get("active") or 0
        parallelism = spec.get("parallelism")
        parallelism = 1 if parallelism is None else parallelism
        completions = spec.get("completions")
        if completions is not None:
            parallelism = min(parallelism, max(0, completions - (status.get("succeeded") or 0)))
        return parallelism, status.get("active") or 0
    if kind == "DaemonSet":
        return status.get("desiredNumberScheduled"), status.get("currentNumberScheduled") or 0
    return None, None
