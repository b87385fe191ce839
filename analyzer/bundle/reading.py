"""Open a bundle safely: a directory, a bare directory, or a .tar.gz; never modify it.

A bundle is read-only evidence. Directories are read in place. Archives are
unpacked into a private temporary directory after every member has been
checked: no absolute names, no `..`, only regular files and directories (no
symlinks, hardlinks, devices or FIFOs), bounded member count and unpacked size.
Symlinks inside a bundle directory that lead outside it are refused too.
"""

from __future__ import annotations

import gc
import mmap
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Iterator

import orjson

from analyzer.bundle.archive import looks_like_tar, safe_extract
from analyzer.bundle.catalog import BY_NAME, MANIFEST, REQUIRED
from analyzer.bundle.formats import Format
from analyzer.bundle.item_errors import not_json
from analyzer.errors import BundleError


DEFAULT_MAX_UNPACKED = 32 * 2**30  # a 150,000-pod bundle is ~2 GB; 32 GiB is generous and bounded
DEFAULT_MAX_MEMBERS = 100_000
MAX_MANIFEST_BYTES = 64 * 2**20
# Without a manifest to bound it, no single file is read beyond this (kubectl's pods.json for
# 150,000 pods is ~1.7 GB).
MAX_FILE_BYTES = 16 * 2**30
# A manifest can say anything; a file far larger than it says is read only
# this far beyond the stated size before it is refused (no unbounded reads).
SIZE_SLACK = 1 << 20
MAP_FROM = 1 << 20  # files at least this large are mapped, not read (read_mapped)


