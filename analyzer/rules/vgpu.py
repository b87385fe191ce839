"""A GPU shared by HAMi or Volcano's vGPU (schedulers.md): after kube-scheduler's own filters (the funnel) left
candidates, the sharing scheduler's device accounting decides, in its own order (HAMi pkg/device/nvidia/device.go
Fit, Volcano pkg/scheduler/api/devices/nvidia/vgpu):

- no-gpu-node: no candidate is registered with it (no or unreadable registration annotation, an expired HAMi
  handshake, Volcano's vGPU resources not allocatable, no healthy card);
- selector-mismatch: the pod's `nvidia.com/use-gputype` / `nouse-gputype` leaves no healthy card on any candidate;
- exhausted: every card is short of the memory, cores or share asked, once the bound pods' allocations are
  counted (what kube-scheduler's count of nvidia.com/gpu cannot see), named per card with what is free.

A HAMi pod is one for hami-scheduler asking nvidia.com/gpu; a Volcano vGPU pod asks volcano.sh/vgpu-number.
HAMi's own FilteringFailed event, when recorded, is quoted beside the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer import words
from analyzer import prose
from analyzer.model import quantity
from analyzer.model.gpu_sharing import (HAMI_CORES, HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE, HAMI_NOUSE_TYPE,
                                        HAMI_USE_TYPE, VOLCANO_CORES, VOLCANO_MEMORY, VOLCANO_NUMBER)
from analyzer.model.podspec import all_containers
from analyzer.model.quantity import QuantityError
from analyzer.model.vgpu import HAMI, VOLCANO, CardUse, VgpuWorld
from analyzer.rules.case import Case, Decision
from analyzer.bundle import catalog
from analyzer.rules.family import Family, Plain, Rule
from analyzer.text import some_names

HAMI_SCHEDULER = "hami-scheduler"
UNSET = 101  # HAMi's "no memory percentage asked" (GenerateResourceRequests)
_NAMES = {HAMI: ("nvidia.com/gpu", HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE, HAMI_CORES),
          VOLCANO: (VOLCANO_NUMBER, VOLCANO_MEMORY, "volcano.sh/vgpu-memory-percentage", VOLCANO_CORES)}


@dataclass(frozen=True, kw_only=True)
class Ask:
    """One container's ask: cards, and per card memory (MiB) or a percentage of it, and cores (percent)."""

    cards: int
    memory: int
    percent: int
    cores: int

    def memory_on(self, total: int) -> int:
        return self.memory if self.memory > 0 else total * (100 if self.percent == UNSET else self.percent) // 100


def _amount(res: dict, name: str) -> int | None:
    for kind in ("limits", "requests"):
        given = res.get(kind)
        if isinstance(given, dict) and name in given:
            try:
                value = quantity.parse(given[name])
            except QuantityError:
                return None
            return int(value)
    return None


def asks(spec: dict, vendor: str) -> list[Ask]:
    count, mem, pct, cores = _NAMES[vendor]
    out = []
    for c in all_containers(spec):
        res = c.get("resources") if isinstance(c, dict) else None
        if not isinstance(res, dict):
            continue
        n = _amount(res, count)
        if not n or n <= 0:
            continue
        p = _amount(res, pct)
        out.append(Ask(cards=n, memory=max(_amount(res, mem) or 0, 0),
                       percent=min(p, 100) if p is not None and p > 0 else UNSET, cores=min(_amount(res, cores) or 0, 100)))
    return out


def vendor_of(spec: dict) -> str:
    if spec.get("schedulerName") == HAMI_SCHEDULER and asks(spec, HAMI):
        return HAMI
    if asks(spec, VOLCANO):
        return VOLCANO
    return ""


def _type_ok(card_type: str, annotations: dict[str, str]) -> bool:
    """HAMi's CheckType: a case-insensitive substring of the card's type, comma-separated; empty means no limit."""
    upper = card_type.upper()

    def match(listed: str) -> bool:
        return any(t.strip() and t.strip().upper() in upper for t in listed.split(","))

    use, nouse = annotations.get(HAMI_USE_TYPE, "").strip(), annotations.get(HAMI_NOUSE_TYPE, "").strip()
    return (not use or match(use)) and not (nouse and match(nouse))


def _card_text(u: CardUse, held: tuple[int, int, int]) -> str:
    c = u.card
    mem, cores, count = u.memory + held[0], u.cores + held[1], u.count + held[2]
    return (f"{c.uuid} ({c.type}): {c.memory - mem} of {c.memory} MiB free, {c.cores - cores}% of {c.cores}% "
            f"cores free, {count} of {c.split} shares used")


def _short(u: CardUse, ask: Ask, held: tuple[int, int, int]) -> str:
    """Why the card cannot take one card of the ask ("" when it can), in HAMi's Fit order."""
    c = u.card
    mem, cores, count = u.memory + held[0], u.cores + held[1], u.count + held[2]
    if c.split <= count:
        return "every share in use"
    need = ask.memory_on(c.memory)
    if c.memory - mem < need:
        return f"{need} MiB asked"
    if c.cores - cores < ask.cores:
        return f"{ask.cores}% cores asked"
    if c.cores == 100 and ask.cores == 100 and count > 0:
        return "the whole card asked, and it is shared"
    if c.cores and cores >= c.cores and ask.cores == 0:
        return "its cores are all taken"
    return ""


