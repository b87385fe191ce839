"""The LimitRanger admission plugin (plugin/pkg/admission/limitranger/admission.go), for `limit-range`:
first its defaults (mutating: a container's missing limits from `default`, missing requests from
`defaultRequest`), then its bounds (validating: `min`, `max`, `maxLimitRequestRatio` per Container and per Pod,
for every resource named, extended resources included). The messages are the plugin's own words
(minConstraint, maxConstraint, limitRequestRatioConstraint).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from fractions import Fraction

from analyzer.model import quantity
from analyzer.model.admission_world import LimitItem
from analyzer.model.podspec import exact_limits, exact_requests
from analyzer.model.quantity import QuantityError, format_exact

_CONTAINER_LISTS = ("initContainers", "containers")


@dataclass(frozen=True, kw_only=True)
class Default:
    """One value a LimitRange filled in."""

    limit_range: str
    container: str
    section: str  # requests | limits
    resource: str
    value: str

    def sentence(self) -> str:
        return (f"LimitRange {self.limit_range} filled in {self.section} {self.resource} {self.value} "
                f"for container {self.container}")


@dataclass(frozen=True, kw_only=True)
class Breach:
    """A bound the pod breaks, with the plugin's message."""

    limit_range: str
    resource: str
    message: str

    def sentence(self) -> str:
        return f"LimitRange {self.limit_range}: {self.message}"


@dataclass(frozen=True, kw_only=True)
class Defaulted:
    spec: dict
    defaults: tuple[Default, ...]
    contested: tuple[str, ...]  # resources two LimitRanges default in no fixed order (sentences)


def _resources(container: dict) -> dict:
    res = container.get("resources")
    if not isinstance(res, dict):
        res = {}
        container["resources"] = res
    for section in ("requests", "limits"):
        if not isinstance(res.get(section), dict):
            res[section] = {}
    return res


def apply_defaults(spec: dict, items: list[LimitItem]) -> Defaulted:
    """The pod as the plugin leaves it. The API server's own defaulting runs first (pkg/apis/core/v1/defaults.go:
    a container's missing request is its limit), so a default request never overrides a stated limit."""
    container_items = [i for i in items if i.type == "Container" and (i.default or i.default_request)]
    if not container_items:
        return Defaulted(spec=spec, defaults=(), contested=())
    out = copy.deepcopy(spec)
    defaults: list[Default] = []
    contested: list[str] = []
    for key in _CONTAINER_LISTS:
        for c in out.get(key) or ():
            if isinstance(c, dict):
                res_map = _resources(c)
                for r, v in list(res_map["limits"].items()):
                    res_map["requests"].setdefault(r, v)
    for section, field in (("limits", "default"), ("requests", "default_request")):
        by_resource: dict[str, list[tuple[str, str]]] = {}
        for item in container_items:
            for res, (text, _) in getattr(item, field).items():
                by_resource.setdefault(res, []).append((item.limit_range, text))
        for res, givers in by_resource.items():
            if len({name for name, _ in givers}) > 1:
                contested.append(f"LimitRanges {' and '.join(sorted({n for n, _ in givers}))} both default "
                                 f"{section} {res} (applied in no fixed order)")
        for key in _CONTAINER_LISTS:
            for c in out.get(key) or ():
                if not isinstance(c, dict):
                    continue
                res_map = _resources(c)
                for res, givers in by_resource.items():
                    if res not in res_map[section]:
                        name, text = givers[-1]
                        res_map[section][res] = text
                        defaults.append(Default(limit_range=name, container=str(c.get("name") or "?"),
                                                section=section, resource=res, value=text))
    return Defaulted(spec=out, defaults=tuple(defaults), contested=tuple(contested))


def _q(value: object) -> Fraction | None:
    try:
        return quantity.parse(value)
    except QuantityError:
        return None


def _check(item: LimitItem, per: str, requests: dict[str, tuple[str, Fraction]],
           limits: dict[str, tuple[str, Fraction]]) -> list[Breach]:
    out: list[Breach] = []

    def breach(resource: str, message: str) -> None:
        out.append(Breach(limit_range=item.limit_range, resource=resource, message=message))

    for res, (text, bound) in item.min.items():
        req, lim = requests.get(res), limits.get(res)
        if req is None:
            breach(res, f"minimum {res} usage per {per} is {text}.  No request is specified")
        elif req[1] < bound:
            breach(res, f"minimum {res} usage per {per} is {text}, but request is {req[0]}")
        elif lim is not None and lim[1] < bound:
            breach(res, f"minimum {res} usage per {per} is {text}, but limit is {lim[0]}")
    for res, (text, bound) in item.max.items():
        req, lim = requests.get(res), limits.get(res)
        if lim is None:
            breach(res, f"maximum {res} usage per {per} is {text}.  No limit is specified")
        elif lim[1] > bound:
            breach(res, f"maximum {res} usage per {per} is {text}, but limit is {lim[0]}")
        elif req is not None and req[1] > bound:
            breach(res, f"maximum {res} usage per {per} is {text}, but request is {req[0]}")
    for res, (text, bound) in item.ratio.items():
        req, lim = requests.get(res), limits.get(res)
        if req is None or req[1] == 0:
            breach(res, f"{res} max limit to request ratio per {per} is {text}, but no request is specified or request is 0")
        elif lim is None or lim[1] == 0:
            breach(res, f"{res} max limit to request ratio per {per} is {text}, but no limit is specified or limit is 0")
        elif lim[1] / req[1] > bound:
            breach(res, f"{res} max limit to request ratio per {per} is {text}, but provided ratio is "
                        f"{float(lim[1] / req[1]):f}")
    return out


def _written(values: object) -> dict[str, tuple[str, Fraction]]:
    out: dict[str, tuple[str, Fraction]] = {}
    for k, v in (values.items() if isinstance(values, dict) else ()):
        exact = _q(v)
        if exact is not None:
            out[str(k)] = (str(v), exact)
    return out


def breaches(spec: dict, items: list[LimitItem]) -> list[Breach]:
    """Every bound the (defaulted) pod breaks, in the plugin's order: each LimitRange entry, its containers
    (then init containers) per Container, the pod's totals (overhead included) per Pod."""
    out: list[Breach] = []
    for item in items:
        if item.type == "Container":
            for key in ("containers", "initContainers"):
                for c in spec.get(key) or ():
                    res = c.get("resources") if isinstance(c, dict) else None
                    res = res if isinstance(res, dict) else {}
                    out += _check(item, "Container", _written(res.get("requests")), _written(res.get("limits")))
        elif item.type == "Pod":
            try:
                requests, limits = exact_requests(spec), exact_limits(spec)
            except QuantityError:
                continue
            out += _check(item, "Pod", {k: (format_exact(v), v) for k, v in requests.items()},
                          {k: (format_exact(v), v) for k, v in limits.items()})
    return out

