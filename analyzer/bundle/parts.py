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
import functools
from typing import Callable

from analyzer.bundle import forked
from analyzer.bundle.engines import Compiled, SchemaSet, findings_of, violations
from analyzer.bundle.formats import ARRAY, LIST, OBJECT, Part
from analyzer.bundle.reading import Bundle, parse_json
from analyzer.bundle.sharing import Add, ItemSink
from analyzer.bundle.streaming import KeepAll, KeepIf, Progress, check_envelope, stream_list
from analyzer.errors import BundleError

# PyYAML holds about twenty times a file's size while it builds it: no namespace's file comes near this.
MAX_YAML_BYTES = 256 * 2**20


class _OnePart:
    """The caller's sink, seen by the streaming reader as a plain one: one namespace's file is never split between
    processes (stream_list forks only for a sink that can be split; read_kind shares whole files instead), so
    nothing is left pending."""

    def __init__(self, sink: ItemSink) -> None:
        self.sink = sink

    def add(self, path: str, item: dict) -> object:
        return self.sink.add(path, item)

    def add_invalid(self, path: str, item: object, violations: list) -> None:
        self.sink.add_invalid(path, item, violations)


def read_kind(bundle: Bundle, parts: tuple[Part, ...], *, kind: str, schemas: SchemaSet, sink: ItemSink, add: Add,
              strict: bool, unreadable: list[BundleError], progress: Callable[[str], Progress | None] | None,
              starts: list[tuple[int, str]] | None = None) -> int:
    """Every file of one kind into its sink; returns how many objects. A file that cannot be read is recorded in
    `unreadable` (raised under `strict`) and the kind's other files are still read. A large kind whose sink can be
    split (pods) is shared with a worker process, a file at a time: the later files are read there meanwhile.
    `starts` (a kept kind): each file's first item in the sink's numbering, and its shape (path_in_file)."""
    mine, child = _shared(bundle, parts, kind=kind, schemas=schemas, sink=sink)
    count = 0
    for part in mine:
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
    if child is None:
        return count
    result = child.result()
    if result is not None and sink.merge(result[0]):  # type: ignore[attr-defined]
        _summary, found, errors, theirs = result  # type: ignore[misc]
        for file, triples in found:
            add(file, triples)
        for file, message, path in errors:
            if strict:
                raise BundleError(file, message, path)
            unreadable.append(BundleError(file, message, path))
        return count + theirs
    rest = parts[len(mine):]  # the worker failed, or its part cannot be merged exactly: read here
    return count + read_kind(bundle, rest, kind=kind, schemas=schemas, sink=_OnePart(sink), add=add, strict=strict,
                             unreadable=unreadable, progress=progress)


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


SHARE_FROM = 16 * 2**20  # below this a worker costs more (fork, the summary's pickling) than it saves


def _shared(bundle: Bundle, parts: tuple[Part, ...], *, kind: str, schemas: SchemaSet, sink: ItemSink
            ) -> tuple[tuple[Part, ...], forked.Child | None]:
    """(the files this process reads, the worker reading the others or None). The cut is at half the bytes."""
    if not hasattr(sink, "part") or len(parts) < 2 or not forked.available():
        return parts, None
    sizes = [bundle.size(p.path) for p in parts]
    total = sum(sizes)
    if total < SHARE_FROM:
        return parts, None
    cut, seen = 0, 0
    while cut < len(parts) - 1 and seen + sizes[cut] <= total / 2:
        seen += sizes[cut]
        cut += 1
    cut = max(cut, 1)
    child = forked.start(functools.partial(_worker, bundle, parts[cut:], kind, schemas, sink))
    return (parts, None) if child is None else (parts[:cut], child)


def _worker(bundle: Bundle, parts: tuple[Part, ...], kind: str, schemas: SchemaSet, sink: ItemSink) -> tuple:
    """In the worker: the files into a fresh part of the sink; (its summary, the findings in order, the
    unreadable files, the object count), pickled back."""
    part = sink.part()  # type: ignore[attr-defined]
    found: list[tuple[str, list]] = []
    errors: list[tuple[str, str, str]] = []

    def add(file: str, triples: list) -> list:
        found.append((file, triples))
        return violations(file, triples)

    count = 0
    for p in parts:
        try:
            count += read_part(bundle, p, kind=kind, schemas=schemas, sink=part, add=add)
        except BundleError as exc:
            errors.append((exc.file, exc.message, exc.path))
    return part.summary(), found, errors, count


def read_part(bundle: Bundle, part: Part, *, kind: str, schemas: SchemaSet, sink: ItemSink, add: Add) -> int:
    """Every object of one file into `sink`; returns how many. Raises BundleError naming the file."""
    envelope_check, item_check = schemas.split(kind)  # type: ignore[misc]
    if hasattr(sink, "file"):
        # The pods' sink names the file in its own findings and in each target's source: this file, not pods.json.
        sink.file = part.path  # type: ignore[attr-defined]
    if part.shape == LIST and not part.yaml and part.only_name is None:
        return stream_list(data=bundle.read_mapped(part.path), file=part.path, kind=kind, schemas=schemas,
                           sink=_OnePart(sink), add=add).count
    doc = _yaml(bundle, part.path) if part.yaml else parse_json(bundle.read_bytes(part.path), part.path)
    if part.shape == LIST or (part.shape == ARRAY and isinstance(doc, dict) and "items" in doc):
        if part.yaml:
            _bounded(doc if not isinstance(doc, dict) else {k: v for k, v in doc.items() if k != "items"},
                     part.path, "$")
        check_envelope(envelope_check, doc, part.path)
        return _visit(doc["items"], ("items",), part, item_check, sink, add)  # type: ignore[index]
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
