"""Attempts: pod manifests judged against the bundle (stored in attempts/ with the API server's answer,
or given with --manifest; YAML or JSON; a Pod or a workload whose pod template is judged)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analyzer.bundle.engines import violations
from analyzer.bundle.validation import Loaded, Violation, check_pod_object
from analyzer.errors import UsageError
from analyzer.bundle.safe_yaml import NotYaml, UnsafeYaml, load_all
from analyzer.targets.server_text import text_for_pod
from analyzer.model.target import ServerText, Target

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


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


def parse_manifest_text(text: str, label: str) -> list[dict]:
    try:
        docs = load_all(text)
    except NotYaml as exc:
        raise UsageError(f"{label}: not YAML or JSON: {exc}") from None
    except UnsafeYaml as exc:
        raise UsageError(f"{label}: not a usable manifest: {exc}") from None
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
            spec = pod.get("spec")
            out.append(Target(kind="Attempt", namespace=ns, name=name or "unnamed", spec=spec if not findings else None,
                              created=False, source=label + (f" {prefix[0]}" if prefix else ""), answer=answer,
                              server_text=text,
                              node_name=str(spec.get("nodeName") or "") if isinstance(spec, dict) else "",
                              invalid=violations(label, findings),
                              labels=_labels(pod.get("metadata"))))
    if not out:
        raise UsageError(f"{label}: no Pod (or workload with a pod template) in it")
    return out


def _labels(meta: object) -> dict:
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


@dataclass(frozen=True, kw_only=True)
class StoredAttempts:
    targets: list[Target]
    findings: list[Violation]  # attempts that hold no usable pod: validate reports them, analyze too


def stored_attempts(loaded: Loaded) -> StoredAttempts:
    """The attempts stored in the bundle (attempts/*.json), judged later like any target."""
    out: list[Target] = []
    found_problems: list[Violation] = []

    def problem(rel: str, triples: list[tuple[str, str, str]]) -> None:
        found_problems.extend(violations(rel, triples))

    for rel, doc in loaded.attempts:
        answer = doc.get("answer")
        if isinstance(doc.get("object"), dict):
            docs = [doc["object"]]
        else:
            try:
                docs = parse_manifest_text(str(doc.get("sourceText") or ""), rel)
            except UsageError as exc:
                why = str(exc).removeprefix(f"{rel}: ")
                problem(rel, [("$.sourceText", "a YAML or JSON pod manifest", why)])
                continue
        try:
            found = attempts_from(docs, rel, answer)
        except UsageError:
            field = "$.object" if isinstance(doc.get("object"), dict) else "$.sourceText"
            kinds = ", ".join(sorted({str(d.get("kind")) for d in docs})) or "nothing"
            problem(rel, [(field, "a Pod or a workload with a pod template", f"kind {kinds}")])
            continue
        for t in found:
            if t.invalid:
                field = "$.object" if isinstance(doc.get("object"), dict) else "$.sourceText"
                problem(rel, [(f"{field} {v.path}".replace(" $", ""), v.expected, v.found) for v in t.invalid])
        out += found
    return StoredAttempts(targets=out, findings=found_problems)


def manifest_attempts(paths: list[Path]) -> list[Target]:
    out: list[Target] = []
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{p}: cannot read: {exc}") from None
        out += attempts_from(parse_manifest_text(text, str(p)), str(p), None)
    return out
