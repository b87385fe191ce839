"""HAMi's and Volcano's vGPU device accounting (schedulers.md), read from node and pod annotations: typed records,
no decisions (rules/vgpu.py decides). Each node's annotations are read once, here; each bound pod's allocation
once, by the pods pass (model/pods_index.py keeps the annotation text).

Formats, from the schedulers' own sources:
- HAMi registration `hami.io/node-nvidia-register` (pkg/device/nvidia/device.go RegisterAnnos): since v2.8.0 a JSON
  list of DeviceInfo (pkg/device/devices.go: id, index, count, devmem, devcore, type, numa, mode, health, all
  omitempty: a card without `health` is unhealthy); before, `id,count,devmem,devcore,type,numa,health[,index,mode]`
  per card, cards ended by ":" (v2.7.1 pkg/device/devices.go DecodeNodeDevices).
- HAMi handshake `hami.io/node-handshake`: `Requesting_<2006-01-02 15:04:05>` written by the scheduler, answered by
  the device plugin (`Reported_…`); a `Requesting_` older than 60 s is expired (pkg/device/devices.go CheckHealth).
  From v2.9.0 an expired handshake is ignored while the node's allocatable nvidia.com/gpu is above 0. The time
  carries no zone (the scheduler's local time): read here as UTC.
- A bound pod's allocation, HAMi `hami.io/vgpu-devices-allocated`, Volcano `volcano.sh/vgpu-ids-new`:
  `uuid,type,usedmem,usedcores` per card, cards ended by ":", containers separated by ";"
  (HAMi pkg/device/devices.go EncodeContainerDevices; Volcano pkg/scheduler/api/devices/nvidia/vgpu/utils.go).
- Volcano registration `volcano.sh/node-vgpu-register`: `uuid,count,devmem,type,health,mode` per card, ":"-ended
  (vgpu/utils.go decodeNodeDevices); its handshake is never read: a node is registered when it has the annotation
  and allocatable volcano.sh/vgpu-number, -cores and -memory all above 0 (vgpu/device_info.go NewGPUDevices).
  Each Volcano card has 100 cores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone

from analyzer.bundle.catalog import NODES, PODS
from analyzer.model.autoscalers import seconds_between
from analyzer.model.events import SchedulerSaid, instant
from analyzer.model.gpu_sharing import ALLOCATION_ANNOTATIONS

HAMI = "HAMi"
VOLCANO = "Volcano"
HAMI_REGISTER = "hami.io/node-nvidia-register"
HAMI_HANDSHAKE = "hami.io/node-handshake"
VOLCANO_REGISTER = "volcano.sh/node-vgpu-register"
HANDSHAKE_TIMEOUT = 60  # seconds (CheckHealth: formertime + 60 s)
NODE_ANNOTATIONS = (HAMI_REGISTER, HAMI_HANDSHAKE, VOLCANO_REGISTER)
VOLCANO_NODE_RESOURCES = ("volcano.sh/vgpu-number", "volcano.sh/vgpu-cores", "volcano.sh/vgpu-memory")


@dataclass(frozen=True, kw_only=True)
class Card:
    uuid: str
    index: int
    split: int  # how many pods may share it (count)
    memory: int  # MiB
    cores: int  # percent of the card's compute
    type: str
    healthy: bool


@dataclass(frozen=True, kw_only=True)
class Registration:
    """What one node registered with one sharing scheduler. `problem` says why the scheduler sees no device there
    ("" when it does)."""

    node: str
    vendor: str
    cards: tuple[Card, ...]
    problem: str = ""
    handshake: str = ""
    handshake_age: int | None = None  # the handshake's time, seconds before the bundle's (negative: in the future)
    format: str = ""  # "json", "colon" or ""


@dataclass(kw_only=True)
class CardUse:
    """A card as the scheduler counts it: what the bound pods' allocations hold on it."""

    card: Card
    memory: int = 0
    cores: int = 0
    count: int = 0
    pods: list[str] = field(default_factory=list)

    @property
    def free_memory(self) -> int:
        return self.card.memory - self.memory

    @property
    def free_cores(self) -> int:
        return self.card.cores - self.cores


