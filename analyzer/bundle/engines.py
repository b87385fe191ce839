"""The schema engines behind one small interface, and the one formatter every finding goes through.

jsonschema-rs answers "valid?" fast; jsonschema is the reference engine (and the fallback). Whichever engine
finds a problem, `describe` turns (JSON path, keyword, keyword value, instance) into the same sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Protocol

import orjson

from analyzer.bundle import schemas as schema_files

# (path parts, keyword, keyword value, instance)
RawError = tuple[tuple, str, object, object]


@dataclass(frozen=True, order=True, kw_only=True)
class Violation:
    file: str
    path: str
    expected: str
    found: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: expected {self.expected}, found {self.found}"


def violations(file: str, triples: Iterable[tuple[str, str, str]]) -> list[Violation]:
    """Findings as the checks return them, (JSON path, expected, found), as Violations of one file."""
    return [Violation(file=file, path=p, expected=e, found=f) for p, e, f in triples]


# -- engines -------------------------------------------------------------------

class Compiled(Protocol):
    def is_valid(self, instance: object) -> bool: ...
    def errors(self, instance: object) -> Iterator[RawError]: ...


class RustCompiled:
    def __init__(self, schema: dict) -> None:
        import jsonschema_rs

        self.schema = schema
        self.v = jsonschema_rs.Draft202012Validator(schema)
        self.is_valid = self.v.is_valid

    def errors(self, instance: object) -> Iterator[RawError]:
        for e in self.v.iter_errors(instance):
            keyword = e.schema_path[-1] if e.schema_path else ""
            node: Any = self.schema  # the schema's own JSON: the error's path leads through it
            for part in e.schema_path:
                node = node[part]
            if keyword == "required":
                yield tuple(e.instance_path), keyword, [e.kind.property], e.instance
            else:
                yield tuple(e.instance_path), str(keyword), node, e.instance


class PyCompiled:
    def __init__(self, schema: dict) -> None:
        import jsonschema

        self.v = jsonschema.Draft202012Validator(schema)
        self.is_valid = self.v.is_valid

    def errors(self, instance: object) -> Iterator[RawError]:
        for e in self.v.iter_errors(instance):
            yield tuple(e.absolute_path), str(e.validator), e.validator_value, e.instance


def _default_engine() -> str:
    try:
        import jsonschema_rs  # noqa: F401
    except ImportError:
        return "jsonschema"
    return "jsonschema-rs"


ENGINES: dict[str, Callable[[dict], Compiled]] = {"jsonschema-rs": RustCompiled, "jsonschema": PyCompiled}


class SchemaSet:
    def __init__(self, engine: str | None = None) -> None:
        self.engine = engine or _default_engine()
        self._make = ENGINES[self.engine]
        self._wholes: dict[str, Compiled] = {}
        self._splits: dict[str, tuple[Compiled, Compiled] | None] = {}

    def whole(self, name: str) -> Compiled:
        if name not in self._wholes:
            self._wholes[name] = self._make(schema_files.load_schema(name))
        return self._wholes[name]

    def list_checks(self, name: str) -> tuple[Compiled, Compiled]:
        """(envelope, item) of a kind read as a List: every kind of the catalog has both."""
        found = self.split(name)
        if found is None:
            raise AssertionError(f"no List schema for {name!r}: the catalog names only kinds that have one")
        return found

    def split(self, name: str) -> tuple[Compiled, Compiled] | None:
        if name not in self._splits:
            parts = schema_files.envelope_and_item(name)
            self._splits[name] = None if parts is None else (self._make(parts[0]), self._make(parts[1]))
        return self._splits[name]


# -- formatting ------------------------------------------------------------------

def json_path(parts: Iterable[object], prefix: str = "$") -> str:
    out = [prefix]
    for p in parts:
        if isinstance(p, int):
            out.append(f"[{p}]")
        elif isinstance(p, str) and p.replace("_", "a").replace("-", "a").isalnum() and not p[:1].isdigit():
            out.append(f".{p}")
        else:
            out.append("[" + orjson.dumps(p).decode() + "]")
    return "".join(out)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number" if isinstance(value, float) else "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _show(value: object, limit: int = 60) -> str:
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _found(value: object) -> str:
    if value is None:
        return "null"  # not "null null"
    return f"{_type_name(value)} {_show(value)}"


def _is_quantity(subschemas: object) -> bool:
    return isinstance(subschemas, list) and any(isinstance(s, dict) and s.get("pattern", "").startswith("^\\+?([0-9]") for s in subschemas)


def describe(parts: tuple, keyword: str, value: object, instance: object) -> list[tuple[str, str, str]]:
    """(path, expected, found) for one engine finding; engine-neutral."""
    path = json_path(parts)
    if keyword == "required":
        missing = [k for k in (value or []) if isinstance(instance, dict) and k not in instance]
        return [(json_path(parts + (k,)), f"required key {k!r}", "nothing") for k in missing]
    if keyword == "type":
        types = value if isinstance(value, list) else [value]
        return [(path, " or ".join(map(str, types)), _found(instance))]
    if keyword == "enum":
        return [(path, "one of " + ", ".join(_show(v) for v in (value if isinstance(value, list) else [value])),
                 _found(instance))]
    if keyword == "const":
        return [(path, _show(value), _found(instance))]
    if keyword in ("oneOf", "anyOf") and _is_quantity(value):
        return [(path, "a Kubernetes quantity (a string such as 500m, 4, 1.5Gi, 1e3, or a non-negative number)", _found(instance))]
    if keyword == "pattern":
        return [(path, f"a string matching {value}", _found(instance))]
    if keyword == "minItems":
        return [(path, f"at least {value} item(s)", f"{len(instance) if isinstance(instance, list) else _found(instance)}")]
    if keyword == "minLength":
        return [(path, f"a string of at least {value} character(s)", _found(instance))]
    if keyword in ("minimum", "maximum"):
        return [(path, f"a number {'>=' if keyword == 'minimum' else '<='} {value}", _found(instance))]
    return [(path, f"to satisfy {keyword} {_show(value, 80)}", _found(instance))]



def findings_of(compiled: Compiled, instance: object, prefix: tuple) -> list[tuple[str, str, str]]:
    seen: dict[tuple[str, str, str], None] = {}
    for parts, keyword, value, inst in compiled.errors(instance):
        for f in describe(prefix + tuple(parts), keyword, value, inst):
            seen.setdefault(f, None)
    return sorted(seen)


