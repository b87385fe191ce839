"""The Kubernetes CEL library functions a DRA selector may call (k8s.io/apiserver/pkg/cel/library:
quantity.go, semverlib.go) and the library's string extensions, wrapped so their output is bounded.
Quantity and Semver travel through the CEL library as one-key maps holding a canonical exact value
(QUANTITY_KEY, SEMVER_KEY); an error raised here (CelFunctionError) becomes the CEL runtime error on the device.
Separate from the evaluator (cel.py) because these are Kubernetes semantics re-implemented in Python,
checked against the Go sources, and change for different reasons than how expressions are run.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import semver

from analyzer.model.dra.cel_limits import MAX_LIST, MAX_STRING
from analyzer.model.quantity import QuantityError, parse as parse_quantity

QUANTITY_KEY = "@kubernetes.quantity"
SEMVER_KEY = "@kubernetes.semver"
_INT64 = (-(2**63), 2**63 - 1)


# --- Kubernetes CEL library functions (k8s.io/apiserver/pkg/cel/library: quantity.go, semverlib.go) ---


class CelFunctionError(ValueError):
    """Raised inside a function; its message becomes the CEL runtime error."""


NO_OVERLOAD = "no such overload"


@lru_cache(maxsize=4096)
def quantity_value(text: str) -> Fraction:
    # analyzer.quantity refuses negative amounts (resource requests); CEL quantities may be negative.
    negative = text.startswith("-")
    try:
        value = parse_quantity(text[1:] if negative else text)
    except QuantityError as exc:
        raise CelFunctionError(str(exc)) from None
    return -value if negative else value


def cel_quantity(value: Fraction) -> dict[str, str]:
    # Canonical exact text, so equal quantities are equal CEL maps.
    return {QUANTITY_KEY: str(value)}


def _as_quantity(arg: object) -> Fraction | None:
    if isinstance(arg, dict) and len(arg) == 1 and QUANTITY_KEY in arg:
        return _fraction(arg[QUANTITY_KEY])
    return None


def _as_semver(arg: object) -> semver.Version | None:
    if isinstance(arg, dict) and len(arg) == 1 and SEMVER_KEY in arg:
        return _version(arg[SEMVER_KEY])
    return None


# Canonical texts back to values; a selector run over 40,000 devices sees the same few again and again.
_fraction = lru_cache(maxsize=4096)(Fraction)
_version = lru_cache(maxsize=4096)(semver.Version.parse)


def _operands(receiver: object, other: object) -> tuple[Any, Any]:
    """Two quantities or two semvers (compareTo and friends are overloaded on both), else no such overload."""
    for convert in (_as_quantity, _as_semver):
        a, b = convert(receiver), convert(other)
        if a is not None and b is not None:
            return a, b
    raise CelFunctionError(NO_OVERLOAD)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, semver.Version):
        return a.compare(b)  # semver precedence, build metadata ignored (blang/semver Compare)
    return (a > b) - (a < b)


def _quantity_arg(receiver: object) -> Fraction:
    q = _as_quantity(receiver)
    if q is None:
        raise CelFunctionError(NO_OVERLOAD)
    return q


def _quantity_or_int(arg: object) -> Fraction:
    if type(arg) is int:
        return Fraction(arg)
    return _quantity_arg(arg)


def semver_text(text: object, normalize: object = False) -> str:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise CelFunctionError(NO_OVERLOAD)
    if normalize:
        # semverlib.go normalizeAndParse: drop a leading "v", leading zeros, fill minor and patch.
        parts = [_trim_zeros(p) for p in text.removeprefix("v").split(".", 2)]
        if len(parts) < 3:
            if any(c in parts[-1] for c in "+-"):
                raise CelFunctionError("short version cannot contain PreRelease/Build meta data")
            parts += ["0"] * (3 - len(parts))
        text = ".".join(parts)
    try:
        version = semver.Version.parse(text)
    except (ValueError, TypeError) as exc:
        raise CelFunctionError(str(exc)) from None
    return str(version.replace(build=None))  # Equal ignores build metadata


def _trim_zeros(part: str) -> str:
    if len(part) > 1:
        part = part.lstrip("0")
        if not part or part[0] not in "0123456789":
            part = "0" + part
    return part


def _is_semver(text: object, normalize: object = False) -> bool:
    try:
        semver_text(text, normalize)
    except CelFunctionError as exc:
        if str(exc) == NO_OVERLOAD:
            raise
        return False
    return True


def _is_quantity(text: object) -> bool:
    if not isinstance(text, str):
        raise CelFunctionError(NO_OVERLOAD)
    try:
        quantity_value(text)
    except CelFunctionError:
        return False
    return True


def _as_integer(receiver: object) -> int:
    q = _quantity_arg(receiver)
    if q.denominator != 1 or not _INT64[0] <= q.numerator <= _INT64[1]:
        raise CelFunctionError("cannot convert value to integer")
    return q.numerator


def _is_integer(receiver: object) -> bool:
    q = _quantity_arg(receiver)
    return q.denominator == 1 and _INT64[0] <= q.numerator <= _INT64[1]


def _as_float(receiver: object) -> float:
    q = _quantity_arg(receiver)
    try:
        return float(q)
    except OverflowError:
        return math.copysign(math.inf, q)


def _semver_part(index: int) -> Callable[[object], int]:
    def part(receiver: object) -> int:
        v = _as_semver(receiver)
        if v is None:
            raise CelFunctionError(NO_OVERLOAD)
        return (v.major, v.minor, v.patch)[index]
    return part


def _bounded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A cel.stdlib string function whose output is capped, so chained calls cannot grow without bound."""
    def call(*args: Any) -> Any:
        if args and isinstance(args[0], str) and name == "replace" and len(args) >= 3:
            s, old, new = args[0], args[1], args[2]
            if isinstance(old, str) and isinstance(new, str):
                growth = (s.count(old) if old else len(s) + 1) * max(0, len(new) - len(old))
                if len(s) + growth > MAX_STRING:
                    raise CelFunctionError(f"replace: result longer than {MAX_STRING} characters")
        if name == "join" and args and isinstance(args[0], list):
            separator = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            size = sum(len(x) for x in args[0] if isinstance(x, str)) + len(separator) * max(0, len(args[0]) - 1)
            if size > MAX_STRING:
                raise CelFunctionError(f"join: result longer than {MAX_STRING} characters")
        if name == "split" and args and isinstance(args[0], str) and len(args) > 1 and isinstance(args[1], str):
            pieces = len(args[0]) if args[1] == "" else args[0].count(args[1]) + 1
            if pieces > MAX_LIST:
                raise CelFunctionError(f"split: more than {MAX_LIST} pieces")
        try:
            return function(*args)
        except CelFunctionError:
            raise
        except (TypeError, AttributeError):
            raise CelFunctionError(NO_OVERLOAD) from None
        except (ValueError, IndexError) as exc:
            raise CelFunctionError(str(exc)) from None
    return call


