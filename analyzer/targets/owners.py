"""Controller refusals: owners (ReplicaSet, Job, StatefulSet, DaemonSet) whose latest FailedCreate event is an
admission refusal in any of its forms (targets/server_text.py: a plugin's `pods "…" is forbidden`, validation's
`Pod "…" is invalid`, a webhook's or a policy's denial, a webhook that could not be called). Answered once per
owner with desired vs existing replicas."""

from __future__ import annotations

from analyzer.bundle.catalog import EVENTS, OWNERS, file_of
from analyzer.bundle.validation import Loaded
from analyzer.model.events import event_time
from analyzer.targets.server_text import text_from_event
from analyzer.model.target import Target

OWNER_EVENT_REASONS: tuple[str, ...] = ("FailedCreate",)


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def named_owner(event: dict) -> tuple[str, str, str] | None:
    """The owner a FailedCreate event names, (kind, namespace, name); None for any other event."""
    if event.get("reason") not in OWNER_EVENT_REASONS:
        return None
    io = _dict(event.get("involvedObject"))
    kind = io.get("kind")
    if kind not in OWNERS:
        return None
    return (kind, str(io.get("namespace") or ""), str(io.get("name") or ""))


def owner_key(kind: str, item: object) -> tuple[str, str, str]:
    """(kind, namespace, name) of an owner's object, whatever the object is (an invalid one gives what it has)."""
    meta = _dict(item.get("metadata")) if isinstance(item, dict) else {}
    return (kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def owner_refusals(loaded: Loaded) -> list[Target]:
    """One target per owner whose latest FailedCreate event says admission refused the pod
    (a later FailedCreate for another reason, a timeout say, means the refusal is not the story now)."""
    doc = loaded.documents.get(EVENTS.name)
    if doc is None:
        return []
    latest: dict[tuple[str, str, str], tuple[str, dict]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for _, e in doc.valid_items():
        key = named_owner(e)
        if key is None:
            continue
        t = event_time(e)
        if key not in latest or t >= latest[key][0]:
            latest[key] = (t, e)
        if text_from_event(str(e.get("message") or "")) is not None:
            n = e.get("count") if isinstance(e.get("count"), int) else (_dict(e.get("series")).get("count") or 1)
            counts[key] = counts.get(key, 0) + (n if isinstance(n, int) and n > 0 else 1)
    owners: dict[tuple[str, str, str], tuple[dict | None, str | None]] | None = None  # made at the first refusal
    out: list[Target] = []
    for key in sorted(latest):
        kind, ns, name = key
        t, event = latest[key]
        message = str(event.get("message") or "")
        text = text_from_event(message)
        if text is None:
            continue  # the latest failure is not an admission refusal
        if owners is None:
            owners = _owner_index(loaded, {k for k in latest if text_from_event(str(latest[k][1].get("message") or ""))})
        owner_obj, problem = owners.get(key, (None, None))
        spec = None
        labels: dict = {}
        owner: dict = {"event": message, "event_time": t, "events_counted": counts.get(key, 1)}
        if owner_obj is None:
            owner["object"] = problem or (f"{kind} {ns}/{name} is not in {file_of(OWNERS[kind])} "
                                          f"({loaded.why_missing(OWNERS[kind])})")
        else:
            template = _dict(_dict(owner_obj.get("spec")).get("template"))
            spec = template.get("spec")
            # The pods it would make carry the template's labels: a webhook's objectSelector reads them.
            labels = {str(k): str(v) for k, v in _dict(_dict(template.get("metadata")).get("labels")).items()}
            desired, existing = _replicas(kind, owner_obj)
            owner.update({"desired": desired, "existing": existing})
            if desired is not None and existing is not None and existing >= desired:
                continue  # the controller has since created every pod it wants: resolved
        out.append(Target(kind=kind, namespace=ns, name=name, spec=spec, created=False,
                          source=f"events.json FailedCreate for {kind} {ns}/{name}", owner=owner, server_text=text,
                          labels=labels))
    return out


def _owner_index(loaded: Loaded, wanted: set[tuple[str, str, str]]
                 ) -> dict[tuple[str, str, str], tuple[dict | None, str | None]]:
    """(kind, namespace, name) -> (object, None), or (None, why) for an owner present but invalid: the `wanted`
    owners, found in their kinds' files only."""
    index: dict[tuple[str, str, str], tuple[dict | None, str | None]] = {}
    kinds = {key[0] for key in wanted}
    for kind, file in OWNERS.items():
        doc = loaded.documents.get(file)
        if doc is None or kind not in kinds:
            continue
        for i, item in enumerate(doc.items):
            key = owner_key(kind, item)
            if key not in wanted:
                continue
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
