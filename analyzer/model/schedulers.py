"""Which schedulers the bundle shows running (schedulers.md, `no-scheduler`): read from the Running pods.

The rule, as the schedulers ship (HAMi `charts/hami/templates/scheduler/deployment.yaml`, Volcano's
`installer/helm/chart/volcano/templates/scheduler.yaml`, KAI-Scheduler's `deployments/.../scheduler.yaml`):
a Running pod runs the scheduler S when one of its containers that is not a helper
- passes `--scheduler-name=S` (or `--scheduler-name S`; a comma-separated list names several), or
- is named S or `S-scheduler`, or its image's repository has a path part S or `S-scheduler` (KAI's
  `ghcr.io/nvidia/kai-scheduler/scheduler`, Volcano's scheduler `volcano-scheduler` for schedulerName `volcano`),
or the pod's own name labels (`app`, `app.kubernetes.io/name`, `app.kubernetes.io/component`, `component`,
`k8s-app`) say S or `S-scheduler` and some container of it is not a helper.
A helper is a container whose name or image name (the last path part) says controller, binder, webhook,
admission, device-plugin, operator or podgrouper: the same projects' controllers, binders and admission webhooks
also carry `--scheduler-name=S` and place no pod. A scheduler profile named only in a ConfigMap is not seen
(ConfigMaps are not in the bundle); such a scheduler still writes events and conditions on the pods it looks at.

To stay cheap on 150,000 pods, a pod is read only when a container's name, image or arguments, or a name label,
mentions "sched" (every scheduler named above does).
"""

from __future__ import annotations

from dataclasses import dataclass

HELPER_WORDS: tuple[str, ...] = ("controller", "binder", "webhook", "admission", "device-plugin", "operator",
                                 "podgrouper")
NAME_LABELS: tuple[str, ...] = ("app", "app.kubernetes.io/name", "app.kubernetes.io/component", "component", "k8s-app")
_FLAG = "--scheduler-name"


def _image_parts(image: str) -> tuple[list[str], str]:
    """The repository's path parts (registry host dropped) and its last part, without tag or digest."""
    repo = image.split("@", 1)[0]
    parts = repo.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if parts:
        parts[-1] = parts[-1].split(":", 1)[0]
    return parts, parts[-1] if parts else ""


def _is_helper(*names: str) -> bool:
    return any(word in name.lower() for name in names for word in HELPER_WORDS)


def _flag_values(words: list[str]) -> list[str]:
    out: list[str] = []
    for i, word in enumerate(words):
        if word.startswith(_FLAG + "="):
            out += word.split("=", 1)[1].split(",")
        elif word == _FLAG and i + 1 < len(words):
            out += words[i + 1].split(",")
    return [v.strip() for v in out if v.strip()]


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _mentions(spec: dict, labels: dict) -> bool:
    """Does any container name, image, argument or name label say "sched"? Asked of every Running pod (150,000 in a
    large bundle, most of them no scheduler): plain loops, no lists made, 2 us a pod instead of 3.4."""
    for c in spec.get("containers") or ():
        if not isinstance(c, dict):
            continue
        for key in ("name", "image"):
            text = c.get(key)
            if isinstance(text, str) and "sched" in text:
                return True
        for key in ("args", "command"):
            words = c.get(key)
            if isinstance(words, list):
                for word in words:
                    if isinstance(word, str) and "sched" in word:
                        return True
    for k in NAME_LABELS:
        text = labels.get(k)
        if isinstance(text, str) and "sched" in text:
            return True
    return False


