#!/usr/bin/env python3
"""gpu-triage collector: write a bundle of kubectl outputs for offline triage.

Self-contained on purpose: Python 3.8+ standard library only, and kubectl.
Copy this one file to any machine that can reach the cluster and run it; no
install of gpu-triage is needed there. `gpu-triage collect` runs this same
file (analyzer/collect_bridge.py loads it), not a copy.

Read-only toward the cluster: the only kubectl verbs used are `get`,
`version`, `config current-context` (reads the local kubeconfig only) and,
for --manifest, `apply --dry-run=server`. Secrets are never collected, and
no ConfigMap but cluster-autoscaler's status (kube-system/
cluster-autoscaler-status, by field selector).

Contract: shared/spec/bundle.md; formats: schemas/manifest.schema.json and
schemas/attempt.schema.json.
"""

from __future__ import annotations

import argparse
import codecs
import collections
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

# Every kind the collector reads, in collection order. One row per file:
#   file        the bundle file ("<name>.json"; name is also the manifest's "kind")
#   resource    what `kubectl get` is given: fully qualified for the
#               resource.k8s.io kinds, so a CRD with the same short name
#               cannot shadow them
#   group       the API group ("" for the core group)
#   namespaced  read with -A, or one `-n NS` per --namespace
#   required    the analysis cannot start without it: when every required
#               kind fails, the cluster cannot be read at all (exit 1)
#   only        (namespace, name): read that one object by field selector,
#               whatever -n says (cluster-autoscaler's status ConfigMap)
# tests/test_collect.py imports this table; keep it a plain list of tuples.
Kind = collections.namedtuple("Kind", "file resource group namespaced required only",
                              defaults=(None,))