@dataclass(kw_only=True)
class VgpuWorld:
    registrations: dict[str, dict[str, Registration]]  # vendor -> node -> registration
    use: dict[tuple[str, str, str], CardUse]  # (vendor, node, uuid) -> its use
    findings: list[tuple[str, str, str, str]] = field(default_factory=list)  # (file, path, expected, found)
    said: dict[tuple[str, str], SchedulerSaid] = field(default_factory=dict)  # HAMi's FilteringFailed, per pod

    def cards(self, vendor: str, node: str) -> list[CardUse]:
        reg = self.registrations.get(vendor, {}).get(node)
        if reg is None:
            return []
        return [self.use[(vendor, node, c.uuid)] for c in reg.cards]


class FormatError(ValueError):
    pass


def _int(text: object, what: str, *, minimum: int = 0) -> int:
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise FormatError(f"{what} {text!r} is not a number")
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise FormatError(f"{what} {text!r} is not a number") from None
    if value < minimum:
        raise FormatError(f"{what} {value} is negative")
    return value


def parse_hami_register(text: str) -> tuple[tuple[Card, ...], str]:
    """HAMi's registration: (cards, "json" | "colon"); FormatError when it is neither format or a value is wrong."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except ValueError as exc:
            raise FormatError(f"not JSON ({exc})") from None
        if not isinstance(items, list):
            raise FormatError("not a list of devices")
        cards = []
        for i, d in enumerate(items):
            if not isinstance(d, dict):
                raise FormatError(f"device {i} is not an object")
            cards.append(Card(uuid=str(d.get("id") or ""), index=_int(d.get("index", i), "index"),
                              split=_int(d.get("count", 0), "count"), memory=_int(d.get("devmem", 0), "devmem"),
                              cores=_int(d.get("devcore", 0), "devcore"), type=str(d.get("type") or ""),
                              healthy=d.get("health") is True))
        return tuple(cards), "json"
    if ":" not in stripped or "," not in stripped:
        raise FormatError("neither JSON (v2.8.0 and later) nor the colon format (before v2.8.0)")
    cards = []
    for i, part in enumerate(p for p in stripped.split(":") if "," in p):
        items = part.split(",")
        if len(items) not in (7, 9):
            raise FormatError(f"device {i} has {len(items)} fields, not 7 or 9")
        cards.append(Card(uuid=items[0], index=_int(items[7], "index") if len(items) == 9 else i,
                          split=_int(items[1], "count"), memory=_int(items[2], "devmem"),
                          cores=_int(items[3], "devcore"), type=items[4], healthy=items[6].strip().lower() == "true"))
    return tuple(cards), "colon"


def parse_volcano_register(text: str) -> tuple[Card, ...]:
    cards = []
    for i, part in enumerate(p for p in text.split(":") if "," in p):
        items = part.split(",")
        if len(items) < 6:
            raise FormatError(f"device {i} has {len(items)} fields, not 6")
        cards.append(Card(uuid=items[0], index=i, split=_int(items[1], "count"), memory=_int(items[2], "devmem"),
                          cores=100, type=items[3], healthy=items[4].strip().lower() == "true"))
    if not cards:
        raise FormatError("no device in the colon format")
    return tuple(cards)


def parse_allocation(text: str) -> list[tuple[str, int, int]]:
    """A pod's allocation: (uuid, memory MiB, cores) per card, every container's; FormatError when unreadable."""
    out = []
    for container in text.split(";"):
        for part in container.split(":"):
            if "," not in part:
                continue
            items = part.split(",")
            if len(items) < 4:
                raise FormatError(f"{part!r} has {len(items)} fields, not 4")
            out.append((items[0], _int(items[2], "used memory"), _int(items[3], "used cores")))
    return out


def handshake_time(text: str) -> str:
    """The time a HAMi handshake carries (normalised, read as UTC), "" when none."""
    _, sep, when = text.partition("_")
    if not sep:
        return ""
    try:
        t = datetime.strptime(when.strip(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return ""
    return instant(t.isoformat())


def version_of(image: str) -> tuple[int, ...] | None:
    """`projecthami/hami:v2.9.1` -> (2, 9, 1)."""
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    digits = tag.lstrip("v").split("-", 1)[0].split(".")
    try:
        return tuple(int(d) for d in digits) if tag and all(digits) else None
    except ValueError:
        return None


def _hami(node: str, annotations: dict, allocatable_gpus: int, now: str | None,
          version: tuple[int, ...] | None) -> Registration:
    text = annotations.get(HAMI_REGISTER)
    handshake = annotations.get(HAMI_HANDSHAKE)
    handshake = handshake if isinstance(handshake, str) else ""
    age = seconds_between(handshake_time(handshake), now) if now else None
    if not isinstance(text, str):
        return Registration(node=node, vendor=HAMI, cards=(), problem=f"no {HAMI_REGISTER} annotation: HAMi's device "
                            "plugin has not registered the node", handshake=handshake, handshake_age=age)
    try:
        cards, fmt = parse_hami_register(text)
    except FormatError as exc:
        return Registration(node=node, vendor=HAMI, cards=(), problem=f"{HAMI_REGISTER} unreadable: {exc}",
                            handshake=handshake, handshake_age=age)
    problem = ""
    if not cards:
        problem = f"{HAMI_REGISTER} lists no device"
    elif handshake.startswith("Requesting") and age is not None and age >= HANDSHAKE_TIMEOUT:
        ignored = version is not None and version >= (2, 9) and allocatable_gpus > 0
        if not ignored:
            problem = (f"handshake {handshake!r} expired {age - HANDSHAKE_TIMEOUT} s ago: HAMi's device plugin on "
                       f"{node} has not answered for {age} s")
    return Registration(node=node, vendor=HAMI, cards=cards, problem=problem, handshake=handshake, handshake_age=age,
                        format=fmt)


def _volcano(node: str, text: object, allocatable: dict[str, int]) -> Registration:
    if not isinstance(text, str):
        return Registration(node=node, vendor=VOLCANO, cards=(), problem=f"no {VOLCANO_REGISTER} annotation")
    try:
        cards = parse_volcano_register(text)
    except FormatError as exc:
        return Registration(node=node, vendor=VOLCANO, cards=(), problem=f"{VOLCANO_REGISTER} unreadable: {exc}")
    zero = [r for r in VOLCANO_NODE_RESOURCES if allocatable.get(r, 0) <= 0]
    problem = ("allocatable " + ", ".join(zero) + " 0: Volcano's device plugin has not registered the node") if zero else ""
    return Registration(node=node, vendor=VOLCANO, cards=cards, problem=problem, format="colon")


def build_vgpu(nodes: list[tuple[str, dict, dict[str, int]]], allocations: list[tuple[str, str, str, str]],
               now: str | None, hami_images: list[str]) -> VgpuWorld | None:
    """nodes: (name, annotations, allocatable units); allocations: (node, namespace/name, annotation key, text).
    None when no node carries a sharing scheduler's registration and no pod an allocation (the common bundle)."""
    versions = [v for v in map(version_of, hami_images) if v is not None]
    version = max(versions) if versions else None
    regs: dict[str, dict[str, Registration]] = {HAMI: {}, VOLCANO: {}}
    for name, said, allocatable in nodes:
        if HAMI_REGISTER in said or HAMI_HANDSHAKE in said:
            regs[HAMI][name] = _hami(name, said, allocatable.get("nvidia.com/gpu", 0), now, version)
        if VOLCANO_REGISTER in said:
            regs[VOLCANO][name] = _volcano(name, said.get(VOLCANO_REGISTER), allocatable)
    if not regs[HAMI] and not regs[VOLCANO] and not allocations:
        return None
    world = VgpuWorld(registrations=regs, use={})
    for node, reg in regs[HAMI].items():
        if reg.handshake_age is not None and reg.handshake_age < -HANDSHAKE_TIMEOUT:  # beyond clock skew
            world.findings.append((NODES.file, f"{node} annotation {HAMI_HANDSHAKE}",
                                   "a time before the bundle's", f"{reg.handshake!r}, {-reg.handshake_age} s later"))
    for vendor, by_node in regs.items():
        for node, reg in by_node.items():
            for c in reg.cards:
                world.use[(vendor, node, c.uuid)] = CardUse(card=c)
    for node, pod, key, text in allocations:
        vendor = ALLOCATION_ANNOTATIONS[key]
        try:
            held = parse_allocation(text)
        except FormatError as exc:
            world.findings.append((PODS.file, f"{pod} annotation {key}", "uuid,type,memory,cores per card", str(exc)))
            continue
        for uuid, memory, cores in held:
            use = world.use.get((vendor, node, uuid))
            if use is None:
                continue  # a card the node no longer registers
            use.memory += memory
            use.cores += cores
            use.count += 1
            use.pods.append(pod)
    return world
