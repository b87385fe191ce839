"""Label selectors (metav1.LabelSelector) as the API machinery matches them, parsed once.

Source: k8s.io/apimachinery/pkg/apis/meta/v1 LabelSelectorAsSelector: a nil selector matches nothing, an empty
one everything; matchLabels and matchExpressions are ANDed; In / NotIn / Exists / DoesNotExist. Used for pod
affinity terms, topology spread constraints, namespace selectors, PVC selectors and CSIStorageCapacity topology.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

# (key, operator, values): one requirement
Requirement = tuple[str, str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...]
    nothing: bool = False  # a nil selector: matches no object

    def matches(self, labels: dict[str, str]) -> bool:
        if self.nothing:
            return False
        for key, op, values in self.requirements:
            present = key in labels
            if op == "In":
                if not present or labels[key] not in values:
                    return False
            elif op == "NotIn":
                if present and labels[key] in values:
                    return False
            elif op == "Exists":
                if not present:
                    return False
            elif op == "DoesNotExist":
                if present:
                    return False
            else:
                return False  # an operator the API would refuse: matches nothing
        return True

    @property
    def key(self) -> bytes:
        return orjson.dumps([self.nothing, self.requirements])

    def __str__(self) -> str:
        if self.nothing:
            return "(no selector: matches nothing)"
        if not self.requirements:
            return "(every pod)"
        parts = []
        for key, op, values in self.requirements:
            if op == "In" and len(values) == 1:
                parts.append(f"{key}={values[0]}")
            elif op in ("In", "NotIn"):
                parts.append(f"{key} {op.lower()} ({','.join(values)})")
            elif op == "Exists":
                parts.append(key)
            else:
                parts.append(f"!{key}")
        return ",".join(parts)


NOTHING = Selector(requirements=(), nothing=True)
EVERYTHING = Selector(requirements=())


def selector_of(raw: object, extra: tuple[Requirement, ...] = ()) -> Selector:
    """A LabelSelector object (None: matches nothing), with extra requirements ANDed (matchLabelKeys)."""
    if not isinstance(raw, dict):
        return Selector(requirements=extra) if extra and raw is not None else NOTHING
    reqs: list[Requirement] = [(str(k), "In", (str(v),)) for k, v in sorted((raw.get("matchLabels") or {}).items())]
    for e in raw.get("matchExpressions") or ():
        if isinstance(e, dict):
            reqs.append((str(e.get("key", "")), str(e.get("operator", "")),
                         tuple(sorted(str(v) for v in e.get("values") or ()))))
    return Selector(requirements=tuple(reqs) + extra)