DRA_GROUP = "resource.k8s.io"
STORAGE_GROUP = "storage.k8s.io"
KARPENTER_GROUP = "karpenter.sh"
ADMISSION_GROUP = "admissionregistration.k8s.io"
DISCOVERY_GROUP = "discovery.k8s.io"
PROVREQ_GROUP = "autoscaling.x-k8s.io"
# The one ConfigMap ever read: cluster-autoscaler's status (node group sizes,
# scale-up state; no secret). Any other ConfigMap is refused (NEVER_COLLECTED).
CA_STATUS = ("kube-system", "cluster-autoscaler-status")
KINDS = [
    Kind("pods.json", "pods", "", True, True),
    Kind("nodes.json", "nodes", "", False, True),
    Kind("resourcequotas.json", "resourcequotas", "", True, False),
    Kind("runtimeclasses.json", "runtimeclasses", "node.k8s.io", False, False),
    Kind("events.json", "events", "", True, False),
    Kind("replicasets.json", "replicasets", "apps", True, False),
    Kind("jobs.json", "jobs", "batch", True, False),
    Kind("statefulsets.json", "statefulsets", "apps", True, False),
    Kind("daemonsets.json", "daemonsets", "apps", True, False),
    Kind("namespaces.json", "namespaces", "", False, False),
    # Dynamic Resource Allocation (shared/spec/dra.md). Whatever version the
    # server prefers (v1 from 1.34, v1beta2 on 1.33, v1beta1 on 1.32) is kept.
    Kind("resourceclaims.json", "resourceclaims." + DRA_GROUP, DRA_GROUP, True, False),
    Kind("resourceclaimtemplates.json", "resourceclaimtemplates." + DRA_GROUP, DRA_GROUP,
         True, False),
    Kind("resourceslices.json", "resourceslices." + DRA_GROUP, DRA_GROUP, False, False),
    Kind("deviceclasses.json", "deviceclasses." + DRA_GROUP, DRA_GROUP, False, False),
    Kind("devicetaintrules.json", "devicetaintrules." + DRA_GROUP, DRA_GROUP, False, False),
    # Volumes (shared/spec/filters.md): claims, volumes, classes, CSI limits
    # and storage capacity; storage.k8s.io kinds qualified like the DRA ones.
    Kind("persistentvolumeclaims.json", "persistentvolumeclaims", "", True, False),
    Kind("persistentvolumes.json", "persistentvolumes", "", False, False),
    Kind("storageclasses.json", "storageclasses." + STORAGE_GROUP, STORAGE_GROUP, False, False),
    Kind("csinodes.json", "csinodes." + STORAGE_GROUP, STORAGE_GROUP, False, False),
    Kind("csidrivers.json", "csidrivers." + STORAGE_GROUP, STORAGE_GROUP, False, False),
    Kind("csistoragecapacities.json", "csistoragecapacities." + STORAGE_GROUP, STORAGE_GROUP,
         True, False),
    Kind("volumeattachments.json", "volumeattachments." + STORAGE_GROUP, STORAGE_GROUP, False, False),
    # Autoscalers (shared/spec/autoscalers.md): Karpenter and ProvisioningRequest
    # CRDs exist only where installed; then cluster-autoscaler's status.
    Kind("nodepools.karpenter.sh.json", "nodepools." + KARPENTER_GROUP, KARPENTER_GROUP,
         False, False),
    Kind("nodeclaims.karpenter.sh.json", "nodeclaims." + KARPENTER_GROUP, KARPENTER_GROUP,
         False, False),
    Kind("provisioningrequests.autoscaling.x-k8s.io.json",
         "provisioningrequests." + PROVREQ_GROUP, PROVREQ_GROUP, True, False),
    Kind("configmaps.cluster-autoscaler-status.json", "configmap", "", True, False, CA_STATUS),
    # Admission (shared/spec/admission.md): LimitRanges, webhooks and policies
    # that refuse a pod before it exists, and the EndpointSlices that say
    # whether a webhook's Service can be called (caBundles are public: kept).
    Kind("limitranges.json", "limitranges", "", True, False),
    Kind("validatingwebhookconfigurations.json",
         "validatingwebhookconfigurations." + ADMISSION_GROUP, ADMISSION_GROUP, False, False),
    Kind("mutatingwebhookconfigurations.json",
         "mutatingwebhookconfigurations." + ADMISSION_GROUP, ADMISSION_GROUP, False, False),
    Kind("validatingadmissionpolicies.json",
         "validatingadmissionpolicies." + ADMISSION_GROUP, ADMISSION_GROUP, False, False),
    Kind("validatingadmissionpolicybindings.json",
         "validatingadmissionpolicybindings." + ADMISSION_GROUP, ADMISSION_GROUP, False, False),
    Kind("endpointslices.json", "endpointslices." + DISCOVERY_GROUP, DISCOVERY_GROUP, True, False),
]
# Queueing systems (shared/spec/queues.md): custom resources, collected and
# stored by their qualified plural (<plural>.<group>.json); "not-served" where
# the CRD is not installed.
KUEUE_GROUP = "kueue.x-k8s.io"
VOLCANO_GROUP = "scheduling.volcano.sh"
VOLCANO_BATCH_GROUP = "batch.volcano.sh"
KAI_GROUP = "scheduling.run.ai"
for _plural, _group, _namespaced in (
        ("workloads", KUEUE_GROUP, True), ("localqueues", KUEUE_GROUP, True),
        ("clusterqueues", KUEUE_GROUP, False), ("resourceflavors", KUEUE_GROUP, False),
        ("cohorts", KUEUE_GROUP, False), ("admissionchecks", KUEUE_GROUP, False),
        ("topologies", KUEUE_GROUP, False),
        ("podgroups", VOLCANO_GROUP, True), ("queues", VOLCANO_GROUP, False),
        ("jobs", VOLCANO_BATCH_GROUP, True),
        ("queues", KAI_GROUP, False), ("podgroups", KAI_GROUP, True)):
    KINDS.append(Kind("%s.%s.json" % (_plural, _group), "%s.%s" % (_plural, _group), _group,
                      _namespaced, False))
# Groups an older (or differently configured) supported server may not serve
# at all (or a CRD not installed): their kinds are "not-served" there, which
# is not a failure.
MAY_BE_UNSERVED = (DRA_GROUP, KUEUE_GROUP, VOLCANO_GROUP, VOLCANO_BATCH_GROUP, KARPENTER_GROUP,
                   PROVREQ_GROUP, KAI_GROUP)
# kubectl's words for a resource type discovery does not know
# (cli-runtime pkg/resource/builder.go mappingFor: `the server doesn't have a
# resource type %q` with groupResource.Resource, i.e. the unqualified plural;
# printed by kubectl/pkg/cmd/util/helpers.go checkErr with "error: ").
NOT_SERVED = re.compile(r'^error: the server doesn\'t have a resource type "([^"]+)"')
# klog lines kubectl prints before its own error (memcache.go discovery
# retries): "E1130 16:20:01.123456   12345 memcache.go:265] ..."
KLOG_LINE = re.compile(r"^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ [^ \]]+\] ")

