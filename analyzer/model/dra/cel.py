"""CEL device selectors (DeviceClass and ResourceClaim request `selectors[].cel.expression`), as the scheduler
evaluates them (k8s.io/dynamic-resource-allocation/cel/compile.go, CompilationResult.DeviceMatches).

Library: `common-expression-language` 0.10 (module `cel`, Python bindings of the Rust cel-rust
interpreter), chosen over `cel-python` 0.5.0 (`celpy`, pure Python) after trying both:
- Kubernetes functions: both take Python callables and dispatch `x.f(a)` to `f(x, a)`. celpy can also
  carry custom Python objects; this library only plain values, so Quantity and Semver travel as one-key
  maps holding a canonical exact value (equal quantities are equal maps: `1Gi` == `1024Mi`).
- Limits on hostile input: neither has a runtime cost limit or interruption. This library's parser
  refuses deep nesting with an error (celpy raised RecursionError at 60 parentheses) and its evaluator
  survived 10,000-long operator chains. The work is bounded before compiling (`cel_limits.scan`), by capping
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

This module is the evaluator (Selectors) and its results; the devices it judges are in cel_devices.py,
the Kubernetes functions in cel_functions.py, the bounds on hostile expressions in cel_limits.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from analyzer.model.dra.cel_devices import Device, Quantity, Version
from analyzer.model.dra.cel_functions import (functions as cel_functions, NO_OVERLOAD, QUANTITY_KEY, SEMVER_KEY, cel_quantity,
                                              quantity_value, semver_text)
from analyzer.model.dra.cel_limits import WORK_BUDGET, is_panic, scan


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
            return NO_OVERLOAD
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
        return {SEMVER_KEY: semver_text(value.text)}
    if isinstance(value, Quantity):
        return cel_quantity(quantity_value(value.text))
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


def _cel_type(value: object) -> str:
    if isinstance(value, dict):
        return "Quantity" if QUANTITY_KEY in value else "Semver" if SEMVER_KEY in value else "map"
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
            scanned = scan(expression)
            if scanned.refusal is not None:
                return Unevaluable(expression=expression, why=f"refused: {scanned.refusal}")
            import cel  # on first use: see cel_functions.functions

            program = cel.compile(expression)
            functions = set(program.functions())
        except BaseException as exc:
            if not isinstance(exc, (ValueError, RuntimeError, RecursionError, MemoryError)) and not is_panic(exc):
                raise
            first = str(exc).split("\n", 1)[0]
            detail = first.split("': ", 1)[1] if first.startswith("Failed to parse expression '") else first
            return Unevaluable(expression=expression, why=f"the CEL library cannot compile it: {detail[:300]}")
        if "bind" in functions:
            # ext.Bindings is in the DRA environment (compile.go); this library has no cel.bind macro.
            return Unevaluable(expression=expression, why="cel.bind is not supported by the CEL library")
        # Only the functions it calls: registering all of them costs more than the evaluation itself.
        table = cel_functions()
        used = {name: table[name] for name in sorted(functions) if name in table}
        return _Compiled(program=program, domains=scanned.domains, work=scanned.work, device_work=scanned.device_work, reads=scanned.reads, functions=used)

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
            import cel

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
            if not is_panic(exc):
                raise
            return Unevaluable(expression=expression, why=f"the CEL library failed on it: {exc}"[:400])
        if type(result) is not bool:
            # compile.go DeviceMatches: the result must convert to bool.
            return Match(matched=False, error=f"CEL result of type {_cel_type(result)} could not be converted to bool")
        return Match(matched=result)
