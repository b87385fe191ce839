"""CEL device selectors (DeviceClass and ResourceClaim request `selectors[].cel.expression`), as the scheduler
evaluates them (k8s.io/dynamic-resource-allocation/cel/compile.go, CompilationResult.DeviceMatches).

Library: `common-expression-language` (module `cel`, Rust cel-rust bindings), chosen over `cel-python`
(`celpy` 0.5.0) after trying both:
- Kubernetes functions: both register Python callables and dispatch `x.f(a)` to `f(x, a)`. celpy also
  carries custom Python objects, the Rust library only plain values, so Quantity and Semver travel as
  one-key maps holding a canonical value (equal quantities are equal maps: `1Gi` == `1024Mi`).
- Limits: neither has a runtime cost limit or interruption. The Rust parser refuses deep nesting with a
  clear error (celpy raises RecursionError at ~60 parentheses), and evaluation never recursed out of the
  stack on 5,000-deep operator chains. Work is bounded here before compiling (see `_scan`).
- Speed: a compiled program runs in ~0.3 us on a prepared context (~20 us to convert a device's maps
  once) against ~1,200 us per evaluation in celpy's interpreter; celpy's compiled runner failed to
  build. 40,000 devices are one conversion each plus cache lookups.
- Maturity: both young on PyPI; cel-rust is an actively maintained implementation with the spec's
  conformance tests; neither supports the `.?`/`[?` optional syntax, which is answered Unevaluable.
String extensions (lowerAscii, split, join, replace, ...) come from the same library's `cel.stdlib`,
wrapped so their output is bounded.

A runtime error on a device (missing key, type error, bad quantity) is `Match(matched=False, error=...)`
in the scheduler's words (`no such key: productName`); an expression this library cannot compile or
evaluate at all, or that the bounds refuse, is `Unevaluable` so the caller answers `unclassified`.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import cel
import semver
from cel import stdlib as cel_stdlib

from analyzer.quantity import QuantityError, parse as parse_quantity

# resourceapi.CELSelectorExpressionMaxLength (k8s.io/api/resource/v1/types.go), counted in bytes as Go does.
MAX_EXPRESSION_BYTES = 10 * 1024
# Brackets nested deeper than this are refused before the parser sees them (cel-go's parser stops at a
# recursion limit too; real selectors nest a handful deep).
MAX_NESTING = 50
# resourceapi.CELSelectorExpressionMaxCost; here the estimate is iterations x body size over the
# comprehension macros (see _scan), not cel-go's cost units.
MAX_ESTIMATED_COST = 1_000_000
# Size assumed for a macro's receiver that is not a list literal: lists made by the functions below are
# capped at this, and a device's maps hold at most 32 entries.
MAX_LIST = 1000
# Strings and lists made by the string functions are capped so chained calls cannot grow without bound.
MAX_STRING = 16 * 1024
# k8s.io/api/resource/v1: ResourceSliceMaxAttributesAndCapacitiesPerDevice, DeviceAttributeMaxValueLength.
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUE_LENGTH = 64

_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_QUANTITY_KEY = "@kubernetes.quantity"
_SEMVER_KEY = "@kubernetes.semver"
_INT64 = (-(2**63), 2**63 - 1)


# --- results -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Match:
    """A selector's verdict on one device; `error` is the CEL runtime error (then `matched` is False)."""

    matched: bool
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Unevaluable:
    """The expression cannot be judged at all (unsupported feature, does not compile, refused by the bounds)."""

    expression: str
    why: str


@dataclass(frozen=True, kw_only=True)
class CacheStats:
    compiles: int  # distinct expressions compiled (or refused)
    evaluations: int  # CEL programs actually run
    hits: int  # answers served from the (expression, device content) cache
    conversions: int  # devices converted into CEL values


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
    # What a selector can see, hashable: devices with equal keys get the same answer from every selector.
    key: tuple = field(init=False, repr=False)

    def __post_init__(self) -> None:
        def frozen(maps: Mapping[str, Mapping[str, object]]) -> tuple:
            # type name first: {"bool": true} and {"int": 1} must not share a key (True == 1 in Python).
            return tuple(sorted((domain, tuple(sorted((n, type(v).__name__, v) for n, v in names.items())))
                                for domain, names in maps.items()))

        object.__setattr__(self, "key", (self.driver, frozen(self.attributes), frozen(self.capacity)))


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


# --- Kubernetes CEL library functions (k8s.io/apiserver/pkg/cel/library: quantity.go, semverlib.go) ---