# Never, whatever the arguments: these hold credentials and configuration.
NEVER_COLLECTED = ("secrets", "secret", "configmaps", "configmap", "cm")
# A --manifest holding one of these is refused while redaction is on (YAML or
# JSON, any document of the file).
SECRET_KIND = re.compile(
    r"(^|[{,])\s*\"?kind\"?\s*:\s*[\"']?(Secret|ConfigMap)[\"']?\s*([,}]|$)",
    re.MULTILINE)

EXIT_OK = 0
EXIT_UNREACHABLE = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3
# --keep-failed: <output-dir>/<context>-<UTC time>.failed-manifest.json
FAILED_MANIFEST = ".failed-manifest.json"

EPILOG = """\
what it writes:
  <output-dir>/<context>-<UTC time>/   e.g. dumps/prod-20261129T164658Z/
    manifest.json   what was collected, how, when, with sha256 and stderr
    pods.json nodes.json resourcequotas.json runtimeclasses.json events.json
    replicasets.json jobs.json statefulsets.json daemonsets.json
    namespaces.json version.json          (kubectl's own -o json output)
    resourceclaims.json resourceclaimtemplates.json resourceslices.json
    deviceclasses.json devicetaintrules.json   (DRA, resource.k8s.io; a
                    cluster that does not serve them: "not-served" in the
                    manifest, no file, not a failure)
    persistentvolumeclaims.json persistentvolumes.json storageclasses.json
    csinodes.json csidrivers.json csistoragecapacities.json
    volumeattachments.json                (volumes, storage.k8s.io)
    workloads.kueue.x-k8s.io.json localqueues.kueue.x-k8s.io.json ...
    podgroups.scheduling.volcano.sh.json queues.scheduling.volcano.sh.json
    jobs.batch.volcano.sh.json queues.scheduling.run.ai.json
    podgroups.scheduling.run.ai.json   (queueing systems, by qualified name;
                    "not-served" where the CRD is not installed)
    nodepools.karpenter.sh.json nodeclaims.karpenter.sh.json
    provisioningrequests.autoscaling.x-k8s.io.json   (autoscalers; "not-served"
                    where not installed)
    configmaps.cluster-autoscaler-status.json   kube-system/cluster-autoscaler-
                    status only, by field selector (may be an empty List)
    limitranges.json validatingwebhookconfigurations.json
    mutatingwebhookconfigurations.json validatingadmissionpolicies.json
    validatingadmissionpolicybindings.json endpointslices.json   (admission)
    attempts/NN-<name>.json               one per --manifest
  The directory appears under its final name only when complete.

redaction (on by default; --no-redact keeps everything):
  container env[].value and the annotation
  kubectl.kubernetes.io/last-applied-configuration become
  "REDACTED-BY-GPU-TRIAGE". Secrets are never collected, nor any ConfigMap
  but kube-system/cluster-autoscaler-status.
  --manifest YAML files are stored as you wrote them (not redacted); a JSON
  Pod manifest is stored as its redacted object. A manifest holding a Secret
  or ConfigMap is refused unless --no-redact.

output:
  stderr: one progress line per kind; if some kind could not be read the
          last line starts with "partial:". If neither pods nor nodes can be
          read, the first line is "cannot read the cluster: <kubectl's
          error>" and no bundle is written.
  stdout: with --archive the .tar.gz path, then (always the last line) the
          bundle directory.

exit status:
  0 complete, 3 partial (some kinds failed; the rest is written),
  1 the cluster cannot be read (pods and nodes both failed: unreachable API
    server, no kubeconfig, no permission); nothing is written unless
    --keep-failed, which keeps <context>-<UTC time>.failed-manifest.json,
  2 usage error or kubectl cannot be run (nothing written),
  130/143 interrupted (temporary directory removed).

Examples:
  %(prog)s --context prod --archive
  %(prog)s -n ml-team -n ml-batch --manifest my-pod.yaml
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


# ---------------------------------------------------------------- streaming lists
#
# kubectl's stdout is spooled to a part file; a List is then walked one item
# at a time (json.JSONDecoder.raw_decode on a sliding window of the file), so
# memory holds one window plus one item, never the parsed document.

CHUNK = 1 << 20  # bytes read at a time
_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


class NotJSON(ValueError):
    """The part file is not one JSON document; the text says where, as json does."""


class NotAList(ValueError):
    """Valid JSON, but not a Kubernetes List with an items array."""


class ListReader:
    """Walks a JSON document from a file: the top-level members of a List in
    order, its items one at a time. Also hashes the bytes it reads, so a file
    read to the end needs no second read for its sha256."""

    def __init__(self, path: str, chunk: int = CHUNK) -> None:
        self.f = open(path, "rb")
        self.chunk = chunk
        # As json.loads(bytes) decodes: UTF-8, a BOM skipped, surrogates passed.
        self.text = codecs.getincrementaldecoder("utf-8-sig")("surrogatepass")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.sha = hashlib.sha256()
        self.nbytes = 0
        # Where buf starts in the whole text, for error messages like json's.
        self.base = 0
        self.base_line = 1
        self.base_col = 0  # characters since the last newline before buf

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> "ListReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self, at_least: int = 0) -> bool:
        """Drop what is consumed, append the next bytes; False at the end."""
        if self.eof:
            return False
        if self.pos:
            dropped = self.buf[:self.pos]
            newlines = dropped.count("\n")
            if newlines:
                self.base_line += newlines
                self.base_col = len(dropped) - dropped.rfind("\n") - 1
            else:
                self.base_col += len(dropped)
            self.base += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        data = self.f.read(max(self.chunk, at_least))
        try:
            if data:
                self.sha.update(data)
                self.nbytes += len(data)
                self.buf += self.text.decode(data)
            else:
                self.eof = True
                self.buf += self.text.decode(b"", True)
        except UnicodeDecodeError as e:
            raise NotJSON(str(e)) from None
        return True

    def error(self, msg: str, pos: int) -> NotJSON:
        line = self.base_line + self.buf.count("\n", 0, pos)
        nl = self.buf.rfind("\n", 0, pos)
        col = pos - nl if nl >= 0 else self.base_col + pos + 1
        return NotJSON("%s: line %d column %d (char %d)" % (msg, line, col, self.base + pos))

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end)."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(buf) or not self._fill():
                return buf[pos] if pos < len(buf) else ""

    def expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            raise self.error("Expecting %s" % what, self.pos)
        self.pos += 1
        return c

    def value(self) -> object:
        """Decode the JSON value at the current position."""
        self.peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                # Cut off by the window's end (an error there, or a string
                # not closed yet): read more and try again. An error well
                # inside the window is the text's own.
                cut = (len(self.buf) - e.pos < 65536
                       or e.msg.startswith("Unterminated string"))
                if cut and self._fill(len(self.buf) - self.pos):
                    continue
                raise self.error(e.msg, e.pos) from None
            # A value close to the window's end may go on ("1e" of "1e+300").
            if len(self.buf) - end < 64 and self._fill(len(self.buf) - self.pos):
                continue
            self.pos = end
            return obj

    def events(self):
        """("member", key, value) for every top-level member but the items
        array, ("items", key, None) where the items array starts, then
        ("item", index, item) for each item and ("end", key, count). Raises
        NotJSON or NotAList (the latter only once the whole text is read)."""
        if self.peek() != "{":
            self.value()
            if self.peek():
                raise self.error("Extra data", self.pos)
            raise NotAList("stdout is not a Kubernetes List with items")
        self.pos += 1
        items = None
        bad_items = False
        if self.peek() == "}":
            self.pos += 1
        else:
            while True:
                if self.peek() != '"':
                    raise self.error("Expecting property name enclosed in double quotes", self.pos)
                key = self.value()
                self.expect(":", "':' delimiter")
                if key == "items" and self.peek() == "[":
                    if items is not None:
                        # json.loads would keep only the last; a stream cannot.
                        bad_items = True
                    items = 0
                    self.pos += 1
                    yield ("items", key, None)
                    if self.peek() == "]":
                        self.pos += 1
                    else:
                        while True:
                            yield ("item", items, self.value())
                            items += 1
                            if self.expect(",]", "',' delimiter") == "]":
                                break
                    yield ("end", key, items)
                else:
                    value = self.value()
                    if key == "items":
                        bad_items = True
                    yield ("member", key, value)
                if self.expect(",}", "',' delimiter") == "}":
                    break
        if self.peek():
            raise self.error("Extra data", self.pos)
        if items is None or bad_items:
            raise NotAList("stdout is not a Kubernetes List with items")


def _indented(obj: object, depth: int) -> str:
    """json.dumps(obj, indent=4) as it appears `depth` levels down."""
    text = json.dumps(obj, indent=4, ensure_ascii=False)
    return text.replace("\n", "\n" + " " * (4 * depth)) if depth else text


class ListWriter:
    """Writes a List member by member, item by item, byte for byte as
    dumps_kubectl (json.dumps indent=4, ensure_ascii=False, final newline)
    would write the whole document; hashes and counts what it writes."""

    def __init__(self, f) -> None:
        self.f = f  # a binary file, closed by the caller
        self.sha = hashlib.sha256()
        self.nbytes = 0
        self.members = 0
        self.items = 0
        self.write("{")

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.sha.update(data)
        self.nbytes += len(data)
        self.f.write(data)

    def key(self, key: str) -> None:
        self.write("%s\n    %s: " % ("," if self.members else "",
                                      json.dumps(key, ensure_ascii=False)))
        self.members += 1

    def member(self, key: str, value: object) -> None:
        self.key(key)
        self.write(_indented(value, 1))

    def begin_items(self, key: str) -> None:
        self.key(key)
        self.items = 0

    def item(self, value: object) -> None:
        self.write("%s\n        %s" % ("," if self.items else "[", _indented(value, 2)))
        self.items += 1

    def end_items(self) -> None:
        self.write("\n    ]" if self.items else "[]")

    def finish(self) -> None:
        self.write("\n}\n" if self.members else "}\n")


# ---------------------------------------------------------------- kubectl


def only_args(only) -> list:
    """`-n NS --field-selector metadata.name=NAME`: one object, by name."""
    return ["-n", only[0], "--field-selector", "metadata.name=" + only[1]]


def is_ca_status(args: list) -> bool:
    """Exactly the one ConfigMap read: `get configmap` of cluster-autoscaler's
    status in kube-system, selected by name, and nothing else."""
    return args == ["get", "configmap"] + only_args(CA_STATUS) + ["-o", "json"]


class Kubectl:
    """Runs kubectl with the context flags; only reading verbs are allowed."""

    def __init__(self, exe: str, global_flags: list) -> None:
        self.exe = exe
        self.global_flags = list(global_flags)

    @staticmethod
    def check_reading(args: list) -> None:
        # A guard against programming errors, not against the user.
        if args[:1] == ["get"]:
            if is_ca_status(args):
                return
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
                raise KubectlUnusable("cannot run %s: %s" % (self.exe, e)) from None
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


class Progress:
    """Progress lines on stderr. Held back until the cluster is known to be
    readable, so that when it is not, "cannot read the cluster: ..." can be
    the first line."""

    def __init__(self) -> None:
        self.held = []  # type: list
        self.holding = True

    def line(self, text: str) -> None:
        if self.holding:
            self.held.append(text)
            return
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def release(self) -> None:
        self.holding = False
        held, self.held = self.held, []
        for text in held:
            self.line(text)


def kubectl_error(stderr: str) -> str:
    """kubectl's own error line: the last line that is not a klog line
    (kubectl prints its message last, after any memcache.go retries)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    own = [line for line in lines if not KLOG_LINE.match(line)]
    return own[-1] if own else (lines[-1] if lines else "")