def judge_node(cards: list[CardUse], pod_asks: list[Ask], annotations: dict[str, str]) -> tuple[str, list[str]]:
    """("", []) when the pod's every container gets its cards here; else ("registration" | "type" | "capacity",
    one text per card)."""
    healthy = [u for u in cards if u.card.healthy]
    if not healthy:
        return "registration", [f"{u.card.uuid}: unhealthy" for u in cards] or ["no card registered"]
    typed = [u for u in healthy if _type_ok(u.card.type, annotations)]
    if not typed:
        return "type", [f"{u.card.uuid}: type {u.card.type}" for u in healthy]
    held: dict[str, tuple[int, int, int]] = {}
    for ask in pod_asks:
        got = 0
        why: list[str] = []
        for u in typed:
            h = held.get(u.card.uuid, (0, 0, 0))
            short = _short(u, ask, h)
            if short:
                why.append(f"{_card_text(u, h)}; {short}")
                continue
            held[u.card.uuid] = (h[0] + ask.memory_on(u.card.memory), h[1] + ask.cores, h[2] + 1)
            got += 1
            if got == ask.cards:
                break
        if got < ask.cards:
            return "capacity", why or [f"{ask.cards} card(s) asked, {len(typed)} card(s) of its type"]
    return "", []


_STAGES = (("registration", words.NO_GPU_NODE), ("type", words.SELECTOR_MISMATCH), ("capacity", words.EXHAUSTED))


def decide(case: Case) -> Decision | None:
    world: VgpuWorld | None = case.cluster.vgpu
    spec = case.spec or {}
    if world is None or case.funnel is None or case.funnel.word is not None:
        return None
    vendor = vendor_of(spec)
    if not vendor:
        return None
    pod_asks = asks(spec, vendor)
    regs = world.registrations.get(vendor, {})
    annotations = case.target.annotations
    per_node: dict[str, tuple[str, list[str]]] = {}
    for node in case.funnel.fits:
        reg = regs.get(node.name)
        if reg is None:
            per_node[node.name] = ("registration", [f"not registered with {vendor}"])
        elif reg.problem:
            per_node[node.name] = ("registration", [reg.problem])
        else:
            per_node[node.name] = judge_node(world.cards(vendor, node.name), pod_asks, annotations)
    fits = [n for n, (stage, _) in per_node.items() if not stage]
    ev = {"scheduler": vendor, "asks": [vars(a) for a in pod_asks],
          "nodes": {n: {"stage": s, "cards": texts[:8]} for n, (s, texts) in list(per_node.items())[:20]}}
    said = world.said.get((case.target.namespace, case.target.name))
    if said is not None:
        ev["scheduler_said"] = {"reason": said.reason, "message": said.message, "source": said.source}
    case.evidence["vgpu"] = ev
    if fits:
        ev["fits_on"] = fits[:50]
        return None
    word = words.NO_GPU_NODE
    for stage, stage_word in _STAGES:
        if any(s == stage for s, _ in per_node.values()):
            word = stage_word
    last = [n for n, (s, _) in per_node.items() if words_for(s) == word]
    first_texts = per_node[last[0]][1] if last else []
    more = f" (and {len(first_texts) - 1} more card(s))" if len(first_texts) > 1 else ""
    return Decision(word=word, reason=f"{vendor}'s device accounting: no candidate ({len(per_node)}) can take it: "
                                      f"{some_names(last)}: {first_texts[0] if first_texts else ''}{more}")


def words_for(stage: str) -> str:
    return dict(_STAGES).get(stage, words.NO_GPU_NODE)


@prose.says("vgpu")
def _say_vgpu(value: object) -> list[str]:
    if not isinstance(value, dict):
        return []
    vendor = value.get("scheduler")
    out = []
    for a in value.get("asks") or ():
        if isinstance(a, dict):
            mem = f"{a.get('memory')} MiB" if a.get("memory") else (
                "the whole memory" if a.get("percent") == UNSET else f"{a.get('percent')}% of the memory")
            out.append(f"It asks {vendor} for {a.get('cards')} card(s), each with {mem} and {a.get('cores')}% of "
                       "the cores.")
    nodes = value.get("nodes") or {}
    for name, judged in nodes.items() if isinstance(nodes, dict) else ():
        if not isinstance(judged, dict):
            continue
        cards = "; ".join(map(str, judged.get("cards") or ()))
        verdict = "can take it" if not judged.get("stage") else f"cannot take it: {cards}"
        out.append(f"On node {name}, {vendor} {verdict}.")
    said = value.get("scheduler_said")
    if isinstance(said, dict):
        out.append(f"{vendor} said ({said.get('source')}): {said.get('message')}")
    return out


# A GPU shared by HAMi or Volcano's vGPU: their device accounting over the funnel's candidates.
FAMILY: Family = Plain(name="vgpu", kinds=(catalog.NODES, catalog.PODS), rules=(
    Rule(rows="22, 24, 33", words=(words.SELECTOR_MISMATCH, words.NO_GPU_NODE, words.EXHAUSTED), decide=decide),))
