"""TEMPORARY test double for analyzer/dra/cel.py (branch `cel`), to be deleted when that branch lands.

Maps the exact CEL expressions the DRA tests use to Python; anything else is
"unevaluable", as the real helper answers for what its library cannot evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from analyzer.quantity import parse


@dataclass(frozen=True)
class Device:
    driver: str
    name: str
    attributes: dict
    capacity: dict


def fake_device(driver: str, raw: dict) -> Device:
    return Device(driver, raw["name"], raw.get("attributes") or {}, raw.get("capacity") or {})


@dataclass(frozen=True)
class Match:
    matched: bool
    error: str | None = None


@dataclass(frozen=True)
class Unevaluable:
    expression: str
    reason: str


class _NoSuchKey(Exception):
    pass


def _attr(d: Device, domain: str, name: str) -> Any:
    if domain != d.driver or name not in d.attributes:
        raise _NoSuchKey(f"no such key: {name}")
    return next(iter(d.attributes[name].values()))


def _cap(d: Device, domain: str, name: str) -> Any:
    if domain != d.driver or name not in d.capacity:
        raise _NoSuchKey(f"no such key: {name}")
    return parse(d.capacity[name]["value"])


RULES: dict[str, Callable[[Device], bool]] = {
    'device.driver == "gpu.example.com"': lambda d: d.driver == "gpu.example.com",
    'device.attributes["gpu.example.com"].model == "a100"': lambda d: _attr(d, "gpu.example.com", "model") == "a100",
    'device.attributes["gpu.example.com"].model == "h100"': lambda d: _attr(d, "gpu.example.com", "model") == "h100",
    'device.attributes["gpu.example.com"].productName == "H100"': lambda d: _attr(d, "gpu.example.com", "productName") == "H100",
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0':
        lambda d: _cap(d, "gpu.example.com", "memory") >= parse("80Gi"),
}


class FakeSelectors:
    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, expression: str, device: Device) -> Match | Unevaluable:
        self.calls += 1
        rule = RULES.get(expression)
        if rule is None:
            return Unevaluable(expression, "not in the test double")
        try:
            return Match(bool(rule(device)))
        except _NoSuchKey as e:
            return Match(False, str(e))
