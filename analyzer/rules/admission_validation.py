"""The API server's validation of a pod's resources, for `invalid-spec` (pkg/apis/core/validation/validation.go
ValidateContainerResourceRequirements and ValidateResourceQuantityValue, with pkg/apis/core/helper's
IsExtendedResourceName, IsOvercommitAllowed and IsIntegerResourceName).

An extended resource (every accelerator) cannot be overcommitted: its request must equal its limit, a request
needs a limit, and it must be a whole number; hugepages cannot be overcommitted either. Any request over its limit
is refused. The errors read as field.Error prints them: `<field path>: Invalid value: "2": must be equal to
nvidia.com/gpu limit of 1`, `<path>.resources.limits: Required value: Limit must be set for non overcommitable
resources`, `<path>.resources.requests[nvidia.com/gpu]: Invalid value: "0.5": must be an integer`.
"""

from __future__ import annotations

from fractions import Fraction

from analyzer.model import quantity
from analyzer.model.quantity import QuantityError


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def overcommit_allowed(name: str) -> bool:
    return _native(name) and not name.startswith("hugepages-")


def _integer_resource(name: str) -> bool:
    return not _native(name) and not name.startswith("requests.")


def _quantities(values: object) -> dict[str, tuple[str, Fraction]]:
    out: dict[str, tuple[str, Fraction]] = {}
    for k, v in (values.items() if isinstance(values, dict) else ()):
        try:
            out[str(k)] = (str(v), quantity.parse(v))
        except QuantityError:
            continue  # the pod schema reports an unparsable quantity before any rule runs
    return out


def validation_errors(spec: dict) -> list[str]:
    """Every resource error validation finds, in its order (init containers, then containers)."""
    errors: list[str] = []
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or ()):
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            path = f"spec.{key}[{i}].resources"
            limits, requests = _quantities(res.get("limits")), _quantities(res.get("requests"))
            for name, (text, value) in limits.items():
                if _integer_resource(name) and value.denominator != 1:
                    errors.append(f'{path}.limits[{name}]: Invalid value: "{text}": must be an integer')
            for name, (text, value) in requests.items():
                if _integer_resource(name) and value.denominator != 1:
                    errors.append(f'{path}.requests[{name}]: Invalid value: "{text}": must be an integer')
                limit = limits.get(name)
                if limit is not None:
                    if value != limit[1] and not overcommit_allowed(name):
                        errors.append(f'{path}.requests: Invalid value: "{text}": must be equal to {name} limit of {limit[0]}')
                    elif value > limit[1]:
                        errors.append(f'{path}.requests: Invalid value: "{text}": must be less than or equal to '
                                      f'{name} limit of {limit[0]}')
                elif not overcommit_allowed(name):
                    errors.append(f"{path}.limits: Required value: Limit must be set for non overcommitable resources")
    return errors
