#!/usr/bin/env python3
"""gpu-triage collector: write a bundle of kubectl outputs for offline triage.

Self-contained on purpose: Python 3.8+ standard library only, and kubectl.
Copy this one file to any machine that can reach the cluster and run it; no
install of gpu-triage is needed there. `gpu-triage collect` runs this same
file (analyzer/collector.py loads it), not a copy.

Read-only toward the cluster: the only kubectl verbs used are `get`,
`version`, `config current-context` (reads the local kubeconfig only) and,
for --manifest, `apply --dry-run=server`. Secrets and ConfigMaps are never
collected.

Contract: shared/spec/bundle.md; formats: schemas/manifest.schema.json and
schemas/attempt.schema.json.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time

COLLECTOR_NAME = "gpu-triage-collect"
COLLECTOR_VERSION = "0.1.0"
FORMAT = "gpu-triage/bundle"
FORMAT_VERSION = 1

MARKER = "REDACTED-BY-GPU-TRIAGE"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Redaction rule names: the keys of manifest.redaction.counts and of every
# file entry's "redactions".
RULE_ENV = "env-value"
RULE_LAST_APPLIED = "last-applied-configuration"
RULES = [RULE_ENV, RULE_LAST_APPLIED]
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")

# (resource as kubectl names it, namespaced). The file is "<resource>.json".
KINDS = [
    ("pods", True),
    ("nodes", False),
    ("resourcequotas", True),
    ("runtimeclasses", False),
    ("events", True),
    ("replicasets", True),
    ("jobs", True),
    ("statefulsets", True),
    ("daemonsets", True),
    ("namespaces", False),
]
# Never, whatever the arguments: these hold credentials and configuration.
NEVER_COLLECTED = ("secrets", "secret", "configmaps", "configmap", "cm")
# A --manifest holding one of these is refused while redaction is on (YAML or
# JSON, any document of the file).
SECRET_KIND = re.compile(
    r"(^|[{,])\s*\"?kind\"?\s*:\s*[\"']?(Secret|ConfigMap)[\"']?\s*([,}]|$)",
    re.MULTILINE)

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_PARTIAL = 3

EPILOG = """\
what it writes:
  <output-dir>/<context>-<UTC time>/   e.g. dumps/prod-20261129T164658Z/
    manifest.json   what was collected, how, when, with sha256 and stderr
    pods.json nodes.json resourcequotas.json runtimeclasses.json events.json
    replicasets.json jobs.json statefulsets.json daemonsets.json
    namespaces.json version.json          (kubectl's own -o json output)
    attempts/NN-<name>.json               one per --manifest
  The directory appears under its final name only when complete.

redaction (on by default; --no-redact keeps everything):
  container env[].value and the annotation
  kubectl.kubernetes.io/last-applied-configuration become
  "REDACTED-BY-GPU-TRIAGE". Secrets and ConfigMaps are never collected.
  --manifest YAML files are stored as you wrote them (not redacted); a JSON
  Pod manifest is stored as its redacted object. A manifest holding a Secret
  or ConfigMap is refused unless --no-redact.

output:
  stderr: one progress line per kind; if some kind could not be read the
          last line starts with "partial:".
  stdout: with --archive the .tar.gz path, then (always the last line) the
          bundle directory.

exit status:
  0 complete, 3 partial (some kinds failed; the rest is written),
  2 usage error or kubectl cannot be run (nothing written),
  130/143 interrupted (temporary directory removed).

examples:
  python3 collect.py --context prod --archive
  python3 collect.py -n ml-team -n ml-batch --manifest my-pod.yaml
"""


class Interrupted(Exception):
    """A SIGINT/SIGTERM/SIGHUP arrived; the temporary directory is removed."""

    def __init__(self, signum: int) -> None:
        Exception.__init__(self, signum)
        self.signum = signum


class KubectlUnusable(Exception):
    """kubectl could not be started at all (not found, not executable)."""


class UsageError(Exception):
    pass


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def rfc3339(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def safe_name(text: str | None, fallback: str = "context") -> str:
    """A directory-name-safe rendering of a context or file name.

    Keeps [A-Za-z0-9._-]; every other run of characters (/, :, spaces,
    non-ASCII, ...) becomes "_". Never empty, never starting with "." or "-",
    at most 100 characters.
    """
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text or "")
    s = s[:100]
    if not s:
        s = fallback
    if s[0] in ".-":
        s = "_" + s[1:]
    return s


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def dumps_kubectl(obj: object) -> bytes:
    """Serialise like `kubectl -o json` does (4-space indent, final newline)."""
    return (json.dumps(obj, indent=4, ensure_ascii=False) + "\n").encode("utf-8")


# ---------------------------------------------------------------- redaction


def redact(node: object, counts: dict) -> None:
    """Replace, in place, every container env[].value and every
    last-applied-configuration annotation by MARKER; count per rule.

    Walks the whole document, so pods, pod templates of any owner, and pods
    nested anywhere else are covered. Keys and shape stay as they were.
    """
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for key in CONTAINER_LISTS:
                containers = cur.get(key)
                if not isinstance(containers, list):
                    continue
                for c in containers:
                    env = c.get("env") if isinstance(c, dict) else None
                    if not isinstance(env, list):
                        continue
                    for e in env:
                        if isinstance(e, dict) and "value" in e:
                            e["value"] = MARKER
                            counts[RULE_ENV] = counts.get(RULE_ENV, 0) + 1
            ann = cur.get("annotations")
            if isinstance(ann, dict) and LAST_APPLIED in ann:
                ann[LAST_APPLIED] = MARKER
                counts[RULE_LAST_APPLIED] = counts.get(RULE_LAST_APPLIED, 0) + 1
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)


# ---------------------------------------------------------------- kubectl


class Kubectl:
    """Runs kubectl with the context flags; only reading verbs are allowed."""

    def __init__(self, exe: str, global_flags: list) -> None:
        self.exe = exe
        self.global_flags = list(global_flags)

    @staticmethod
    def check_reading(args: list) -> None:
        # A guard against programming errors, not against the user.
        if args[:1] == ["get"]:
            resources = args[1].lower().split(",") if len(args) > 1 else []
            for res in resources:
                if res.split(".")[0] in NEVER_COLLECTED:
                    raise AssertionError("refusing to collect %s" % res)
            return
        if args[:1] == ["version"]:
            return
        if args[:2] == ["config", "current-context"]:
            return
        if args[:2] == ["apply", "--dry-run=server"] and not any(
            a.startswith("--dry-run") for a in args[2:]
        ):
            return
        raise AssertionError("refusing a non-reading kubectl command: %r" % (args,))

    def argv(self, args: list) -> list:
        self.check_reading(args)
        return [self.exe] + list(args) + self.global_flags

    def run(self, args: list, stdout_path: str | None = None) -> dict:
        """Run one command. stdout goes to stdout_path (exact bytes) when
        given, else is returned. Returns command, exitStatus, stdout, stderr,
        seconds."""
        argv = self.argv(args)
        t0 = time.monotonic()
        out_file = open(stdout_path, "wb") if stdout_path else None
        try:
            try:
                proc = subprocess.Popen(
                    argv,
                    stdout=out_file if out_file is not None else subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            except OSError as e:
                raise KubectlUnusable("cannot run %s: %s" % (self.exe, e))
            try:
                out, err = proc.communicate()
            except BaseException:
                # Interrupted: never leave kubectl running behind us.
                try:
                    proc.kill()
                except OSError:
                    pass
                try:
                    proc.wait(timeout=5)
                except Exception:
                    pass
                raise
        finally:
            if out_file is not None:
                out_file.close()
        return {
            "command": argv,
            "exitStatus": proc.returncode,
            "stdout": out,
            "stderr": decode(err),
            "seconds": round(time.monotonic() - t0, 3),
        }


# ---------------------------------------------------------------- collection


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


ENTRY_ORDER = ["path", "kind", "status", "command", "exitStatus", "stderr", "error",
               "bytes", "sha256", "items", "seconds", "redactions", "commands"]


def ordered(entry: dict) -> dict:
    """A file entry with its keys in a fixed, readable order."""
    out = dict((k, entry[k]) for k in ENTRY_ORDER if k in entry)
    out.update((k, v) for k, v in entry.items() if k not in out)
    return out


class Collector:
    def __init__(self, opts: argparse.Namespace, kubectl: Kubectl, tmpdir: str) -> None:
        self.opts = opts
        self.kubectl = kubectl
        self.tmpdir = tmpdir
        self.redacting = not opts.no_redact
        self.total_counts = dict((r, 0) for r in RULES)
        self.failed = []  # type: list
        self.client_version = None  # type: str | None
        self.server_version = None  # type: str | None

    def progress(self, text: str) -> None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def add_counts(self, counts: dict) -> None:
        for k, v in counts.items():
            self.total_counts[k] = self.total_counts.get(k, 0) + v

    def capture(self, args: list, name: str):
        """Run kubectl with stdout into a hidden part file of the temporary
        dir; returns (result, stdout bytes, part file path)."""
        part = os.path.join(self.tmpdir, ".%s.part" % name)
        r = self.kubectl.run(args, stdout_path=part)
        with open(part, "rb") as f:
            raw = f.read()
        return r, raw, part

    def finish_file(self, entry: dict, part: str, raw: bytes, obj: object,
                    merged: bool) -> None:
        """Redact obj if asked; the file gets kubectl's bytes exactly (the
        part file, renamed) unless redaction changed something or the List
        was merged, then obj re-serialised the way kubectl indents."""
        path = os.path.join(self.tmpdir, entry["path"])
        counts = dict((r, 0) for r in RULES) if self.redacting else {}
        if self.redacting:
            redact(obj, counts)
        if merged or sum(counts.values()) > 0:
            data = dumps_kubectl(obj)
            with open(path, "wb") as f:
                f.write(data)
            _remove(part)
        else:
            data = raw
            os.rename(part, path)
        entry["status"] = "ok"
        entry["bytes"] = len(data)
        entry["sha256"] = sha256_bytes(data)
        if self.redacting:
            entry["redactions"] = counts
            self.add_counts(counts)

    def fail(self, entry: dict, name: str, error: str | None = None) -> None:
        entry["status"] = "failed"
        if error:
            entry["error"] = error
        self.failed.append(name)
        msg = first_line(entry.get("stderr", "")) or error or "failed"
        self.progress("%s: FAILED (exit %s): %s" % (name, entry.get("exitStatus"), msg))

    def collect_version(self) -> dict:
        r, raw, part = self.capture(["version", "-o", "json"], "version")
        entry = {
            "path": "version.json",
            "kind": "version",
            "command": r["command"],
            "exitStatus": r["exitStatus"],
            "stderr": r["stderr"],
            "seconds": r["seconds"],
        }
        obj = None
        try:
            obj = json.loads(raw)
        except ValueError:
            pass
        if isinstance(obj, dict):
            # Even when the server is unreachable kubectl prints the client half.
            cv = obj.get("clientVersion")
            sv = obj.get("serverVersion")
            if isinstance(cv, dict) and isinstance(cv.get("gitVersion"), str):
                self.client_version = cv["gitVersion"]
            if isinstance(sv, dict) and isinstance(sv.get("gitVersion"), str):
                self.server_version = sv["gitVersion"]
        if r["exitStatus"] != 0 or not isinstance(obj, dict):
            _remove(part)
            self.fail(entry, "version",
                      None if r["exitStatus"] != 0 else "stdout is not a JSON object")
            return entry
        entry["items"] = None
        entry["status"] = "ok"
        entry["bytes"] = len(raw)
        entry["sha256"] = sha256_bytes(raw)  # never redacted: nothing secret in it
        os.rename(part, os.path.join(self.tmpdir, entry["path"]))
        self.progress("version: client %s, server %s, %d bytes, %.2f s" % (
            self.client_version, self.server_version, len(raw), r["seconds"]))
        return entry

    def collect_kind(self, resource: str, namespaced: bool) -> dict:
        namespaces = self.opts.namespaces if namespaced else None
        t0 = time.monotonic()
        entry = {"path": resource + ".json", "kind": resource}  # type: dict
        if not namespaces:
            args = ["get", resource] + (["-A"] if namespaced else []) + ["-o", "json"]
            r, raw, part = self.capture(args, resource)
            entry["command"] = r["command"]
            entry["exitStatus"] = r["exitStatus"]
            entry["stderr"] = r["stderr"]
            entry["seconds"] = round(time.monotonic() - t0, 3)
            obj, error = self.parse_list(r["exitStatus"], raw)
            if obj is None:
                _remove(part)
                self.fail(entry, resource, error)
                return entry
            entry["items"] = len(obj["items"])
            self.finish_file(entry, part, raw, obj, merged=False)
        else:
            # One `get -n NS` per namespace, items merged into one List.
            runs = []
            items = []  # type: list
            first_obj = None
            error = None
            bad = None
            for ns in namespaces:
                r, raw, part = self.capture(["get", resource, "-n", ns, "-o", "json"], resource)
                runs.append({"command": r["command"], "exitStatus": r["exitStatus"],
                             "stderr": r["stderr"], "seconds": r["seconds"]})
                obj, err = self.parse_list(r["exitStatus"], raw)
                if obj is None:
                    _remove(part)
                    if bad is None:
                        bad, error = runs[-1], err
                    continue
                if first_obj is None:
                    first_obj = obj
                items.extend(obj["items"])
                if len(namespaces) > 1:
                    _remove(part)
            first = bad if bad is not None else runs[0]
            entry["command"] = first["command"]
            entry["exitStatus"] = first["exitStatus"]
            entry["stderr"] = "".join(x["stderr"] for x in runs)
            entry["commands"] = runs
            entry["seconds"] = round(time.monotonic() - t0, 3)
            if bad is not None:
                self.fail(entry, resource, error)
                return entry
            entry["items"] = len(items)
            if len(runs) == 1:
                # A single namespace: kubectl's own output, as for -A.
                self.finish_file(entry, part, raw, first_obj, merged=False)
            else:
                merged = {
                    "apiVersion": (first_obj or {}).get("apiVersion", "v1"),
                    "items": items,
                    "kind": "List",
                    "metadata": {"resourceVersion": ""},
                }
                self.finish_file(entry, "", b"", merged, merged=True)
        red = ""
        if entry.get("redactions") and sum(entry["redactions"].values()):
            red = ", " + ", ".join("%d %s redacted" % (v, k)
                                   for k, v in sorted(entry["redactions"].items()) if v)
        self.progress("%s: %d items, %d bytes, %.2f s%s" % (
            resource, entry["items"], entry["bytes"], entry["seconds"], red))
        return entry

    @staticmethod
    def parse_list(exit_status: int | None, raw: bytes):
        """(List object, None) or (None, reason for failure or None)."""
        if exit_status != 0:
            return None, None
        try:
            obj = json.loads(raw)
        except ValueError as e:
            return None, "stdout is not JSON: %s" % e
        if not isinstance(obj, dict) or not isinstance(obj.get("items"), list):
            return None, "stdout is not a Kubernetes List with items"
        return obj, None

    def collect_attempt(self, index: int, source: str) -> dict:
        base = os.path.basename(source.rstrip("/")) or "manifest"
        stem = re.sub(r"\.(ya?ml|json)$", "", base, flags=re.IGNORECASE) or base
        rel = "attempts/%02d-%s.json" % (index, safe_name(stem, "manifest"))
        path = os.path.join(self.tmpdir, rel)
        with open(source, "rb") as f:
            source_bytes = f.read()
        source_text = decode(source_bytes)
        # A leading "-" would read as a flag to kubectl.
        target = source if not source.startswith("-") else os.path.join(".", source)
        t0 = time.monotonic()
        r = self.kubectl.run(["apply", "--dry-run=server", "-f", target])
        attempt = {
            "apiVersion": "gpu-triage/v1",
            "kind": "Attempt",
            "source": source,
        }  # type: dict
        counts = dict((rr, 0) for rr in RULES) if self.redacting else {}
        obj = None
        try:
            obj = json.loads(source_text)
        except ValueError:
            obj = None
        include_text = True
        if isinstance(obj, dict) and obj.get("kind") == "Pod":
            if self.redacting:
                redact(obj, counts)
                # The JSON text holds the very values just redacted: keep
                # only the redacted object.
                include_text = sum(counts.values()) == 0
            attempt["object"] = obj
        if include_text:
            attempt["sourceText"] = source_text
        attempt["answer"] = {
            "command": r["command"],
            "exitStatus": r["exitStatus"],
            "stdout": decode(r["stdout"]),
            "stderr": r["stderr"],
        }
        data = dumps_kubectl(attempt)
        with open(path, "wb") as f:
            f.write(data)
        entry = {
            "path": rel,
            "kind": "Attempt",
            "status": "ok",
            "command": r["command"],
            "exitStatus": r["exitStatus"],
            "stderr": r["stderr"],
            "bytes": len(data),
            "sha256": sha256_bytes(data),
            "items": None,
            "seconds": round(time.monotonic() - t0, 3),
        }  # type: dict
        if self.redacting:
            entry["redactions"] = counts
            self.add_counts(counts)
        self.progress("attempt %s: server dry run exit %s%s" % (
            source, r["exitStatus"],
            (": " + first_line(r["stderr"])) if r["exitStatus"] else ""))
        return entry


# ---------------------------------------------------------------- cli


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description=("Collect a gpu-triage bundle: read-only kubectl outputs (pods, nodes,\n"
                     "quotas, runtime classes, events, owners, namespaces, version) for\n"
                     "offline analysis with `gpu-triage analyze`. Needs only kubectl and\n"
                     "Python 3.8+; reads the cluster, never changes it."),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--context", help="kubeconfig context (default: kubectl's current context)")
    p.add_argument("--kubeconfig", help="kubeconfig file (default: kubectl's own default)")
    p.add_argument("--request-timeout", default="30s", metavar="DURATION",
                   help="passed to every kubectl call (default: %(default)s)")
    p.add_argument("-n", "--namespace", dest="namespaces", action="append", default=None,
                   metavar="NS",
                   help="narrow the namespaced kinds to NS (repeatable; default: all namespaces)")
    p.add_argument("--output-dir", default="dumps", metavar="DIR",
                   help="where the bundle directory is created (default: ./dumps)")
    p.add_argument("--manifest", action="append", default=[], metavar="FILE",
                   help=("a manifest you tried to apply: stored with the API server's "
                         "answer to `kubectl apply --dry-run=server -f FILE` (repeatable)"))
    p.add_argument("--archive", action="store_true",
                   help="also write <bundle>.tar.gz next to the bundle directory")
    p.add_argument("--no-redact", action="store_true",
                   help="keep env values and last-applied-configuration annotations")
    p.add_argument("--kubectl", default="kubectl", metavar="PATH",
                   help="kubectl executable (default: kubectl on PATH)")
    return p


def parse_args(argv: list, prog: str | None) -> argparse.Namespace:
    parser = build_parser(prog)
    opts = parser.parse_args(argv)
    if opts.namespaces is not None:
        seen = []  # type: list
        for ns in opts.namespaces:
            if not ns or ns.startswith("-"):
                parser.error("-n needs a namespace name, got %r" % ns)
            if ns not in seen:
                seen.append(ns)
        opts.namespaces = seen
    for f in opts.manifest:
        if not os.path.isfile(f):
            parser.error("--manifest %s: no such file" % f)
        try:
            with open(f, "rb") as fh:
                text = decode(fh.read())
        except OSError as e:
            parser.error("--manifest %s: %s" % (f, e))
        if not opts.no_redact and SECRET_KIND.search(text):
            parser.error("--manifest %s holds a Secret or ConfigMap, which would be "
                         "stored as written: take it out of the file (or use "
                         "--no-redact)" % f)
    if opts.context is not None and not opts.context:
        parser.error("--context must not be empty")
    return opts


def _remove(path: str | None) -> None:
    if not path:
        return
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)
    except OSError:
        pass


def _tar_filter(info: tarfile.TarInfo):
    if not (info.isfile() or info.isdir()):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def write_archive(out_dir: str, name: str, state: dict) -> str:
    final = os.path.join(out_dir, name + ".tar.gz")
    tmp = os.path.join(out_dir, ".%s.tar.gz.partial-%d" % (name, os.getpid()))
    state["tmp_archive"] = tmp
    with open(tmp, "wb") as raw:
        # The gzip header names "<name>.tar", not the temporary file.
        with gzip.GzipFile(filename=name + ".tar", mode="wb", fileobj=raw) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                tar.add(os.path.join(out_dir, name), arcname=name, recursive=True,
                        filter=_tar_filter)
    os.rename(tmp, final)
    state["tmp_archive"] = None
    return final


def pick_final_name(out_dir: str, base: str) -> str:
    name = base
    n = 1
    while os.path.lexists(os.path.join(out_dir, name)) or os.path.lexists(
            os.path.join(out_dir, name + ".tar.gz")):
        n += 1
        name = "%s-%d" % (base, n)
    return name


def run(opts: argparse.Namespace, state: dict) -> int:
    exe = opts.kubectl
    if shutil.which(exe) is None:
        raise KubectlUnusable("kubectl not found or not executable: %s" % exe)
    flags = ["--request-timeout=" + opts.request_timeout] if opts.request_timeout else []
    if opts.kubeconfig:
        flags.append("--kubeconfig=" + opts.kubeconfig)
    if opts.context:
        flags.append("--context=" + opts.context)
    kubectl = Kubectl(exe, flags)

    created = utc_now()
    context = opts.context
    if context is None:
        r = kubectl.run(["config", "current-context"])
        if r["exitStatus"] == 0:
            context = first_line(decode(r["stdout"])) or None
        else:
            sys.stderr.write("context: none (%s)\n" % first_line(r["stderr"]))

    out_dir = opts.output_dir
    base = "%s-%s" % (safe_name(context, "no-context"), created.strftime("%Y%m%dT%H%M%SZ"))
    if not os.path.isdir(out_dir):
        os.makedirs(out_dir)
        state["made_out_dir"] = out_dir
    tmpdir = os.path.join(out_dir, ".%s.partial-%d" % (base, os.getpid()))
    state["tmpdir"] = tmpdir
    os.mkdir(tmpdir)
    if opts.manifest:
        os.mkdir(os.path.join(tmpdir, "attempts"))

    sys.stderr.write("collecting context %s into %s\n" % (context, out_dir))
    c = Collector(opts, kubectl, tmpdir)
    files = [c.collect_version()]
    for resource, namespaced in KINDS:
        files.append(c.collect_kind(resource, namespaced))
    attempts = [c.collect_attempt(i + 1, f) for i, f in enumerate(opts.manifest)]

    redaction = {
        "enabled": c.redacting,
        "marker": MARKER,
        "rules": list(RULES) if c.redacting else [],
        "counts": c.total_counts if c.redacting else {},
    }  # type: dict
    if opts.manifest:
        redaction["note"] = (
            "attempts keep sourceText exactly as the user wrote it (YAML is not "
            "redacted); a JSON Pod manifest whose env values were redacted is "
            "stored as the redacted object without sourceText"
            if c.redacting else "attempts are stored as written")
    manifest = {
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "created": rfc3339(created),
        "completed": rfc3339(utc_now()),
        "collector": {"name": COLLECTOR_NAME, "version": COLLECTOR_VERSION},
        "kubectl": {"clientVersion": c.client_version, "serverVersion": c.server_version},
        "context": context,
        "namespaces": opts.namespaces,
        "redaction": redaction,
        "partial": bool(c.failed),
        "files": [ordered(e) for e in files],
        "attempts": [ordered(e) for e in attempts],
    }
    with open(os.path.join(tmpdir, "manifest.json"), "wb") as f:
        f.write((json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))

    name = pick_final_name(out_dir, base)
    final = os.path.join(out_dir, name)
    os.rename(tmpdir, final)
    state["tmpdir"] = None
    state["final"] = final

    if opts.archive:
        archive = write_archive(out_dir, name, state)
        sys.stdout.write(archive + "\n")
    sys.stdout.write(final + "\n")
    sys.stdout.flush()

    if c.failed:
        sys.stderr.write("bundle: %s\n" % final)
        sys.stderr.write("partial: %d kind(s) could not be read: %s "
                         "(see manifest.json)\n" % (len(c.failed), ", ".join(c.failed)))
        sys.stderr.flush()
        return EXIT_PARTIAL
    sys.stderr.write("complete: %s\n" % final)
    sys.stderr.flush()
    return EXIT_OK


def main(argv: list | None = None, prog: str | None = None) -> int:
    """Entry point for the script and for `gpu-triage collect`. Returns the
    exit status; never calls sys.exit itself (argparse's --help/usage exits
    are caught and returned)."""
    if argv is None:
        argv = sys.argv[1:]
    try:
        opts = parse_args(list(argv), prog)
    except SystemExit as e:
        code = e.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)

    state = {"tmpdir": None, "tmp_archive": None}  # type: dict

    def on_signal(signum, frame):
        raise Interrupted(signum)

    handled = [signal.SIGINT, signal.SIGTERM]
    if hasattr(signal, "SIGHUP"):
        handled.append(signal.SIGHUP)
    previous = {}
    for s in handled:
        try:
            previous[s] = signal.signal(s, on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    try:
        return run(opts, state)
    except Interrupted as e:
        for s in previous:
            try:
                signal.signal(s, signal.SIG_IGN)  # a second ^C must not stop the cleanup
            except (ValueError, OSError):
                pass
        _remove(state["tmpdir"])
        _remove(state["tmp_archive"])
        if state.get("final"):
            sys.stderr.write("interrupted: the bundle %s is complete; the archive was "
                             "not written\n" % state["final"])
        else:
            sys.stderr.write("interrupted: nothing written (temporary files removed)\n")
        return 128 + e.signum
    except KubectlUnusable as e:
        _remove(state["tmpdir"])
        if state.get("made_out_dir"):
            try:
                os.rmdir(state["made_out_dir"])  # only if still empty
            except OSError:
                pass
        sys.stderr.write("error: %s\n" % e)
        return EXIT_USAGE
    except BaseException:
        _remove(state["tmpdir"])
        _remove(state["tmp_archive"])
        raise
    finally:
        for s, h in previous.items():
            try:
                signal.signal(s, h)
            except (ValueError, OSError):
                pass


if __name__ == "__main__":
    sys.exit(main())