class _CelError(ValueError):
    """Raised inside a function; its message becomes the CEL runtime error."""


_NO_OVERLOAD = "no such overload"


def _quantity_value(text: str) -> Fraction:
    # analyzer.quantity refuses negative amounts (resource requests); CEL quantities may be negative.
    negative = text.startswith("-")
    try:
        value = parse_quantity(text[1:] if negative else text)
    except QuantityError as exc:
        raise _CelError(str(exc)) from None
    return -value if negative else value


def _quantity(value: Fraction) -> dict[str, str]:
    # Canonical exact text, so equal quantities are equal CEL maps.
    return {_QUANTITY_KEY: str(value)}


def _as_quantity(arg: object) -> Fraction | None:
    if isinstance(arg, dict) and len(arg) == 1 and _QUANTITY_KEY in arg:
        return Fraction(arg[_QUANTITY_KEY])
    return None


def _as_semver(arg: object) -> semver.Version | None:
    if isinstance(arg, dict) and len(arg) == 1 and _SEMVER_KEY in arg:
        return semver.Version.parse(arg[_SEMVER_KEY])
    return None


def _operands(receiver: object, other: object) -> tuple[Any, Any]:
    """Two quantities or two semvers (compareTo and friends are overloaded on both), else no such overload."""
    for convert in (_as_quantity, _as_semver):
        a, b = convert(receiver), convert(other)
        if a is not None and b is not None:
            return a, b
    raise _CelError(_NO_OVERLOAD)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, semver.Version):
        return a.compare(b)  # semver precedence, build metadata ignored (blang/semver Compare)
    return (a > b) - (a < b)


def _quantity_arg(receiver: object) -> Fraction:
    q = _as_quantity(receiver)
    if q is None:
        raise _CelError(_NO_OVERLOAD)
    return q


def _quantity_or_int(arg: object) -> Fraction:
    if type(arg) is int:
        return Fraction(arg)
    return _quantity_arg(arg)


def _semver_text(text: object, normalize: object = False) -> str:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise _CelError(_NO_OVERLOAD)
    if normalize:
        # semverlib.go normalizeAndParse: drop a leading "v", leading zeros, fill minor and patch.
        parts = [_trim_zeros(p) for p in text.removeprefix("v").split(".", 2)]
        if len(parts) < 3:
            if any(c in parts[-1] for c in "+-"):
                raise _CelError("short version cannot contain PreRelease/Build meta data")
            parts += ["0"] * (3 - len(parts))
        text = ".".join(parts)
    try:
        version = semver.Version.parse(text)
    except (ValueError, TypeError) as exc:
        raise _CelError(str(exc)) from None
    return str(version.replace(build=None))  # Equal ignores build metadata


def _trim_zeros(part: str) -> str:
    if len(part) > 1:
        part = part.lstrip("0")
        if not part or part[0] not in "0123456789":
            part = "0" + part
    return part


def _is_semver(text: object, normalize: object = False) -> bool:
    try:
        _semver_text(text, normalize)
    except _CelError as exc:
        if str(exc) == _NO_OVERLOAD:
            raise
        return False
    return True


def _is_quantity(text: object) -> bool:
    if not isinstance(text, str):
        raise _CelError(_NO_OVERLOAD)
    try:
        _quantity_value(text)
    except _CelError:
        return False
    return True


def _as_integer(receiver: object) -> int:
    q = _quantity_arg(receiver)
    if q.denominator != 1 or not _INT64[0] <= q.numerator <= _INT64[1]:
        raise _CelError("cannot convert value to integer")
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
            raise _CelError(_NO_OVERLOAD)
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
                    raise _CelError(f"replace: result longer than {MAX_STRING} characters")
        if name == "join" and args and isinstance(args[0], list):
            if sum(len(x) for x in args[0] if isinstance(x, str)) > MAX_STRING:
                raise _CelError(f"join: result longer than {MAX_STRING} characters")
        if name == "split" and args and isinstance(args[0], str) and len(args) > 1 and isinstance(args[1], str):
            pieces = len(args[0]) if args[1] == "" else args[0].count(args[1]) + 1
            if pieces > MAX_LIST:
                raise _CelError(f"split: more than {MAX_LIST} pieces")
        try:
            return function(*args)
        except _CelError:
            raise
        except (TypeError, AttributeError):
            raise _CelError(_NO_OVERLOAD) from None
        except (ValueError, IndexError) as exc:
            raise _CelError(str(exc)) from None
    return call