@dataclass
class Bundle:
    """An opened bundle: `root` is a directory (a private unpacked copy for a .tar.gz)."""

    root: Path
    manifest: dict | None = None
    _tmp: str | None = None
    failed: dict[str, str] = field(default_factory=dict)  # kind -> collector's stderr
    # Another collector's archive (a troubleshoot support bundle, a must-gather): where its kinds are.
    format: Format | None = None
    manifest_error: BundleError | None = None  # manifest.json is there but unreadable: read as a bare bundle

    # -- files ---------------------------------------------------------------
    def entry_index(self, rel: str) -> tuple[str, int, dict] | None:
        """Where the manifest lists this file: (section, index, entry), for findings that name the path."""
        if not self.manifest:
            return None
        for section in ("files", "attempts"):
            for i, e in enumerate(self.manifest.get(section) or ()):
                if isinstance(e, dict) and e.get("path") == rel:
                    return section, i, e
        return None

    def path(self, rel: str) -> Path:
        """The file's path, refusing names that leave the bundle (`..`, absolute, symlinks out)."""
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or rel.strip() == "":
            raise BundleError(MANIFEST, f"refusing path {rel!r}: it leaves the bundle")
        p = self.root / pure
        try:
            resolved = p.resolve(strict=False)
        except (OSError, RuntimeError) as exc:
            raise BundleError(rel, f"cannot resolve: {exc}") from None
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise BundleError(rel, f"refusing: it is a link to {resolved}, outside the bundle")
        return p

    def has(self, rel: str) -> bool:
        try:
            return self.present(rel)
        except BundleError:
            return False

    def present(self, rel: str) -> bool:
        """Is the file there? False when absent; BundleError when it leaves the bundle or is not a regular file
        (a FIFO, a device, a socket, a directory: named, and never opened, so nothing can block)."""
        p = self.path(rel)
        try:
            st = p.stat()  # follows a link inside the bundle (path() refused one that leaves it); opens nothing
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise BundleError(rel, f"cannot read: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(rel, f"is {file_type(st.st_mode)}, not a regular file: refusing to read it")
        return True

    def _checked_size(self, rel: str) -> tuple[Path, int, int | None]:
        """(path, size, read limit) after the checks every read makes: a regular file, no larger than the
        manifest says (plus slack) or, without a manifest entry, than MAX_FILE_BYTES."""
        p = self.path(rel)
        try:
            st = p.stat()
        except FileNotFoundError:
            raise BundleError(rel, "missing") from None
        except OSError as exc:
            raise BundleError(rel, f"cannot read: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(rel, f"is {file_type(st.st_mode)}, not a regular file: refusing to read it")
        index = self.entry_index(rel)
        entry = index[2] if index else None
        limit = None
        if entry and isinstance(entry.get("bytes"), int):
            limit = entry["bytes"] + SIZE_SLACK
            if st.st_size > limit:
                raise BundleError(rel, f"is {st.st_size} bytes but the manifest says {entry['bytes']}: refusing to read it")
        if limit is None and st.st_size > MAX_FILE_BYTES:
            raise BundleError(rel, f"is {st.st_size} bytes, more than gpu-triage reads without a manifest ({MAX_FILE_BYTES})")
        return p, st.st_size, limit

    def size(self, rel: str) -> int:
        """The file's size in bytes; 0 when it is absent or cannot be read (the read itself reports why)."""
        try:
            return self._checked_size(rel)[1]
        except BundleError:
            return 0

    def read_bytes(self, rel: str) -> bytes:
        """The whole file, bounded by the manifest's size (plus slack) when it gives one."""
        p, size, limit = self._checked_size(rel)
        try:
            with _open_regular(p, rel) as fh:
                data = fh.read() if limit is None else fh.read(limit + 1)
        except OSError as exc:
            raise BundleError(rel, f"cannot read: {exc.strerror}") from None
        except MemoryError:
            raise BundleError(rel, f"not enough memory to read its {size} bytes") from None
        return data

    def read_mapped(self, rel: str) -> bytes | mmap.mmap:
        """The whole file, as read_bytes, but a large one is mapped rather than copied: its pages are the
        kernel's page cache, never copied into this process (1.6 GB of
        pods.json costs no read time and no private memory). Unmapped when the last slice of it is dropped.
        (A file truncated by someone else while it is mapped would fault: bundles are read-only evidence.)"""
        p, size, _ = self._checked_size(rel)
        if size < MAP_FROM:
            return self.read_bytes(rel)
        try:
            with _open_regular(p, rel) as fh:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return self.read_bytes(rel)  # a filesystem that cannot map: read it as before

    def attempts(self) -> list[str]:
        """Relative paths of stored attempts: those the manifest lists, else attempts/*.json."""
        if self.manifest and isinstance(self.manifest.get("attempts"), list):
            return [e["path"] for e in self.manifest["attempts"] if isinstance(e, dict) and isinstance(e.get("path"), str)]
        d = self.root / "attempts"
        if d.is_dir() and not d.is_symlink():
            return sorted(f"attempts/{p.name}" for p in d.iterdir() if p.suffix == ".json")
        return []

    # -- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_bundle(path: str | os.PathLike, *, max_unpacked: int = DEFAULT_MAX_UNPACKED,
                max_members: int = DEFAULT_MAX_MEMBERS) -> Bundle:
    """Open what the user named. Raises BundleError (exit 2) with a one-line reason."""
    label = str(path)
    p = Path(path)
    if not p.exists():
        raise BundleError(label, "no such file or directory")
    if p.is_dir():
        return _from_directory(p, label)
    if p.is_file():
        if looks_like_tar(p):
            tmp = tempfile.mkdtemp(prefix="gpu-triage-")
            try:
                root = _archive_root(safe_extract(p, Path(tmp), label, max_unpacked, max_members), label)
                bundle = _from_directory(root, label)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            bundle._tmp = tmp
            return bundle
        raise BundleError(label, "not a bundle: expected a directory (with manifest.json, or pods.json and nodes.json, or a "
                          "support bundle's or a must-gather's layout) or a .tar.gz of one")
    raise BundleError(label, "not a regular file or directory")


def _open_regular(p: Path, rel: str) -> BinaryIO:
    """Open for reading without blocking (O_NONBLOCK: a FIFO put in the file's place after it was checked
    opens at once) and check again that what was opened is a regular file."""
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise BundleError(rel, f"is {file_type(mode)}, not a regular file: refusing to read it")
    return os.fdopen(fd, "rb")


_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))


def file_type(mode: int) -> str:
    """What a file that is not a regular file is, as a person would name it."""
    return next((name for test, name in _TYPES if test(mode)), "not a regular file")


