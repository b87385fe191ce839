"""labelSelector and fieldSelector as the API server reads them.

Label grammar: k8s.io/apimachinery/pkg/labels/selector.go (Parse): terms joined by ',', each
`key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`, `key>n`, `key<n`.
Field grammar: k8s.io/apimachinery/pkg/fields/selector.go (ParseSelector): `f=v`, `f==v`, `f!=v`
joined by ',', with `\\` escaping `,`, `=`, `!` and `\\`. Fields are those the real server accepts
per kind (pkg/registry/core/pod/strategy.go ToSelectableFields, events' involvedObject.*, …);
any other field is refused with 400, as the real server does ("field label not supported").
"""

from __future__ import annotations

from analyzer.bundle.catalog import EVENTS, JOBS, NAMESPACES, NODES, PODS, REPLICASETS, RESOURCESLICES

import re
from dataclasses import dataclass
from typing import Any, Callable


class SelectorError(ValueError):
    """A selector the server cannot honour; becomes a 400 Status naming it."""


# -- labels ---------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class LabelTerm:
    key: str
    op: str  # exists, !, =, !=, in, notin, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: dict) -> bool:
        has = self.key in labels
        value = labels.get(self.key)
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if self.op in ("=", "in"):
            return has and value in self.values
        if self.op in ("!=", "notin"):
            return not has or value not in self.values
        if not has:
            return False
        try:  # gt / lt compare integers (labels.Requirement.Matches)
            number = int(str(value))
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.op == "gt" else number < bound


_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[-A-Za-z0-9_.]*"
_SET_TERM = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(([^()]*)\)\s*$")
_OP_TERM = re.compile(rf"^\s*({_KEY})\s*(==|!=|=|>|<)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


def _split_terms(text: str) -> list[str]:
    """Split at commas outside parentheses (a set's values hold commas)."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"labelSelector {text!r}: unbalanced ')'")
        elif ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    if depth:
        raise SelectorError(f"labelSelector {text!r}: unbalanced '('")
    terms.append(text[start:])
    return terms


def parse_labels(text: str) -> list[LabelTerm]:
    if not text.strip():
        return []
    out = []
    for raw in _split_terms(text):
        if m := _SET_TERM.match(raw):
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            if not values or any(not re.fullmatch(_VALUE, v) for v in values):
                raise SelectorError(f"labelSelector term {raw.strip()!r}: a set needs one or more valid values")
            out.append(LabelTerm(key=m.group(1), op=m.group(2), values=values))
        elif m := _OP_TERM.match(raw):
            op = {"==": "=", ">": "gt", "<": "lt"}.get(m.group(2), m.group(2))
            if op in ("gt", "lt") and not re.fullmatch(r"-?\d+", m.group(3)):
                raise SelectorError(f"labelSelector term {raw.strip()!r}: {m.group(2)} needs an integer")
            out.append(LabelTerm(key=m.group(1), op=op, values=(m.group(3),)))
        elif m := _EXISTS.match(raw):
            out.append(LabelTerm(key=m.group(2), op="!" if m.group(1) else "exists"))
        else:
            raise SelectorError(f"labelSelector term {raw.strip()!r} is not supported "
                                "(use key, !key, key=v, key==v, key!=v, key in (a,b), key notin (a,b), key>n, key<n)")
    return out


def labels_match(terms: list[LabelTerm], item: dict) -> bool:
    labels = (item.get("metadata") or {}).get("labels") or {}
    if not isinstance(labels, dict):
        labels = {}
    return all(t.matches(labels) for t in terms)


# -- fields ---------------------------------------------------------------------------------

def _path(*parts: str) -> Callable[[dict], Any]:
    def get(item: dict) -> Any:
        cur: Any = item
        for p in parts:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(p)
        return cur
    return get


_COMMON = {"metadata.name": _path("metadata", "name"), "metadata.namespace": _path("metadata", "namespace")}

# The fields each kind's real registry strategy makes selectable (GetAttrs / ToSelectableFields).
FIELDS: dict[str, dict[str, Callable[[dict], Any]]] = {
    PODS.name: {  # pkg/registry/core/pod/strategy.go ToSelectableFields
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": _path("spec", "hostNetwork"),
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    NODES.name: {"spec.unschedulable": _path("spec", "unschedulable")},  # pkg/registry/core/node/strategy.go
    EVENTS.name: {  # pkg/registry/core/event/strategy.go ToSelectableFields
        **{f"involvedObject.{k}": _path("involvedObject", k)
           for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
        "reason": _path("reason"),
        "reportingComponent": _path("reportingComponent"),
        "source": _path("source", "component"),
        "type": _path("type"),
    },
    NAMESPACES.name: {"status.phase": _path("status", "phase")},  # pkg/registry/core/namespace/strategy.go
    JOBS.name: {"status.successful": _path("status", "succeeded")},  # pkg/registry/batch/job/strategy.go
    REPLICASETS.name: {"status.replicas": _path("status", "replicas")},  # pkg/registry/apps/replicaset/strategy.go
    RESOURCESLICES.name: {  # pkg/registry/resource/resourceslice/strategy.go
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.driver": _path("spec", "driver"),
    },
}


@dataclass(frozen=True, kw_only=True)
class FieldTerm:
    field: str
    op: str  # = or !=
    value: str
    get: Callable[[dict], Any]

    def matches(self, item: dict) -> bool:
        got = self.get(item)
        if got is None:
            text = "false" if self.field in ("spec.unschedulable", "spec.hostNetwork") else ""
        elif isinstance(got, bool):
            text = "true" if got else "false"
        else:
            text = str(got)
        return (text == self.value) == (self.op == "=")


def _split_escaped(text: str, sep: str) -> list[str]:
    out, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if ch == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_fields(text: str, resource: str) -> list[FieldTerm]:
    if not text.strip():
        return []
    allowed = {**_COMMON, **FIELDS.get(resource, {})}
    out = []
    for raw in _split_escaped(text, ","):
        m = re.match(r"^((?:[^\\=!]|\\.)*)(==|!=|=)(.*)$", raw)
        if not m:
            raise SelectorError(f"fieldSelector term {raw!r}: expected field=value, field==value or field!=value")
        name = _unescape(m.group(1)).strip()
        if name not in allowed:
            raise SelectorError(f"fieldSelector {raw!r}: field label not supported for {resource}: {name!r} "
                                f"(supported: {', '.join(sorted(allowed))})")
        op = "=" if m.group(2) in ("=", "==") else "!="
        out.append(FieldTerm(field=name, op=op, value=_unescape(m.group(3)), get=allowed[name]))
    return out


def fields_match(terms: list[FieldTerm], item: dict) -> bool:
    return all(t.matches(item) for t in terms)