def _functions() -> dict[str, Callable[..., Any]]:
    functions: dict[str, Callable[..., Any]] = {
        name: _bounded(name, function) for name, function in cel_stdlib.EXTENSIONS["strings"].items()
        if name in ("charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split",
                    "join", "substring", "trim")
    }
    functions.update({
        "quantity": lambda text: _quantity(_quantity_value(text)) if isinstance(text, str) else _no_overload(),
        "isQuantity": _is_quantity,
        "semver": lambda text, normalize=False: {_SEMVER_KEY: _semver_text(text, normalize)},
        "isSemver": _is_semver,
        "compareTo": lambda a, b: _cmp(*_operands(a, b)),
        "isGreaterThan": lambda a, b: _cmp(*_operands(a, b)) == 1,
        "isLessThan": lambda a, b: _cmp(*_operands(a, b)) == -1,
        "add": lambda a, b: _quantity(_quantity_arg(a) + _quantity_or_int(b)),
        "sub": lambda a, b: _quantity(_quantity_arg(a) - _quantity_or_int(b)),
        "mul": lambda a, b: _quantity(_quantity_arg(a) * b) if type(b) is int else _no_overload(),
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
    raise _CelError(_NO_OVERLOAD)


_FUNCTIONS = _functions()


class _DropCallbackFailures(logging.Filter):
    # The library logs every exception raised in a function; each one is reported as Match.error instead.
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Python function '")


logging.getLogger("cel").addFilter(_DropCallbackFailures())


# --- bounds: a token scan before the library parses (refuses, never evaluates) ------------------------

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"|'''|"|'))
      | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<num>0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
      | (?P<open>[(\[{])
      | (?P<close>[)\]}])
      | (?P<op>.)""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, kw_only=True)
class _Token:
    kind: str
    text: str
    value: str | None = None  # a string literal's text when it has no escapes


def _tokens(expression: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(expression):
        m = _TOKEN.match(expression, pos)
        assert m is not None  # the `op` branch matches any character
        kind = m.lastgroup or "op"
        if kind == "str":
            prefix = m.group().rstrip("'\"")
            quote = m.group()[len(prefix):]
            raw = "r" in prefix.lower()
            i = m.end()
            while i < len(expression) and not expression.startswith(quote, i):
                i += 2 if expression[i] == "\\" and not raw else 1
            body = expression[m.end():i]
            tokens.append(_Token(kind="str", text=expression[pos:i + len(quote)],
                                 value=None if "\\" in body else body))
            pos = i + len(quote)
            continue
        if kind != "ws":
            tokens.append(_Token(kind=kind, text=m.group()))
        pos = m.end()
    return tokens


@dataclass(frozen=True, kw_only=True)
class _Scan:
    refusal: str | None
    domains: frozenset[str] = frozenset()  # literal keys of device.attributes[...] / device.capacity[...]


def _receiver_start(tokens: list[_Token], opener: dict[int, int], end: int) -> int:
    """First token of the postfix chain ending at `end` (the receiver of `.macro(`)."""
    j = end
    while j >= 0:
        if tokens[j].kind == "close":
            j = opener.get(j, 0)
            # a call `f(...)`, an index `x[...]` or `Msg{...}`: the chain goes on before the bracket
            if j > 0 and (tokens[j - 1].kind in ("id", "close", "str", "num")):
                j -= 1
                continue
        if j >= 2 and tokens[j - 1].text == ".":
            j -= 2
            continue
        return j
    return 0


def _scan(expression: str) -> _Scan:
    size = len(expression.encode("utf-8", "surrogatepass"))
    if size > MAX_EXPRESSION_BYTES:
        return _Scan(refusal=f"the expression is {size} bytes, over the {MAX_EXPRESSION_BYTES} Kubernetes allows "
                             "(CELSelectorExpressionMaxLength)")
    tokens = _tokens(expression)
    stack: list[int] = []
    opener: dict[int, int] = {}
    closer: dict[int, int] = {}
    macros: list[int] = []  # indexes of the "(" opening each comprehension macro
    macro_opens: set[int] = set()
    domains: set[str] = set()
    for i, token in enumerate(tokens):
        if token.kind == "open":
            if len(stack) >= MAX_NESTING:
                return _Scan(refusal=f"brackets nest deeper than {MAX_NESTING}")
            is_macro = (token.text == "(" and i >= 2 and tokens[i - 1].kind == "id"
                        and tokens[i - 1].text in _MACROS and tokens[i - 2].text == ".")
            if is_macro:
                if any(s in macro_opens for s in stack):
                    return _Scan(refusal=f"the comprehension macro {tokens[i - 1].text}() is nested inside "
                                         "another one; nested macros can make the work grow without bound")
                macros.append(i)
                macro_opens.add(i)
            stack.append(i)
        elif token.kind == "close" and stack:
            opener[i] = stack.pop()
            closer[opener[i]] = i
        elif (token.kind == "str" and token.value is not None and i >= 3 and tokens[i - 1].text == "["
              and tokens[i - 2].text in ("attributes", "capacity") and tokens[i - 3].text == "."):
            domains.add(token.value)
    cost = 0
    for m in macros:
        receiver_end = m - 3  # tokens: <receiver> . name (
        if receiver_end < 0:
            continue
        start = _receiver_start(tokens, opener, receiver_end)
        if any(start <= other < m - 2 for other in macros):
            return _Scan(refusal=f"the comprehension macro {tokens[m - 1].text}() is applied to the result of "
                                 "another macro; chained macros can make the work grow without bound")
        iterations = MAX_LIST
        if tokens[start].text == "[" and closer.get(start) == receiver_end and (start == 0 or tokens[start - 1].kind
                                                                                 not in ("id", "close", "str", "num")):
            depth = 0
            elements = 0 if receiver_end == start + 1 else 1
            for t in tokens[start + 1:receiver_end]:
                depth += t.kind == "open"
                depth -= t.kind == "close"
                elements += depth == 0 and t.text == ","
            iterations = elements
        body = closer.get(m, len(tokens)) - m - 1
        cost += iterations * max(body, 1)
        if cost > MAX_ESTIMATED_COST:
            return _Scan(refusal=f"the comprehension macros' estimated work ({cost:,} steps) is over "
                                 f"{MAX_ESTIMATED_COST:,} (CELSelectorExpressionMaxCost)")
    return _Scan(refusal=None, domains=frozenset(domains))


# --- evaluation ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Compiled:
    program: Any  # cel.Program
    domains: frozenset[str]


_FAILED_CALL = re.compile(r"Python function call failed: \w+: (?P<msg>.*?)\.? Check function arguments", re.DOTALL)
_FUNCTION_ERROR = re.compile(r"Function '(?P<name>[^']*)' error: (?P<msg>.*?)\.? Check function arguments", re.DOTALL)
_UNDEFINED = "Undefined variable or function"


def _runtime_error(exc: Exception) -> str | None:
    """The scheduler's wording for a CEL runtime error, or None when the library lacks a feature."""
    text = str(exc)
    if isinstance(exc, KeyError):
        return f"no such key: {exc.args[0] if exc.args else text}"
    if text.startswith(_UNDEFINED):
        return None
    if isinstance(exc, TypeError):
        if text.startswith("No such overload"):
            return _NO_OVERLOAD
        return text.split(". ", 1)[0]
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    m = _FAILED_CALL.search(text)
    if m:
        return m.group("msg")
    m = _FUNCTION_ERROR.search(text)
    if m:
        return f"{m.group('name')}: {m.group('msg')}"
    return text.split("\n", 1)[0]


def _cel_device(device: Device, extra_domains: frozenset[str]) -> dict[str, Any] | str:
    """The `device` variable as compile.go DeviceMatches builds it, or the error that stops evaluation."""
    attributes: dict[str, dict[str, Any]] = {}
    for domain, names in device.attributes.items():
        converted: dict[str, Any] = {}
        for name, value in names.items():
            if isinstance(value, Version):
                try:
                    converted[name] = {_SEMVER_KEY: _semver_text(value.text)}
                except _CelError as exc:
                    return f"attribute {domain}/{name}: parse semantic version: {exc}"
            else:
                converted[name] = value
        attributes[domain] = converted
    capacity: dict[str, dict[str, Any]] = {}
    for domain, names in device.capacity.items():
        converted = {}
        for name, quantity in names.items():
            try:
                converted[name] = _quantity(_quantity_value(quantity.text))
            except _CelError as exc:
                return f"capacity {domain}/{name}: {exc}"
        capacity[domain] = converted
    # newStringInterfaceMapWithDefault: a domain the device lacks reads as an empty map. The library's maps
    # cannot default, so the domains this expression names get explicit empty maps.
    for domain in extra_domains:
        attributes.setdefault(domain, {})
        capacity.setdefault(domain, {})
    return {"driver": device.driver, "attributes": attributes, "capacity": capacity}


class Selectors:
    """Evaluates selectors for one bundle: compiles each distinct expression once, converts each distinct
    device once, and answers each (expression, device content) pair once."""

    def __init__(self, *, max_cached: int = 1_000_000) -> None:
        self._max_cached = max_cached
        self._compiled: dict[str, _Compiled | Unevaluable] = {}
        self._contexts: dict[tuple, Any] = {}  # (device key, extra domains) -> cel.Context or error text
        self._results: dict[tuple[str, tuple], Match | Unevaluable] = {}
        self._evaluations = 0
        self._hits = 0
        self._conversions = 0

    @property
    def stats(self) -> CacheStats:
        return CacheStats(compiles=len(self._compiled), evaluations=self._evaluations, hits=self._hits,
                          conversions=self._conversions)

    def compile(self, expression: str) -> _Compiled | Unevaluable:
        """The compiled program, or why it cannot be evaluated; cached per distinct expression."""
        found = self._compiled.get(expression)
        if found is None:
            found = self._compile(expression)
            self._compiled[expression] = found
        return found

    def check(self, expression: str) -> Unevaluable | None:
        """Unevaluable when the expression can never be evaluated here (bounds, syntax, unsupported)."""
        compiled = self.compile(expression)
        return compiled if isinstance(compiled, Unevaluable) else None

    @staticmethod
    def _compile(expression: str) -> _Compiled | Unevaluable:
        if not isinstance(expression, str):
            return Unevaluable(expression=repr(expression), why="a CEL expression is a string")
        try:
            scan = _scan(expression)
            if scan.refusal is not None:
                return Unevaluable(expression=expression, why=f"refused: {scan.refusal}")
            program = cel.compile(expression)
            functions = set(program.functions())
        except (ValueError, RuntimeError, RecursionError, MemoryError) as exc:
            first = str(exc).split("\n", 1)[0]
            detail = first.split("': ", 1)[1] if first.startswith("Failed to parse expression '") else first
            return Unevaluable(expression=expression, why=f"the CEL library cannot compile it: {detail[:300]}")
        if "bind" in functions:
            # ext.Bindings is in the DRA environment (compile.go); this library has no cel.bind macro.
            return Unevaluable(expression=expression, why="cel.bind is not supported by the CEL library")
        return _Compiled(program=program, domains=scan.domains)

    def evaluate(self, expression: str, device: Device) -> Match | Unevaluable:
        key = (expression, device.key)
        found = self._results.get(key)
        if found is not None:
            self._hits += 1
            return found
        result = self._evaluate(expression, device)
        if len(self._results) >= self._max_cached:
            self._results.clear()  # bounded memory on a hostile bundle; answers are recomputed, not wrong
        self._results[key] = result
        return result

    def _context(self, compiled: _Compiled, device: Device) -> Any:
        present = set(device.attributes) & set(device.capacity)
        extra = frozenset(d for d in compiled.domains if d not in present)
        key = (device.key, extra)
        context = self._contexts.get(key)
        if context is None:
            self._conversions += 1
            variable = _cel_device(device, extra)
            context = variable if isinstance(variable, str) else cel.Context({"device": variable}, _FUNCTIONS)
            if len(self._contexts) >= 65536:
                self._contexts.clear()
            self._contexts[key] = context
        return context

    def _evaluate(self, expression: str, device: Device) -> Match | Unevaluable:
        compiled = self.compile(expression)
        if isinstance(compiled, Unevaluable):
            return compiled
        context = self._context(compiled, device)
        if isinstance(context, str):
            return Match(matched=False, error=context)
        self._evaluations += 1
        try:
            result = compiled.program.execute(context)
        except (KeyError, TypeError, ValueError, RuntimeError, ArithmeticError, IndexError) as exc:
            error = _runtime_error(exc)
            if error is None:
                detail = str(exc).split(". ", 1)[0]  # drop the library's spelling hint
                return Unevaluable(expression=expression, why=f"the CEL library cannot evaluate it: {detail}"[:400])
            return Match(matched=False, error=error)
        except (RecursionError, MemoryError) as exc:
            return Unevaluable(expression=expression, why=f"evaluation exceeded the library's limits: {exc}"[:400])
        if type(result) is not bool:
            # compile.go DeviceMatches: the result must convert to bool.
            kind = "map" if isinstance(result, dict) else "list" if isinstance(result, list) else type(result).__name__
            return Match(matched=False, error=f"CEL result of type {kind} could not be converted to bool")
        return Match(matched=result)