Says = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def scheduler_names(spec: dict, labels: dict) -> Says:
    """What a Running pod says it runs: (names given by --scheduler-name, other names it goes by, its images). All
    empty for a pod that is no scheduler (or only a helper)."""
    if not isinstance(spec, dict) or not _mentions(spec, labels if isinstance(labels, dict) else {}):
        return (), (), ()
    flagged: list[str] = []
    names: list[str] = []
    images: list[str] = []
    for c in spec.get("containers") or ():
        if not isinstance(c, dict):
            continue
        name = _text(c.get("name"))
        parts, last = _image_parts(_text(c.get("image")))
        if _is_helper(name, last):
            continue
        flagged += _flag_values(_strings(c.get("command")) + _strings(c.get("args")))
        names += [name, *parts]
        images.append(_text(c.get("image")))
    if names and isinstance(labels, dict):
        names += [str(labels[k]) for k in NAME_LABELS if isinstance(labels.get(k), str)]
    names = [n for n in names if n]
    if not flagged and not names:
        return (), (), ()
    return tuple(dict.fromkeys(flagged)), tuple(dict.fromkeys(names)), tuple(i for i in images if i)


def runs(scheduler: str, flagged: tuple[str, ...], names: tuple[str, ...], _images: tuple[str, ...] = ()) -> bool:
    """Does a pod that says (flagged, names) run `scheduler`?"""
    return scheduler in flagged or scheduler in names or f"{scheduler}-scheduler" in names


@dataclass(frozen=True, kw_only=True)
class SchedulerIndex:
    """Who says they run which scheduler, by name: made once with the model, so a pod asking for a scheduler
    costs a look-up, not a pass over every pod that says one (`runs` is the rule it keeps)."""

    flagged: dict[str, tuple[str, ...]]  # a --scheduler-name (or profile) value -> the pods that carry it
    named: dict[str, tuple[str, ...]]  # a container, label or image name -> the pods that carry it
    names: tuple[str, ...]  # every name said, sorted

    @classmethod
    def of(cls, says: dict[str, Says]) -> "SchedulerIndex":
        flagged: dict[str, list[str]] = {}
        named: dict[str, list[str]] = {}
        for pod, (flags, names, _) in says.items():
            for f in flags:
                flagged.setdefault(f, []).append(pod)
            for n in names:
                named.setdefault(n, []).append(pod)
        return cls(flagged={k: tuple(v) for k, v in flagged.items()}, named={k: tuple(v) for k, v in named.items()},
                   names=tuple(sorted(named)))

    def running(self, scheduler: str) -> list[str]:
        """The pods that run `scheduler`, as `runs` decides it for each."""
        found = (*self.flagged.get(scheduler, ()), *self.named.get(scheduler, ()),
                 *self.named.get(f"{scheduler}-scheduler", ()))
        return list(dict.fromkeys(found))


# KAI-Scheduler's reservation pods: one per shared GPU, labelled with the GPU group the fraction pods carry
# (pkg/common/constants/constants.go GPUGroup, DefaultResourceReservationName; `runai-reservation` before v0.6.0).
RESERVATION_NAMESPACES: tuple[str, ...] = ("kai-resource-reservation", "runai-reservation")
GPU_GROUP = "runai-gpu-group"
FAILED_WAITING = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CrashLoopBackOff", "RunContainerError",
                  "CreateContainerError", "CreateContainerConfigError", "StartError")


@dataclass(frozen=True, kw_only=True)
class Reservation:
    """A KAI reservation pod, and how it failed ("" when it did not)."""

    group: str
    pod: str  # namespace/name
    node: str
    failed: str


def reservation_of(key: str, meta: dict, node: str, status: dict) -> Reservation | None:
    labels = meta.get("labels")
    group = labels.get(GPU_GROUP) if isinstance(labels, dict) else None
    if not isinstance(group, str) or not group:
        return None
    failed = ""
    if status.get("phase") == "Failed":
        failed = f"phase Failed ({_text(status.get('reason')) or 'no reason'}: {_text(status.get('message'))})"
    for cs in status.get("containerStatuses") or ():
        if failed or not isinstance(cs, dict):
            continue
        state = cs.get("state") if isinstance(cs.get("state"), dict) else {}
        waiting = state.get("waiting") if isinstance(state.get("waiting"), dict) else {}
        if waiting.get("reason") in FAILED_WAITING:
            failed = f"container {_text(cs.get('name'))} waiting: {waiting['reason']}: {_text(waiting.get('message'))}"
    return Reservation(group=group, pod=key, node=node, failed=failed)
