"""CEL device selectors (DeviceClass and ResourceClaim request `selectors[].cel.expression`), as the scheduler
evaluates them (k8s.io/dynamic-resource-allocation/cel/compile.go, CompilationResult.DeviceMatches).

Library: `common-expression-language` 0.10 (module `cel`, Python bindings of the Rust cel-rust
interpreter), chosen over `cel-python` 0.5.0 (`celpy`, pure Python) after trying both:
- Kubernetes functions: both take Python callables and dispatch `x.f(a)` to `f(x, a)`. celpy can also
  carry custom Python objects; this library only plain values, so Quantity and Semver travel as one-key
  maps holding a canonical exact value (equal quantities are equal maps: `1Gi` == `1024Mi`).
- Limits on hostile input: neither has a runtime cost limit or interruption. This library's parser
  refuses deep nesting with an error (celpy raised RecursionError at 60 parentheses) and its evaluator
  survived 10,000-long operator chains. The work is bounded here before compiling (`_scan`), by capping
  what the string functions make, and by a per-bundle work budget.
- Speed: one evaluation is ~3 us on a built context plus ~20-70 us to build the context from a device;
  celpy's interpreter took ~1,200 us per evaluation and its compiled runner failed to build. Results are
  cached per (expression, the values of the device it reads), so 40,000 devices that agree on what a
  selector reads cost one evaluation and 40,000 lookups.
- Maturity: both are pre-1.0 on PyPI (0.5.0 and 0.10.0); celpy ships with Cloud Custodian's CEL
  library. This library (like celpy) does not parse the `.?`/`[?` optional syntax and has no
  `cel.bind`: such selectors are Unevaluable. Known difference: `size()` of a non-ASCII string counts
  UTF-8 bytes, not code points.
String extensions (lowerAscii, split, join, replace, ...) are the library's own `cel.stdlib`
implementations, wrapped so their output is bounded.

A runtime error on a device (missing key, type error, bad quantity) is `Match(matched=False, error=...)`
in the scheduler's words (`no such key: productName`); an expression this library cannot compile or
evaluate at all, or that the bounds refuse, is `Unevaluable` so the caller answers `unclassified`.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import cel
import semver
from cel import stdlib as cel_stdlib

from analyzer.model.quantity import QuantityError, parse as parse_quantity

# resourceapi.CELSelectorExpressionMaxLength (k8s.io/api/resource/v1/types.go), counted in bytes as Go does.
MAX_EXPRESSION_BYTES = 10 * 1024
# Brackets nested deeper than this are refused before the parser sees them (cel-go's parser stops at a
# recursion limit too; real selectors nest a handful deep).
MAX_NESTING = 50
# The comprehension macros' estimated work, iterations x body tokens (see _scan). Kubernetes allows
# resourceapi.CELSelectorExpressionMaxCost = 1,000,000 of cel-go's cost units (~0.1 s in the scheduler);
# here 25,000 of these units is at most ~0.25 s for the library, measured.
MAX_ESTIMATED_COST = 25_000
# One macro unit costs the library about as much as this many plain tokens (measured: ~1.4 us vs ~0.08 us).
MACRO_WEIGHT = 16
# Work for the whole bundle, in tokens evaluated (+ MACRO_WEIGHT x macro units): a hostile selector x
# 40,000 distinct devices stops here (~4 s) instead of running for minutes. Real selectors are ~10-40
# tokens, so 40,000 devices x 10 selectors is under a fifth of it.
WORK_BUDGET = 50_000_000
# Size assumed for a macro's receiver that is not a list literal: lists made by the functions below are
# capped at this, and a device's maps hold at most 32 entries.
MAX_LIST = 1000
# A macro body may name its variable this often (real selectors: once or twice).
MAX_VARIABLE_USES = 16
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
    work: int  # estimated work spent, against the bundle's budget


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
                    _semver_text(value.text)
                except _CelError as exc:
                    return f"attribute {domain}/{name}: parse semantic version: {exc}"
    for domain, names in device.capacity.items():
        for name, quantity in names.items():
            try:
                _quantity_value(quantity.text)
            except _CelError as exc:
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


# --- Kubernetes CEL library functions (k8s.io/apiserver/pkg/cel/library: quantity.go, semverlib.go) ---


class _CelError(ValueError):
    """Raised inside a function; its message becomes the CEL runtime error."""


_NO_OVERLOAD = "no such overload"


@lru_cache(maxsize=4096)
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
        return _fraction(arg[_QUANTITY_KEY])
    return None


def _as_semver(arg: object) -> semver.Version | None:
    if isinstance(arg, dict) and len(arg) == 1 and _SEMVER_KEY in arg:
        return _version(arg[_SEMVER_KEY])
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
            separator = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            size = sum(len(x) for x in args[0] if isinstance(x, str)) + len(separator) * max(0, len(args[0]) - 1)
            if size > MAX_STRING:
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
    work: int = 0  # estimated cost of one evaluation, in WORK_BUDGET units
    device_work: int = 0  # more work per entry of the device (macros over its maps)
    # Everything the expression reads of `device` ((driver,), (attributes|capacity, domain, name)), or None
    # when it uses a whole map (size(), a macro, ==) and so may read anything.
    reads: tuple[tuple[str, ...], ...] | None = None


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


def _reads(tokens: list[_Token]) -> tuple[tuple[str, ...], ...] | None:
    """What of `device` the expression reads, when every use is `device.driver`,
    `device.attributes["domain"].name` or `device.capacity["domain"]["name"]`; else None."""
    reads: set[tuple[str, ...]] = set()

    def text(j: int) -> str | None:
        return tokens[j].text if j < len(tokens) else None

    for i, token in enumerate(tokens):
        if token.kind != "id" or token.text != "device" or (i > 0 and tokens[i - 1].text == "."):
            continue
        if text(i + 1) != ".":
            return None
        if text(i + 2) == "driver":
            reads.add(("driver",))
            continue
        if (text(i + 2) not in ("attributes", "capacity") or text(i + 3) != "[" or i + 4 >= len(tokens)
                or tokens[i + 4].value is None or text(i + 5) != "]"):
            return None
        domain = tokens[i + 4].value
        if text(i + 6) == "." and i + 7 < len(tokens) and tokens[i + 7].kind == "id" and text(i + 8) != "(":
            name = tokens[i + 7].text
        elif text(i + 6) == "[" and i + 7 < len(tokens) and tokens[i + 7].value is not None and text(i + 8) == "]":
            name = tokens[i + 7].value
        else:
            return None
        reads.add((tokens[i + 2].text, domain, name))
    return tuple(sorted(reads))


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
    cost = 0  # worst case, for refusing
    fixed = 0  # the part that does not depend on the device
    device_body = 0  # x the device's entry count at evaluation
    for m in macros:
        receiver_end = m - 3  # tokens: <receiver> . name (
        if receiver_end < 0:
            continue
        start = _receiver_start(tokens, opener, receiver_end)
        if any(start <= other < m - 2 for other in macros):
            return _Scan(refusal=f"the comprehension macro {tokens[m - 1].text}() is applied to the result of "
                                 "another macro; chained macros can make the work grow without bound")
        iterations = MAX_LIST
        on_device = tokens[start].text == "device"  # one of the device's maps: at most 32 entries
        if on_device:
            iterations = MAX_ATTRIBUTES_AND_CAPACITIES
        elif tokens[start].text == "[" and closer.get(start) == receiver_end and (start == 0 or tokens[start - 1].kind
                                                                                 not in ("id", "close", "str", "num")):
            depth = 0
            elements = 0 if receiver_end == start + 1 else 1
            for t in tokens[start + 1:receiver_end]:
                depth += t.kind == "open"
                depth -= t.kind == "close"
                elements += depth == 0 and t.text == ","
            iterations = elements
        end = closer.get(m, len(tokens))
        variable = tokens[m + 1].text if m + 1 < end and tokens[m + 1].kind == "id" else None
        uses = sum(1 for j in range(m + 2, end) if tokens[j].kind == "id" and tokens[j].text == variable
                   and tokens[j - 1].text != ".")
        if uses > MAX_VARIABLE_USES:
            # x + x + ... on a long element copies it quadratically: the one way a body grows its value.
            return _Scan(refusal=f"the comprehension macro {tokens[m - 1].text}() uses its variable {variable} "
                                 f"{uses} times, more than {MAX_VARIABLE_USES}")
        body = end - m - 1
        cost += iterations * max(body, 1)
        if on_device:
            device_body += max(body, 1)
        else:
            fixed += iterations * max(body, 1)
        if cost > MAX_ESTIMATED_COST:
            return _Scan(refusal=f"the comprehension macros' estimated work ({cost:,} steps) is over "
                                 f"{MAX_ESTIMATED_COST:,} (CELSelectorExpressionMaxCost)")
    return _Scan(refusal=None, domains=frozenset(domains), work=len(tokens) + MACRO_WEIGHT * fixed,
                 device_work=MACRO_WEIGHT * device_body, reads=_reads(tokens))


# --- evaluation ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Compiled:
    program: Any  # cel.Program
    domains: frozenset[str]
    work: int
    device_work: int
    reads: tuple[tuple[str, ...], ...] | None
    functions: dict[str, Callable[..., Any]]


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
        return " ".join(m.group("msg").split())
    m = _FUNCTION_ERROR.search(text)
    if m:
        return " ".join(f"{m.group('name')}: {m.group('msg')}".split())
    return " ".join(text.split(". ", 1)[0].split())  # the library's first sentence; its hints follow


_MISSING = object()  # a name the device lacks, in a projection key


def _project(reads: tuple[tuple[str, ...], ...], device: Device) -> tuple:
    """The part of the device an expression reads, hashable: the (expression, projection) cache key."""
    out: list[object] = []
    for read in reads:
        if read[0] == "driver":
            out.append(device.driver)
        else:
            maps = device.attributes if read[0] == "attributes" else device.capacity
            value = maps.get(read[1], {}).get(read[2], _MISSING)
            out.append((type(value), value))  # bool True and int 1 are different keys
    return tuple(out)


def _cel_value(value: object) -> object:
    if isinstance(value, Version):
        return {_SEMVER_KEY: _semver_text(value.text)}
    if isinstance(value, Quantity):
        return _quantity(_quantity_value(value.text))
    return value


def _cel_device(device: Device, reads: tuple[tuple[str, ...], ...] | None, domains: frozenset[str]) -> dict:
    """The `device` variable as compile.go DeviceMatches builds it; with `reads`, only what the expression
    reads (nothing else can change its result)."""
    attributes: dict[str, dict[str, Any]] = {}
    capacity: dict[str, dict[str, Any]] = {}
    variable: dict[str, Any] = {"attributes": attributes, "capacity": capacity}
    if reads is None:
        variable["driver"] = device.driver
        for domain, names in device.attributes.items():
            attributes[domain] = {name: _cel_value(value) for name, value in names.items()}
        for domain, names in device.capacity.items():
            capacity[domain] = {name: _cel_value(value) for name, value in names.items()}
    else:
        for read in reads:
            if read[0] == "driver":
                variable["driver"] = device.driver
                continue
            kind, domain, name = read
            source = device.attributes if kind == "attributes" else device.capacity
            target = (attributes if kind == "attributes" else capacity).setdefault(domain, {})
            value = source.get(domain, {}).get(name, _MISSING)
            if value is not _MISSING:
                target[name] = _cel_value(value)
    # newStringInterfaceMapWithDefault: a domain the device lacks reads as an empty map. The library's maps
    # cannot default, so the domains the expression names get explicit empty maps.
    for domain in domains:
        attributes.setdefault(domain, {})
        capacity.setdefault(domain, {})
    return variable


def _is_panic(exc: BaseException) -> bool:
    # A Rust panic reaches Python as pyo3's PanicException, a BaseException: a library bug, not a verdict.
    return type(exc).__name__ == "PanicException"


def _cel_type(value: object) -> str:
    if isinstance(value, dict):
        return "Quantity" if _QUANTITY_KEY in value else "Semver" if _SEMVER_KEY in value else "map"
    names = {str: "string", int: "int", float: "double", bytes: "bytes", list: "list", type(None): "null_type"}
    return names.get(type(value), type(value).__name__)


class Selectors:
    """Evaluates selectors for one bundle: compiles each distinct expression once and answers each
    (expression, what of the device it reads) pair once. Not thread-safe (one per analysis)."""

    def __init__(self, *, max_cached: int = 1_000_000, work_budget: int = WORK_BUDGET) -> None:
        self._max_cached = max_cached
        self._work_budget = work_budget
        self._work = 0
        self._compiled: dict[str, _Compiled | Unevaluable] = {}
        self._results: dict[tuple[str, tuple], Match | Unevaluable] = {}
        self._evaluations = 0
        self._hits = 0

    @property
    def stats(self) -> CacheStats:
        return CacheStats(compiles=len(self._compiled), evaluations=self._evaluations, hits=self._hits,
                          work=self._work)

    def compile(self, expression: str) -> _Compiled | Unevaluable:
        """The compiled program, or why it cannot be evaluated; cached per distinct expression."""
        if not isinstance(expression, str):  # bundles are untrusted: a list or a number is not an expression
            return Unevaluable(expression=repr(expression)[:200], why="a CEL expression is a string")
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
        try:
            scan = _scan(expression)
            if scan.refusal is not None:
                return Unevaluable(expression=expression, why=f"refused: {scan.refusal}")
            program = cel.compile(expression)
            functions = set(program.functions())
        except BaseException as exc:
            if not isinstance(exc, (ValueError, RuntimeError, RecursionError, MemoryError)) and not _is_panic(exc):
                raise
            first = str(exc).split("\n", 1)[0]
            detail = first.split("': ", 1)[1] if first.startswith("Failed to parse expression '") else first
            return Unevaluable(expression=expression, why=f"the CEL library cannot compile it: {detail[:300]}")
        if "bind" in functions:
            # ext.Bindings is in the DRA environment (compile.go); this library has no cel.bind macro.
            return Unevaluable(expression=expression, why="cel.bind is not supported by the CEL library")
        # Only the functions it calls: registering all of them costs more than the evaluation itself.
        used = {name: _FUNCTIONS[name] for name in sorted(functions) if name in _FUNCTIONS}
        return _Compiled(program=program, domains=scan.domains, work=scan.work, device_work=scan.device_work, reads=scan.reads, functions=used)

    def evaluate(self, expression: str, device: Device) -> Match | Unevaluable:
        """Does the device pass this selector? Unevaluable when the expression cannot be judged at all."""
        compiled = self.compile(expression)
        if isinstance(compiled, Unevaluable):
            return compiled
        if device.error is not None:
            return Match(matched=False, error=device.error)
        key = (expression, device.key if compiled.reads is None else _project(compiled.reads, device))
        found = self._results.get(key)
        if found is not None:
            self._hits += 1
            return found
        result = self._run(compiled, expression, device)
        if len(self._results) >= self._max_cached:
            self._results.clear()  # bounded memory on a hostile bundle; answers are recomputed, not wrong
        self._results[key] = result
        return result

    def _run(self, compiled: _Compiled, expression: str, device: Device) -> Match | Unevaluable:
        work = compiled.work + compiled.device_work * device.entries
        if self._work + work > self._work_budget:
            return Unevaluable(expression=expression, why=f"not evaluated: this bundle's CEL work budget "
                                                          f"({self._work_budget:,} units) is spent")
        self._evaluations += 1
        self._work += work
        try:
            context = cel.Context({"device": _cel_device(device, compiled.reads, compiled.domains)},
                                  compiled.functions)
            result = compiled.program.execute(context)
        except (KeyError, TypeError, ValueError, RuntimeError, ArithmeticError, IndexError) as exc:
            error = _runtime_error(exc)
            if error is None:
                detail = str(exc).split(". ", 1)[0]  # drop the library's spelling hint
                return Unevaluable(expression=expression, why=f"the CEL library cannot evaluate it: {detail}"[:400])
            return Match(matched=False, error=error)
        except (RecursionError, MemoryError) as exc:
            return Unevaluable(expression=expression, why=f"evaluation exceeded the library's limits: {exc}"[:400])
        except BaseException as exc:
            if not _is_panic(exc):
                raise
            return Unevaluable(expression=expression, why=f"the CEL library failed on it: {exc}"[:400])
        if type(result) is not bool:
            # compile.go DeviceMatches: the result must convert to bool.
            return Match(matched=False, error=f"CEL result of type {_cel_type(result)} could not be converted to bool")
        return Match(matched=result)
