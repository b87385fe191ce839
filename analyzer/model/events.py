"""Event times and the scheduler's FailedScheduling messages, from events.json."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from analyzer.bundle.catalog import EVENTS
from analyzer.bundle.validation import Loaded


@dataclass(frozen=True, kw_only=True)
class SchedulerSaid:
    """What the scheduler last said about a pod, and where (its condition or an event)."""

    message: str
    source: str  # "PodScheduled condition" or "FailedScheduling event at <time>"
    reason: str = ""


_TIME_KEYS = ("lastTimestamp", "eventTime", "firstTimestamp")


def instant(text: object) -> str:
    """An RFC 3339 time normalised for ordering (UTC, microseconds); "" (oldest) when it does not parse."""
    if not isinstance(text, str) or not text:
        return ""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_time(e: dict) -> str:
    """The newest of series.lastObservedTime, lastTimestamp, eventTime and firstTimestamp the event carries
    (schedulers write eventTime, controllers first/lastTimestamp); its creation time when it has none."""
    series = e.get("series")
    times = [instant(series.get("lastObservedTime")) if isinstance(series, dict) else ""]
    times += [instant(e.get(k)) for k in _TIME_KEYS]
    newest = max(times)
    if newest:
        return newest
    meta = e.get("metadata")
    return instant(meta.get("creationTimestamp")) if isinstance(meta, dict) else ""


def component_of(e: dict) -> str:
    """Who wrote the event: `source.component` (core/v1 events) or `reportingComponent` (events.k8s.io)."""
    source = e.get("source")
    name = source.get("component") if isinstance(source, dict) else None
    return str(name or e.get("reportingComponent") or "")


# Autoscalers write FailedScheduling too (Karpenter: "Failed to schedule pod, …"); never the scheduler's message.
NOT_SCHEDULERS = ("karpenter", "cluster-autoscaler")


# The events read here: the scheduler's message, the claim controller's refusal (a claim over quota), HAMi's own
# per-reason filter events (FilteringFailed, pkg/scheduler/scheduler.go: the cross-check of its device accounting),
# and the volume controller's and provisioners' words on a PersistentVolumeClaim (volume-unbound's evidence).
CLAIM_EVENT_REASONS: tuple[str, ...] = ("ProvisioningFailed", "ExternalProvisioning", "WaitForFirstConsumer",
                                        "FailedBinding", "WaitForPodScheduled")
HAMI_FILTER_EVENT = "FilteringFailed"
EVENT_REASONS: tuple[str, ...] = ("FailedScheduling", "FailedResourceClaimCreation", HAMI_FILTER_EVENT) + CLAIM_EVENT_REASONS


def volume_claim_events(loaded: Loaded, keep: int = 3) -> dict[tuple[str, str], list[dict]]:
    """The latest events of each PersistentVolumeClaim (newest first, at most `keep`)."""
    doc = loaded.documents.get(EVENTS.name)
    out: dict[tuple[str, str], list[tuple[str, dict]]] = {}
    if doc is None:
        return {}
    for _, e in doc.valid_items():
        io = e.get("involvedObject") or {}
        if e.get("reason") not in CLAIM_EVENT_REASONS or io.get("kind") != "PersistentVolumeClaim":
            continue
        t = event_time(e)
        out.setdefault((str(io.get("namespace") or ""), str(io.get("name") or "")), []).append(
            (t, {"reason": e.get("reason"), "message": str(e.get("message") or ""), "time": t or "unknown time"}))
    return {k: [d for _, d in sorted(v, key=lambda x: x[0], reverse=True)[:keep]] for k, v in out.items()}


def scheduler_events(loaded: Loaded, reason: str = "FailedScheduling") -> dict[tuple[str, str], SchedulerSaid]:
    """The latest event of this reason per pod: FailedScheduling (the scheduler's message) or
    FailedResourceClaimCreation (the claim controller's, e.g. a quota refusing the pod's ResourceClaim)."""
    doc = loaded.documents.get(EVENTS.name)
    out: dict[tuple[str, str], tuple[str, SchedulerSaid]] = {}
    if doc is None:
        return {}
    for _, e in doc.valid_items():
        if e.get("reason") != reason or component_of(e) in NOT_SCHEDULERS:
            continue
        io = e.get("involvedObject") or {}
        if io.get("kind") != "Pod":
            continue
        key = (str(io.get("namespace") or ""), str(io.get("name") or ""))
        t = event_time(e)
        if key not in out or t >= out[key][0]:
            out[key] = (t, SchedulerSaid(message=str(e.get("message") or ""), source=f"{reason} event at {t or 'unknown time'}",
                                         reason=reason))
    return {k: v for k, (_, v) in out.items()}




def bundle_time(loaded: Loaded) -> tuple[str, str] | None:
    """The bundle's "now" and where it comes from: manifest.json's completed (else created) time; without a
    manifest, the newest event's time (the bundle was taken after it). None when neither is known."""
    manifest = loaded.bundle.manifest or {}
    for key in ("completed", "created"):
        t = instant(manifest.get(key))
        if t:
            return t, f"manifest.json {key}"
    doc = loaded.documents.get(EVENTS.name)
    newest = max((event_time(e) for _, e in doc.valid_items()), default="") if doc is not None else ""
    return (newest, "the newest event's time; no collection time is recorded") if newest else None
