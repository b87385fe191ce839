"""The devices a CEL selector judges: one `spec.devices[]` entry of a ResourceSlice read into a Device
(attributes and capacity split into domain and name, as compile.go does), refusing what Kubernetes
validation would refuse (DeviceError). Separate from the evaluator (cel.py) because the allocator builds
devices from slices without evaluating anything, and a device's identity (`key`, `error`) is what the
evaluator's cache is keyed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from analyzer.model.dra.cel_functions import CelFunctionError, quantity_value, semver_text
from analyzer.model.dra.cel_limits import MAX_ATTRIBUTE_VALUE_LENGTH, MAX_ATTRIBUTES_AND_CAPACITIES

# --- devices -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Quantity:
    """A capacity value as the slice wrote it (`80Gi`); parsed exactly when a selector reads it."""

    text: str


@dataclass(frozen=True, kw_only=True)
class Version:
    """A `version` attribute as the slice wrote it; a semver in CEL, parse errors surface per device."""

    text: str


AttributeValue = bool | int | str | Version


class DeviceError(ValueError):
    """A ResourceSlice device entry that Kubernetes validation would refuse; `path` is relative to the entry."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True, kw_only=True, eq=False)
class Device:
    """One device of a ResourceSlice, names already split into domain and name (bare names: the driver's)."""

    driver: str
    name: str
    attributes: Mapping[str, Mapping[str, AttributeValue]]
    capacity: Mapping[str, Mapping[str, Quantity]]
    # Derived once, when first asked (cached_property writes the instance dict, which frozen allows).
    @cached_property
    def key(self) -> tuple:
        """What a selector can see, hashable: devices with equal keys get the same answer from every selector."""
        def frozen(maps: Mapping[str, Mapping[str, object]]) -> tuple:
            # The type too: {"bool": true} and {"int": 1} must not share a key (True == 1 in Python). Not
            # sorted (a slice's devices list names in one order): another order only misses the cache.
            return tuple((domain, tuple((n, type(v), v) for n, v in names.items())) for domain, names in maps.items())

        return self.driver, frozen(self.attributes), frozen(self.capacity)

    @cached_property
    def error(self) -> str | None:
        """compile.go DeviceMatches converts every attribute first: a bad version fails every selector on it."""
        return _conversion_error(self)

    @cached_property
    def entries(self) -> int:
        """The most entries any of its maps has (what a macro over one of them iterates)."""
        return max([len(self.attributes), len(self.capacity)]
                   + [len(m) for m in (*self.attributes.values(), *self.capacity.values())])


def _conversion_error(device: Device) -> str | None:
    for domain, names in device.attributes.items():
        for name, value in names.items():
            if isinstance(value, Version):
                try:
                    semver_text(value.text)
                except CelFunctionError as exc:
                    return f"attribute {domain}/{name}: parse semantic version: {exc}"
    for domain, names in device.capacity.items():
        for name, quantity in names.items():
            try:
                quantity_value(quantity.text)
            except CelFunctionError as exc:
                return f"capacity {domain}/{name}: {exc}"
    return None


def _split_name(name: str, driver: str) -> tuple[str, str]:
    # compile.go parseQualifiedName: the domain is everything before the first "/", else the driver.
    domain, sep, rest = name.partition("/")
    return (domain, rest) if sep else (driver, name)


def _attribute_value(path: str, raw: object) -> AttributeValue:
    # compile.go getAttributeValue: exactly one of int, bool, string, version.
    if not isinstance(raw, dict) or len(raw) != 1:
        raise DeviceError(path, "an attribute holds exactly one of int, bool, string, version")
    (kind, value), = raw.items()
    if kind == "int" and type(value) is int:
        return value
    if kind == "bool" and type(value) is bool:
        return value
    if kind in ("string", "version") and type(value) is str:
        if len(value) > MAX_ATTRIBUTE_VALUE_LENGTH:
            raise DeviceError(path, f"longer than {MAX_ATTRIBUTE_VALUE_LENGTH} characters")
        return value if kind == "string" else Version(text=value)
    raise DeviceError(path, f"unsupported attribute value {kind!r}: {type(value).__name__}")


def device_from_slice(driver: str, raw_device: dict) -> Device:
    """A Device from one `spec.devices[]` entry of a ResourceSlice: attributes and capacity at the top level
    (resource.k8s.io/v1 and v1beta2) or under `basic` (v1beta1). Raises DeviceError for a malformed entry."""
    if not isinstance(raw_device, dict):
        raise DeviceError("", "a device is an object")
    body = raw_device.get("basic") if isinstance(raw_device.get("basic"), dict) else raw_device
    prefix = "basic." if body is not raw_device else ""
    name = raw_device.get("name")
    if not isinstance(name, str):
        raise DeviceError("name", "missing or not a string")
    raw_attributes = body.get("attributes") or {}
    raw_capacity = body.get("capacity") or {}
    if not isinstance(raw_attributes, dict) or not isinstance(raw_capacity, dict):
        raise DeviceError(prefix + "attributes", "attributes and capacity are maps")
    if len(raw_attributes) + len(raw_capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        raise DeviceError(prefix + "attributes", f"more than {MAX_ATTRIBUTES_AND_CAPACITIES} attributes and capacities")
    attributes: dict[str, dict[str, AttributeValue]] = {}
    for qualified, raw in raw_attributes.items():
        domain, short = _split_name(qualified, driver)
        attributes.setdefault(domain, {})[short] = _attribute_value(f"{prefix}attributes.{qualified}", raw)
    capacity: dict[str, dict[str, Quantity]] = {}
    for qualified, raw in raw_capacity.items():
        value = raw.get("value") if isinstance(raw, dict) else None
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise DeviceError(f"{prefix}capacity.{qualified}.value", "missing or not a quantity")
        domain, short = _split_name(qualified, driver)
        capacity.setdefault(domain, {})[short] = Quantity(text=str(value))
    return Device(driver=driver, name=name, attributes=attributes, capacity=capacity)

