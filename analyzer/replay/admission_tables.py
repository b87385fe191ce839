"""Server-side Table rows for the admission kinds and EndpointSlices, as the real API server serves them.

kubernetes pkg/printers/internalversion/printers.go: mutatingWebhookColumnDefinitions,
validatingWebhookColumnDefinitions, validatingAdmissionPolicy, validatingAdmissionPolicyBinding,
endpointSliceColumnDefinitions and their print functions (formatDiscoveryPorts, formatDiscoveryEndpoints).
LimitRange has no printer there: its storage uses apiserver's default table convertor
(k8s.io/apiserver pkg/registry/rest/table.go), Name and "Created At", the creation time in RFC 3339 UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from analyzer.bundle.catalog import (ENDPOINTSLICES, LIMITRANGES, MUTATINGWEBHOOKCONFIGURATIONS,
                                     VALIDATINGADMISSIONPOLICIES, VALIDATINGADMISSIONPOLICYBINDINGS,
                                     VALIDATINGWEBHOOKCONFIGURATIONS)
from analyzer.replay.cells import Column, Row, age, as_dict, as_list, as_str, column, dig, format_label_selector
from analyzer.replay.store import parse_time

NAME = ("Name", "string", 0)
AGE = column("Age")
_SHOWN = 3  # formatDiscoveryPorts / formatDiscoveryEndpoints: max


def _name(item: dict) -> str:
    return as_str(dig(item, "metadata", "name"))


def _with_more(shown: list[str], count: int) -> str:
    """listWithMoreString: `a,b,c + N more...`, `<unset>` when empty."""
    text = ",".join(shown)
    if count > len(shown):
        return f"{text} + {count - _SHOWN} more..."
    return text or "<unset>"


def _ports(ports: object) -> str:
    """formatDiscoveryPorts: each port's number, else its name, else `*`."""
    listed = [as_dict(p) for p in as_list(ports)]
    shown = [str(p["port"]) if isinstance(p.get("port"), int) else as_str(p.get("name")) if p.get("name") is not None
             else "*" for p in listed[:_SHOWN]]
    return _with_more(shown, len(listed))


def _endpoints(endpoints: object) -> str:
    """formatDiscoveryEndpoints: every endpoint's addresses."""
    addresses = [as_str(a) for e in as_list(endpoints) for a in as_list(as_dict(e).get("addresses"))]
    return _with_more(addresses[:_SHOWN], len(addresses))


def _param_kind(policy: dict) -> str:
    kind = dig(policy, "spec", "paramKind")
    return f"{as_str(as_dict(kind).get('apiVersion'))}/{as_str(as_dict(kind).get('kind'))}" if kind is not None else "<unset>"


def _param_ref(binding: dict) -> str:
    """printValidatingAdmissionPolicyBinding: namespace/name, `*/name` without a namespace, else the selector."""
    ref = dig(binding, "spec", "paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    if as_str(ref.get("name")):
        return f"{as_str(ref.get('namespace')) or '*'}/{as_str(ref.get('name'))}"
    return format_label_selector(ref.get("selector")) if ref.get("selector") is not None else "<unset>"


def _created_at(item: dict) -> str:
    t = parse_time(dig(item, "metadata", "creationTimestamp"))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ") if t is not None else "0001-01-01T00:00:00Z"


def _webhooks(item: dict, now: datetime) -> Row:
    return [_name(item), len(as_list(item.get("webhooks"))), age(item, now)]


ADMISSION_TABLES: dict[str, tuple[list[Column], Callable[[dict, datetime], Row]]] = {
    MUTATINGWEBHOOKCONFIGURATIONS.name: ([NAME, column("Webhooks", "integer"), AGE], _webhooks),
    VALIDATINGWEBHOOKCONFIGURATIONS.name: ([NAME, column("Webhooks", "integer"), AGE], _webhooks),
    VALIDATINGADMISSIONPOLICIES.name: (
        [NAME, column("Validations", "integer"), column("ParamKind"), AGE],
        lambda p, now: [_name(p), len(as_list(dig(p, "spec", "validations"))), _param_kind(p), age(p, now)]),
    VALIDATINGADMISSIONPOLICYBINDINGS.name: (
        [NAME, column("PolicyName"), column("ParamRef"), AGE],
        lambda b, now: [_name(b), as_str(dig(b, "spec", "policyName")), _param_ref(b), age(b, now)]),
    ENDPOINTSLICES.name: (
        [NAME, column("AddressType"), column("Ports"), column("Endpoints"), AGE],
        lambda e, now: [_name(e), as_str(e.get("addressType")), _ports(e.get("ports")), _endpoints(e.get("endpoints")),
                        age(e, now)]),
    LIMITRANGES.name: ([NAME, column("Created At", "date")], lambda r, now: [_name(r), _created_at(r)]),
}