@lru_cache(maxsize=1)
def functions() -> dict[str, Callable[..., Any]]:
    """The functions selectors may call, by name. Built on first use: the CEL package imports its REPL
    (prompt_toolkit) when loaded, 0.15 s that a bundle without DRA selectors should not pay."""
    from cel import stdlib as cel_stdlib

    functions: dict[str, Callable[..., Any]] = {
        name: _bounded(name, function) for name, function in cel_stdlib.EXTENSIONS["strings"].items()
        if name in ("charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split",
                    "join", "substring", "trim")
    }
    functions.update({
        "quantity": lambda text: cel_quantity(quantity_value(text)) if isinstance(text, str) else _no_overload(),
        "isQuantity": _is_quantity,
        "semver": lambda text, normalize=False: {SEMVER_KEY: semver_text(text, normalize)},
        "isSemver": _is_semver,
        "compareTo": lambda a, b: _cmp(*_operands(a, b)),
        "isGreaterThan": lambda a, b: _cmp(*_operands(a, b)) == 1,
        "isLessThan": lambda a, b: _cmp(*_operands(a, b)) == -1,
        "add": lambda a, b: cel_quantity(_quantity_arg(a) + _quantity_or_int(b)),
        "sub": lambda a, b: cel_quantity(_quantity_arg(a) - _quantity_or_int(b)),
        "mul": lambda a, b: cel_quantity(_quantity_arg(a) * b) if type(b) is int else _no_overload(),
        "sign": lambda a: (lambda q: (q > 0) - (q < 0))(_quantity_arg(a)),
        "asInteger": _as_integer,
        "isInteger": _is_integer,
        "asApproximateFloat": _as_float,
        "major": _semver_part(0),
        "minor": _semver_part(1),
        "patch": _semver_part(2),
    })
    return functions


def _no_overload() -> Any:
    raise CelFunctionError(NO_OVERLOAD)




class _DropCallbackFailures(logging.Filter):
    # The library logs every exception raised in a function; each one is reported as Match.error instead.
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Python function '")


logging.getLogger("cel").addFilter(_DropCallbackFailures())

