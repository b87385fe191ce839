"""Kubernetes quantities (apimachinery resource.Quantity), exactly.

Grammar: <sign><digits>[.<digits>]<suffix>, suffix one of the binary SI
suffixes Ki Mi Gi Ti Pi Ei, the decimal SI suffixes n u m "" k M G T P E, or a
decimal exponent e/E<integer>. Values are kept as Fractions, so `0.1` plus
`0.2` is exactly `0.3` and `1.5Gi` is exactly 1610612736: never floats.

The scheduler compares CPU in milli-units and everything else in whole units,
both rounded up (Quantity.MilliValue / Quantity.Value round toward +inf);
`scheduler_units` does exactly that, so fit arithmetic is integer arithmetic.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
# Exponents beyond this are not real resource amounts and would let a hostile
# bundle ask for 10**1000000-digit integers.
_MAX_EXPONENT = 99


class QuantityError(ValueError):
    """Not a quantity in the Kubernetes grammar (the message says why); `file` names the bundle file when known."""

    def __init__(self, message: str, *, file: str | None = None) -> None:
        super().__init__(message)
        self.file = file


@lru_cache(maxsize=65536)
def _parse_str(text: str) -> Fraction:
    m = _QUANTITY.match(text) if len(text) <= 64 else None  # no real amount is longer; Fraction() of 5,000 digits fails
    if m is None:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (examples: 500m, 4, 1Gi, 1e3)")
    value = Fraction(m.group("num"))
    suffix = m.group("suffix") or ""
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    else:
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"{text!r}: exponent {exponent} is out of range")
        value *= Fraction(10) ** exponent
    if m.group("sign") == "-":
        value = -value
    return value


def parse(value: object) -> Fraction:
    """A quantity from JSON (string or number) as an exact Fraction; negative amounts are refused."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        result = Fraction(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"{value!r} is not a quantity")
        result = Fraction(repr(value))  # the decimal the JSON said, not the binary float
    elif isinstance(value, str):
        result = _parse_str(value)
    else:
        raise QuantityError(f"expected a quantity string or number, found {type(value).__name__}")
    if result < 0:
        raise QuantityError(f"{value!r}: a resource amount cannot be negative")
    return result


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


@lru_cache(maxsize=65536)
def _units_str(resource: str, text: str) -> int:
    value = _parse_str(text)
    if value < 0:
        raise QuantityError(f"{text!r}: a resource amount cannot be negative")
    return _bounded(_ceil(value * 1000) if resource == "cpu" else _ceil(value), resource)


def scheduler_units(resource: str, value: object) -> int:
    """The integer the scheduler compares: millicores for cpu, whole units for the rest (rounded up)."""
    if isinstance(value, str):
        return _units_str(resource, value)
    q = parse(value)
    return _bounded(_ceil(q * 1000) if resource == "cpu" else _ceil(q), resource)


NANO = 10**9


@lru_cache(maxsize=65536)
def _nano_str(text: str) -> int:
    value = _parse_str(text)
    if value < 0:
        raise QuantityError(f"{text!r}: a resource amount cannot be negative")
    return _ceil(value * NANO)


def nano(_resource: str, value: object) -> int:
    """Exact integer nano-units, so container requests sum exactly before the pod's total is rounded."""
    if isinstance(value, str):
        return _nano_str(value)
    return _ceil(parse(value) * NANO)


INT64_MAX = 2**63 - 1


def _bounded(units: int, resource: str) -> int:
    # The scheduler holds amounts in int64; anything larger is not a real amount.
    if units > INT64_MAX:
        raise QuantityError(f"{resource}: amount too large for the scheduler (over 2^63-1 units)")
    return units


def nano_to_units(resource: str, value: int) -> int:
    """A pod's summed nano-units as the scheduler compares them (cpu millis, the rest whole units, rounded up)."""
    return _bounded(-((-value) // 10**6) if resource == "cpu" else -((-value) // NANO), resource)


@lru_cache(maxsize=65536)  # the same amounts come back for every node and pod of a shape
def format_units(resource: str, units: int) -> str:
    """Scheduler units back into a readable quantity (cpu in m when fractional, memory in Ki..Ti when exact)."""
    if resource == "cpu":
        return str(units // 1000) if units % 1000 == 0 else f"{units}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if units and units % factor == 0:
                return f"{units // factor}{suffix}"
    return str(units)


def format_exact(value: Fraction) -> str:
    """An exact Fraction as a plain decimal string when it has one, else as milli-units rounded up."""
    if value.denominator == 1:
        return str(value.numerator)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return f"{_ceil(milli)}m"