def parse_json(data: bytes | mmap.mmap, file: str) -> object:
    """orjson with a message a person can use; the BOM case is named explicitly."""
    if not isinstance(data, bytes):
        data = bytes(data)  # a mapped file (the whole-document path, for malformed or unusual files)
    if data.startswith(b"\xef\xbb\xbf"):
        raise BundleError(file, "not JSON: starts with a UTF-8 byte-order mark (BOM); save it without one", "$")
    # Only a short file can be all whitespace; strip() on a 1.6 GB file would copy it.
    if not data or (len(data) < 4096 and not data.strip()):
        raise BundleError(file, "empty file: expected kubectl's JSON output", "$")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        hint = " (truncated?)" if "EOF" in str(exc) or "end of" in str(exc).lower() else ""
        said = not_json(data, exc) if "UTF-8" in exc.msg else str(exc)  # the byte, not "surrogates not allowed"
        raise BundleError(file, f"not JSON{hint}: {said}", "$") from None
    except RecursionError:
        raise BundleError(file, "not JSON: nested too deeply", "$") from None
    except MemoryError:
        raise BundleError(file, f"not enough memory to parse its {len(data)} bytes", "$") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Parsing creates millions of small objects without cycles: the cyclic collector only slows it (about 3x
    on a 166 MB pods.json). Afterwards they are frozen out of its reach: re-enabling alone would make the next
    young-generation collection walk every one of them."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def _inside(root: Path, label: str) -> str:
    """'; did you mean …?' naming the bundles a directory holds (`analyze dumps` meant one of them)."""
    try:
        found = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink()
                       and any((p / f).is_file() for f in (MANIFEST, *(f"{k}.json" for k in REQUIRED))))
    except OSError:
        return ""
    if not found:
        return ""
    shown = " or ".join(f"{label.rstrip('/')}/{n}" for n in found[:5]) + (" or …" if len(found) > 5 else "")
    return f"; did you mean {shown}?"


def _from_directory(root: Path, label: str) -> Bundle:
    bundle = Bundle(root=root)
    if (root / MANIFEST).exists() or (root / MANIFEST).is_symlink():
        try:
            bundle.manifest = _read_manifest(bundle)
        except BundleError as exc:
            # The manifest only describes the files: without it the bundle is read as a bare one, and the
            # answers are the same (the error is reported with the others: exit 2).
            bundle.manifest_error = exc
    if bundle.manifest is None and not any((root / f"{k}.json").exists() for k in REQUIRED):
        if bundle.manifest_error is not None:
            raise bundle.manifest_error
        found = _foreign(root)
        if found is None:
            raise BundleError(label, "not a bundle: no manifest.json, pods.json or nodes.json in it, and not the layout "
                              "of a troubleshoot support bundle or a must-gather" + _inside(root, label))
        return Bundle(root=found[0], format=found[1])
    for e in (bundle.manifest or {}).get("files") or ():
        if isinstance(e, dict) and e.get("status") == "failed" and isinstance(e.get("path"), str):
            kind = e.get("kind") or e["path"].removesuffix(".json")
            bundle.failed[str(kind)] = str(e.get("stderr") or "").strip()
    return bundle


_JSON_TYPES = {list: "array", str: "string", type(None): "null", bool: "boolean", int: "integer", float: "number"}


def _read_manifest(bundle: Bundle) -> dict:
    data = bundle.read_bytes(MANIFEST)
    if len(data) > MAX_MANIFEST_BYTES:
        raise BundleError(MANIFEST, f"is {len(data)} bytes: not a manifest", "$")
    manifest = parse_json(data, MANIFEST)
    if not isinstance(manifest, dict):
        kind = _JSON_TYPES.get(type(manifest), type(manifest).__name__)
        raise BundleError(MANIFEST, f"expected object, found {kind}", "$")
    return manifest


def _foreign(directory: Path) -> tuple[Path, Format] | None:
    """Another collector's archive at or under `directory`, recognised by its layout (bundle/formats.py)."""
    from analyzer.bundle import mustgather, troubleshoot

    root = troubleshoot.root_of(directory)
    if root is not None:
        return root, troubleshoot.describe(root)
    root = mustgather.root_of(directory)
    if root is not None:
        return root, mustgather.describe(root)
    return None


def _archive_root(dest: Path, label: str) -> Path:
    # The bundle may be the archive's top level or its single top-level directory; another collector's
    # archive is found by its layout when the directory is opened.
    for candidate in (dest, *sorted(p for p in dest.iterdir() if p.is_dir())):
        if any((candidate / f).exists() for f in (MANIFEST, *(BY_NAME[k].file for k in REQUIRED))):
            return candidate
    if _foreign(dest) is not None:
        return dest
    raise BundleError(label, "archive holds no bundle (no manifest.json, pods.json or nodes.json, and not the layout of a "
                      "troubleshoot support bundle or a must-gather)")