def not_served(kind: Kind, exit_status: int | None, stderr: str) -> bool:
    """kubectl said the server has no such resource type, for a kind whose
    group a supported server may lack."""
    if kind.group not in MAY_BE_UNSERVED or exit_status != 1:
        return False
    short = kind.resource.split(".")[0]
    return any(m is not None and m.group(1) == short
               for m in (NOT_SERVED.match(line.strip()) for line in stderr.splitlines()))


class Collector:
    def __init__(self, opts: argparse.Namespace, kubectl: Kubectl, tmpdir: str,
                 progress: Progress) -> None:
        self.opts = opts
        self.kubectl = kubectl
        self.tmpdir = tmpdir
        self.redacting = not opts.no_redact
        self.total_counts = dict((r, 0) for r in RULES)
        self.failed = []  # type: list
        self.client_version = None  # type: str | None
        self.server_version = None  # type: str | None
        self.out = progress

    def progress(self, text: str) -> None:
        self.out.line(text)

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

    def fail(self, entry: dict, name: str, error: str | None = None) -> None:
        entry["status"] = "failed"
        if error:
            entry["error"] = error
        self.failed.append(name)
        msg = kubectl_error(entry.get("stderr", "")) or error or "failed"
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

    def scan(self, part: str, stop_when_changed: bool):
        """Read a part file through: (items, non-items members, changed,
        sha256, bytes). With stop_when_changed, stops at the first item
        redaction would change (items and hashes are then incomplete).
        Raises NotJSON / NotAList."""
        members = []  # type: list
        items = 0
        counts = {}  # type: dict
        with ListReader(part) as reader:
            for event, key, value in reader.events():
                if event == "member":
                    members.append((key, value))
                elif event == "item":
                    items += 1
                if self.redacting and event in ("member", "item"):
                    redact(value, counts)
                    if stop_when_changed and counts:
                        return items, members, True, None, None
            return items, members, bool(counts), reader.sha.hexdigest(), reader.nbytes

    def write_list(self, entry: dict, parts: list, header: list | None) -> None:
        """Write entry["path"] from the part files, item by item, redacted if
        asked, formatted the way kubectl indents. One part: its own members
        in its own order. Several (one per namespace): `header` members,
        with the items of every part in order."""
        path = os.path.join(self.tmpdir, entry["path"])
        counts = dict((r, 0) for r in RULES) if self.redacting else {}
        with open(path, "wb") as f:
            w = ListWriter(f)
            if header is None:
                with ListReader(parts[0]) as reader:
                    for event, key, value in reader.events():
                        if event == "member":
                            if self.redacting:
                                redact(value, counts)
                            w.member(key, value)
                        elif event == "items":
                            w.begin_items(key)
                        elif event == "item":
                            if self.redacting:
                                redact(value, counts)
                            w.item(value)
                        else:
                            w.end_items()
            else:
                for key, value in header:
                    if key != "items":
                        w.member(key, value)
                        continue
                    w.begin_items(key)
                    for part in parts:
                        with ListReader(part) as reader:
                            for event, _, item in reader.events():
                                if event == "item":
                                    if self.redacting:
                                        redact(item, counts)
                                    w.item(item)
                    w.end_items()
            w.finish()
        entry["items"] = w.items
        entry["status"] = "ok"
        entry["bytes"] = w.nbytes
        entry["sha256"] = w.sha.hexdigest()
        if self.redacting:
            entry["redactions"] = counts
            self.add_counts(counts)

    def collect_kind(self, kind: Kind) -> dict:
        name = kind.file[:-len(".json")]
        namespaces = self.opts.namespaces if kind.namespaced and kind.only is None else None
        t0 = time.monotonic()
        entry = {"path": kind.file, "kind": name}  # type: dict
        if namespaces:
            commands = [["get", kind.resource, "-n", ns, "-o", "json"] for ns in namespaces]
        else:
            scope = only_args(kind.only) if kind.only else (["-A"] if kind.namespaced else [])
            commands = [["get", kind.resource] + scope + ["-o", "json"]]
        runs = []  # type: list
        parts = []  # type: list
        bad = None  # (run, error) of the first namespace that failed
        header = None  # the first List's members, for a merged List
        unserved = False
        try:
            for i, args in enumerate(commands):
                part = os.path.join(self.tmpdir, ".%s.part" % name if i == 0
                                    else ".%s.%d.part" % (name, i + 1))
                r = self.kubectl.run(args, stdout_path=part)
                runs.append({"command": r["command"], "exitStatus": r["exitStatus"],
                             "stderr": r["stderr"], "seconds": r["seconds"]})
                if r["exitStatus"] != 0:
                    _remove(part)
                    if i == 0 and not_served(kind, r["exitStatus"], r["stderr"]):
                        unserved = True  # the whole resource type: no other namespace has it
                        break
                    if bad is None:
                        bad = (runs[-1], None)
                    continue
                parts.append(part)
                if bad is not None:
                    continue
                # Checked now, so the first namespace that fails is the one named.
                try:
                    if len(commands) == 1:
                        # Stops at the first item redaction changes: that file
                        # is written anew anyway.
                        single = self.scan(part, stop_when_changed=True)
                    else:
                        members = self.scan(part, stop_when_changed=False)[1]
                        if header is None:
                            header = members
                except NotJSON as e:
                    bad = (runs[-1], "stdout is not JSON: %s" % e)
                except NotAList as e:
                    bad = (runs[-1], str(e))
            first = bad[0] if bad is not None else runs[0]
            entry["command"] = first["command"]
            entry["exitStatus"] = first["exitStatus"]
            entry["stderr"] = "".join(x["stderr"] for x in runs)
            if namespaces:
                entry["commands"] = runs
            entry["seconds"] = round(time.monotonic() - t0, 3)
            if unserved:
                entry["status"] = "not-served"
                self.progress("%s: not served by this cluster" % name)
                return entry
            if bad is not None:
                self.fail(entry, name, bad[1])
                return entry
            try:
                if len(commands) == 1:
                    items, _, changed, sha, nbytes = single
                    if not changed:
                        # kubectl's own bytes, as they came.
                        os.rename(parts[0], os.path.join(self.tmpdir, entry["path"]))
                        parts = []
                        entry.update(items=items, status="ok", bytes=nbytes, sha256=sha)
                        if self.redacting:
                            entry["redactions"] = dict((r, 0) for r in RULES)
                    else:
                        self.write_list(entry, parts, None)
                else:
                    # One `get -n NS` per namespace, items merged into one List.
                    merged = [("apiVersion", dict(header).get("apiVersion", "v1")),
                              ("items", None), ("kind", "List"),
                              ("metadata", {"resourceVersion": ""})]
                    self.write_list(entry, parts, merged)
            except (NotJSON, NotAList, UnicodeEncodeError) as e:
                # Only reachable past the first changed item of one part, or
                # for text that cannot be written back as UTF-8 (a lone
                # surrogate that json.loads accepted).
                _remove(os.path.join(self.tmpdir, entry["path"]))
                for k in ("items", "status", "bytes", "sha256", "redactions"):
                    entry.pop(k, None)
                if isinstance(e, NotJSON):
                    text = "stdout is not JSON: %s" % e
                elif isinstance(e, NotAList):
                    text = str(e)
                else:
                    text = "cannot write the redacted copy as UTF-8: %s" % e
                self.fail(entry, name, text)
                return entry
        finally:
            for part in parts:
                _remove(part)
        red = ""
        if entry.get("redactions") and sum(entry["redactions"].values()):
            red = ", " + ", ".join("%d %s redacted" % (v, k)
                                   for k, v in sorted(entry["redactions"].items()) if v)
        self.progress("%s: %d items, %d bytes, %.2f s%s" % (
            name, entry["items"], entry["bytes"], entry["seconds"], red))
        return entry

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


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """The same page layout as gpu-triage's other commands: `Usage:`, `Options:`, examples as written."""

    def add_usage(self, usage, actions, groups, prefix=None):  # type: ignore[no-untyped-def]
        return super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog or "python3 " + os.path.basename(sys.argv[0] or "collect.py"),
        usage="%(prog)s [OPTIONS]",
        add_help=False,
        description=("Collect a gpu-triage bundle: read-only kubectl outputs (pods, nodes,\n"
                     "quotas, runtime classes, events, owners, namespaces, DRA claims,\n"
                     "slices and classes, Karpenter NodePools and NodeClaims,\n"
                     "ProvisioningRequests, cluster-autoscaler's status, version)\n"
                     "for offline analysis with\n"
                     "`gpu-triage analyze`. Needs only kubectl and\n"
                     "Python 3.8+; reads the cluster, never changes it."),
        epilog=EPILOG,
        formatter_class=_Formatter,
    )
    p._optionals.title = "Options"
    p.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: kubectl's current context)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: kubectl's own default)")
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
    p.add_argument("--keep-failed", action="store_true",
                   help=("when the cluster cannot be read at all (exit 1), keep that run's "
                         "manifest as <output-dir>/<context>-<UTC time>" + FAILED_MANIFEST
                         + " for the ticket"))
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


