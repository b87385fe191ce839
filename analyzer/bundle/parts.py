"""A kind spread over many files of another collector's layout (bundle/formats.py), read into one sink.

Each file is read on its own, item by item, validated against the kind's item schema as our own files are:
a JSON List goes through the same streaming reader (stream_list), a bare JSON array, a YAML file or a single
object is parsed whole (per-namespace files are small) and visited item by item. YAML is parsed by the bounded
loader (bundle/safe_yaml.py) with its bound applied to each object on its own, so a 5,000-pod namespace reads
and one alias bomb in one custom resource is one finding, not a lost file. A file that cannot be read at all
is a BundleError naming it: the caller records it and reads the kind's other files.
"""

from __future__ import annotations

import bisect
from typing import Callable, Protocol, runtime_checkable

from analyzer.bundle.engines import Compiled, SchemaSet, findings_of
from analyzer.bundle.formats import ARRAY, LIST, OBJECT, Part
from analyzer.bundle.reading import Bundle, parse_json
from analyzer.bundle.streaming import Add, ItemSink, KeepAll, KeepIf, Progress, check_envelope, stream_list
from analyzer.errors import BundleError

# PyYAML holds about twenty times a file's size while it builds it: no namespace's file comes near this.
MAX_YAML_BYTES = 256 * 2**20


@runtime_checkable
class NamesFile(Protocol):
    """A sink that names the file its items came from (the pods' index: in its findings and each target's source)."""

    file: str


def read_kind(bundle: Bundle, parts: tuple[Part, ...], *, kind: str, schemas: SchemaSet, sink: ItemSink, add: Add,
              strict: bool, unreadable: list[BundleError], progress: Callable[[str], Progress | None] | None,
              starts: list[tuple[int, str]] | None = None) -> int:
    """Every file of one kind into its sink; returns how many objects. A file that cannot be read is recorded in
    `unreadable` (raised under `strict`) and the kind's other files are still read.
    `starts` (a kept kind): each file's first item in the sink's numbering, and its shape (path_in_file)."""
    count = 0
    for part in parts:
        if starts is not None and isinstance(sink, KeepAll):
            shape = "$.items" if part.shape == LIST or (part.shape == ARRAY and part.yaml) else part.shape
            starts.append((sink.seen if isinstance(sink, KeepIf) else len(sink.items), shape))
        tick = progress(part.path) if progress else None
        try:
            count += read_part(bundle, part, kind=kind, schemas=schemas, sink=sink, add=add)
        except BundleError as exc:
            if strict:
                raise
            unreadable.append(exc)
        if tick is not None:
            tick(1, 1)
    return count


def path_in_file(starts: tuple[tuple[int, str], ...], at: int) -> str:
    """Item `at` of a kind read from several files (read_kind's `starts`) as its path in its own file, which
    files_label names with the namespace as `*` (the object's key names the namespace)."""
    i = bisect.bisect_right([s for s, _ in starts], at) - 1
    first, shape = starts[max(i, 0)]
    return "$" if shape == OBJECT else f"$[{at - first}]" if shape == ARRAY else f"$.items[{at - first}]"


def files_label(parts: tuple[Part, ...]) -> str:
    """A kind's files named at once: the one file, or their path with what differs as `*`
    (`cluster-resources/pvcs/*.json`)."""
    if len(parts) == 1:
        return parts[0].path
    split = [p.path.split("/") for p in parts]
    if len({len(s) for s in split}) != 1:
        return f"{len(parts)} files"
    return "/".join(c[0] if len(set(c)) == 1 else "*" + (c[0][c[0].rfind("."):] if "." in c[0] else "")
                    for c in zip(*split))


def read_part(bundle: Bundle, part: Part, *, kind: str, schemas: SchemaSet, sink: ItemSink, add: Add) -> int:
    """Every object of one file into `sink`; returns how many. Raises BundleError naming the file."""
    envelope_check, item_check = schemas.list_checks(kind)
    if isinstance(sink, NamesFile):
        # The pods' sink names the file in its own findings and in each target's source: this file, not pods.json.
        sink.file = part.path
    if part.shape == LIST and not part.yaml and part.only_name is None:
        return stream_list(data=bundle.read_mapped(part.path), file=part.path, kind=kind, schemas=schemas,
                           sink=sink, add=add).count
    doc = _yaml(bundle, part.path) if part.yaml else parse_json(bundle.read_bytes(part.path), part.path)
    if part.shape == LIST or (part.shape == ARRAY and isinstance(doc, dict) and "items" in doc):
        if part.yaml:
            _bounded(doc if not isinstance(doc, dict) else {k: v for k, v in doc.items() if k != "items"},
                     part.path, "$")
        check_envelope(envelope_check, doc, part.path)
        assert isinstance(doc, dict)  # the envelope schema passed: an object with an `items` array
        return _visit(doc["items"], ("items",), part, item_check, sink, add)
    if part.shape == ARRAY:
        if not isinstance(doc, list):
            raise BundleError(part.path, f"expected an array of objects, found {type(doc).__name__}", "$")
        return _visit(doc, (), part, item_check, sink, add)
    if part.shape == OBJECT:
        return _visit([doc], None, part, item_check, sink, add)
    raise AssertionError(f"unknown shape {part.shape!r}")


def _visit(items: list, prefix: tuple | None, part: Part, item_check: Compiled, sink: ItemSink, add: Add) -> int:
    """Validate and hand over each item (prefix None: the file is the one object, path `$`)."""
    count = 0
    for i, item in enumerate(items):
        where = () if prefix is None else (*prefix, i)
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where)
        if part.only_name is not None and not _named(item, part.only_name):
            continue
        if part.yaml:
            problem = _unsafe(item)
            if problem is not None:
                add(part.path, [(path, "an object the bounded YAML reader accepts", problem)])
                continue
        items[i] = None
        if item_check.is_valid(item):
            sink.add(path, item)
        else:
            sink.add_invalid(path, item, add(part.path, findings_of(item_check, item, where)))
        count += 1
    return count


def _named(item: object, name: str) -> bool:
    meta = item.get("metadata") if isinstance(item, dict) else None
    return isinstance(meta, dict) and meta.get("name") == name


def _yaml(bundle: Bundle, rel: str) -> object:
    """One YAML document, parsed (aliases not yet counted: each object is bounded on its own by _visit)."""
    from analyzer.bundle.safe_yaml import NotYaml, UnsafeYaml, load_unchecked

    size = bundle.size(rel)
    if size > MAX_YAML_BYTES:
        raise BundleError(rel, f"is {size} bytes of YAML, more than gpu-triage parses ({MAX_YAML_BYTES})")
    data = bundle.read_bytes(rel)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundleError(rel, f"not UTF-8 text: byte {exc.start} cannot be decoded", "$") from None
    try:
        return load_unchecked(text)
    except NotYaml as exc:
        cut = "end of the stream" in str(exc) or "could not find expected" in str(exc)
        raise BundleError(rel, f"not YAML{' (truncated?)' if cut else ''}: {exc}", "$") from None
    except UnsafeYaml as exc:
        raise BundleError(rel, f"not a usable YAML document: {exc}", "$") from None


def _unsafe(node: object) -> str | None:
    from analyzer.bundle.safe_yaml import UnsafeYaml, check_tree

    try:
        check_tree(node)
    except UnsafeYaml as exc:
        return str(exc)
    return None


def _bounded(node: object, file: str, path: str) -> None:
    problem = _unsafe(node)
    if problem is not None:
        raise BundleError(file, f"not a usable YAML document: {problem}", path)


def raw_items(bundle: Bundle, parts: tuple[Part, ...]) -> tuple[list, list[str]]:
    """Every object of a kind's files, unvalidated, for replay (kubectl is shown what was collected), and a
    warning for each file that could not be read or object that is not safe."""
    items: list = []
    warnings: list[str] = []
    for part in parts:
        try:
            doc = _yaml(bundle, part.path) if part.yaml else parse_json(bundle.read_bytes(part.path), part.path)
        except BundleError as exc:
            warnings.append(str(exc))
            continue
        found = doc.get("items") if isinstance(doc, dict) and part.shape != OBJECT else doc
        found = [found] if part.shape == OBJECT else found
        if not isinstance(found, list):
            warnings.append(f"{part.path}: $: expected a List or an array of objects")
            continue
        for i, item in enumerate(found):
            if part.only_name is not None and not _named(item, part.only_name):
                continue
            problem = _unsafe(item) if part.yaml else None
            if problem is not None:
                warnings.append(f"{part.path}: item {i}: {problem}")
                continue
            items.append(item)
    return items, warnings