def build_manifest(opts: argparse.Namespace, c: Collector, created: datetime.datetime,
                   context: str | None, files: list, attempts: list) -> dict:
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
    return {
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


def manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def remove_made_out_dir(state: dict) -> None:
    if state.get("made_out_dir"):
        try:
            os.rmdir(state["made_out_dir"])  # only if still empty
        except OSError:
            pass


def cannot_read_cluster(opts: argparse.Namespace, state: dict, progress: Progress,
                        manifest: dict, base: str, failed: list) -> int:
    """Every required kind failed: no bundle. The first stderr line says why in
    kubectl's own words; the held progress lines follow as the detail."""
    first = failed[0]
    reason = kubectl_error(first.get("stderr", "")) or first.get("error") or "failed"
    manifest["error"] = "cannot read the cluster: %s" % reason
    sys.stderr.write("cannot read the cluster: %s\n" % reason)
    progress.release()
    _remove(state["tmpdir"])
    state["tmpdir"] = None
    if opts.keep_failed:
        n = 1
        path = os.path.join(opts.output_dir, base + FAILED_MANIFEST)
        while os.path.lexists(path):
            n += 1
            path = os.path.join(opts.output_dir, "%s-%d%s" % (base, n, FAILED_MANIFEST))
        tmp = os.path.join(opts.output_dir, ".%s.partial-%d" % (os.path.basename(path), os.getpid()))
        with open(tmp, "wb") as f:
            f.write(manifest_bytes(manifest))
        os.rename(tmp, path)
        sys.stderr.write("no bundle written; the failed run's manifest: %s\n" % path)
    else:
        remove_made_out_dir(state)
        sys.stderr.write("no bundle written (--keep-failed keeps the failed run's manifest)\n")
    sys.stderr.flush()
    return EXIT_UNREACHABLE


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
    progress = Progress()
    state["progress"] = progress

    created = utc_now()
    context = opts.context
    if context is None:
        r = kubectl.run(["config", "current-context"])
        if r["exitStatus"] == 0:
            context = first_line(decode(r["stdout"])) or None
        else:
            progress.line("context: none (%s)" % kubectl_error(r["stderr"]))

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

    if context is None:
        progress.line("collecting from kubectl's default cluster (no context set) into %s" % out_dir)
    else:
        progress.line("collecting context %s into %s" % (context, out_dir))
    c = Collector(opts, kubectl, tmpdir, progress)
    files = [c.collect_version()]
    required = sum(1 for k in KINDS if k.required)
    required_failed = []  # type: list
    for kind in KINDS:
        entry = c.collect_kind(kind)
        files.append(entry)
        if not kind.required:
            continue
        if entry["status"] == "ok":
            progress.release()  # the cluster can be read: show what was held
        else:
            required_failed.append(entry)
        if len(required_failed) == required:
            return cannot_read_cluster(opts, state, progress,
                                       build_manifest(opts, c, created, context, files, []),
                                       base, required_failed)
    progress.release()
    attempts = [c.collect_attempt(i + 1, f) for i, f in enumerate(opts.manifest)]

    manifest = build_manifest(opts, c, created, context, files, attempts)
    with open(os.path.join(tmpdir, "manifest.json"), "wb") as f:
        f.write(manifest_bytes(manifest))

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

    state = {"tmpdir": None, "tmp_archive": None, "progress": None}  # type: dict

    def show_held() -> None:
        # Lines held back while the cluster's readability was unknown.
        if state["progress"] is not None:
            state["progress"].release()

    def on_signal(signum, _frame):
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
        show_held()
        if state.get("final"):
            sys.stderr.write("interrupted: the bundle %s is complete; the archive was "
                             "not written\n" % state["final"])
        else:
            sys.stderr.write("interrupted: nothing written (temporary files removed)\n")
        return 128 + e.signum
    except KubectlUnusable as e:
        _remove(state["tmpdir"])
        remove_made_out_dir(state)
        show_held()
        sys.stderr.write("error: %s\n" % e)
        return EXIT_USAGE
    except BaseException:
        _remove(state["tmpdir"])
        _remove(state["tmp_archive"])
        show_held()
        raise
    finally:
        for s, h in previous.items():
            try:
                signal.signal(s, h)
            except (ValueError, OSError):
                pass


if __name__ == "__main__":
    sys.exit(main())
