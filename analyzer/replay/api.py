"""The read-only Kubernetes API as pure functions: (method, path, query, accept) -> Reply.

No HTTP here (server.py adapts aiohttp to this), so every rule is testable without a socket.
Discovery is the legacy kind (APIVersions / APIGroupList / APIResourceList, Content-Type
application/json): kubectl 1.32 asks for aggregated discovery first (Accept
application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,…,application/json) and falls
back to legacy when the reply is plain JSON (client-go discovery/aggregated_discovery.go).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from analyzer.replay import clock
from analyzer.replay.kinds import RESOURCES
from analyzer.replay.selectors import SelectorError, fields_match, labels_match, parse_fields, parse_labels
from analyzer.replay.store import Served, Store
from analyzer.replay.tables import TABLES, cells, column_definitions

READ_ONLY_VERBS = ["get", "list", "watch"]
JSON = "application/json"
MAX_LIMIT = 10_000  # one page at most, so a 50,000-pod bundle is never serialised in one reply when paging


@dataclass(frozen=True, kw_only=True)
class Reply:
    status: int
    body: bytes
    content_type: str = JSON


@dataclass(kw_only=True)
class Request:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    accept: str = ""


def _json(status: int, doc: Any) -> Reply:
    return Reply(status=status, body=orjson.dumps(doc))


def status_reply(code: int, reason: str, message: str, details: dict | None = None) -> Reply:
    """A metav1.Status as the API server sends for every error (never an empty InternalError)."""
    doc: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": message, "reason": reason, "code": code}
    if details:
        doc["details"] = details
    return _json(code, doc)


class Api:
    """Answers requests from a loaded Store. Thread-safe: nothing is mutated after construction."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._group_versions: dict[str, list[Served]] = {}
        self._by_path: dict[tuple[str, str], Served] = {}  # (group/version, plural) -> what it serves
        for s in store.served.values():
            self._group_versions.setdefault(s.group_version, []).append(s)
            self._by_path[(s.group_version, s.kind.resource)] = s

    # -- entry ---------------------------------------------------------------------------
    def handle(self, req: Request) -> Reply:
        """The answer, its times moved so that kubectl's own ages count from the collection (clock.py)."""
        reply = self._answer(req)
        if self.store.shift_times and reply.content_type == JSON and reply.status == 200:
            reply = replace(reply, body=clock.shift_json(reply.body, clock.offset(self.store.collected)))
        return reply

    def _answer(self, req: Request) -> Reply:
        if req.method not in ("GET", "HEAD"):
            return self._read_only(req)
        parts = [p for p in req.path.split("/") if p]
        if not parts:
            return _json(200, {"paths": sorted(["/api", "/api/v1", "/apis", "/version",
                                                *(f"/apis/{gv}" for gv in self._group_versions if "/" in gv)])})
        if parts == ["version"]:
            return self._version()
        if parts[:2] == ["openapi", "v3"]:
            return self._openapi_v3("/".join(parts[2:]))
        if parts[0] in ("openapi", "swagger.json") or parts[0].startswith("openapi"):
            return status_reply(404, "NotFound", f"{req.path}: gpu-triage serve has no OpenAPI schemas; a bundle "
                                "holds objects, not schemas (kubectl works without them)")
        if parts[0] in ("healthz", "livez", "readyz"):
            return Reply(status=200, body=b"ok", content_type="text/plain")
        if parts[0] == "api":
            if len(parts) == 1:
                return _json(200, {"kind": "APIVersions", "versions": ["v1"],
                                   "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]})
            if parts[1] != "v1":
                return self._no_group(req.path)
            return self._resource_path("v1", parts[2:], req)
        if parts[0] == "apis":
            if len(parts) == 1:
                return self._group_list()
            if len(parts) == 2:
                return self._group(parts[1])
            gv = f"{parts[1]}/{parts[2]}"
            if gv not in self._group_versions:
                return self._no_group(req.path)
            return self._resource_path(gv, parts[3:], req)
        return status_reply(404, "NotFound", f"{req.path}: not a Kubernetes API path served by gpu-triage serve")

    # -- errors ----------------------------------------------------------------------------
    def _read_only(self, req: Request) -> Reply:
        return status_reply(405, "MethodNotAllowed",
                            f"the bundle is read-only: gpu-triage serve replays {self.store.label} as collected at "
                            f"{self.store.collected:%Y-%m-%dT%H:%M:%SZ}; {req.method} {req.path} would change the "
                            "cluster and is refused (run it against the live cluster)",
                            {"causes": [{"reason": "MethodNotAllowed", "message": f"{req.method} is not allowed"}]})

    def _not_collected(self, gv: str, resource: str, path: str) -> Reply:
        group = gv.rpartition("/")[0] if "/" in gv else ""
        kind = next((k for k in RESOURCES if k.resource == resource and k.group == group), None)
        why = self.store.missing.get(kind.name) if kind is not None else None
        if why is None:
            qualified = f"{resource}.{group}" if group else resource
            why = f"{qualified}.json was not collected: gpu-triage bundles hold only " + ", ".join(k.name for k in RESOURCES)
        served = ", ".join(sorted(self.store.served))
        return status_reply(404, "NotFound", f"{path}: {why}; this bundle serves {served}",
                            {"kind": resource})

    def _no_group(self, path: str) -> Reply:
        return status_reply(404, "NotFound", f"{path}: this bundle holds no resources of that API group/version "
                            f"(served: {', '.join(sorted(self._group_versions))})")

    # -- discovery -------------------------------------------------------------------------
    def _version(self) -> Reply:
        if self.store.version is None:
            return status_reply(404, "NotFound", "version.json (serverVersion) was not collected in this bundle")
        return _json(200, self.store.version)

    def _group_doc(self, group: str) -> dict | None:
        versions = sorted(gv.split("/", 1)[1] for gv in self._group_versions if gv.startswith(group + "/"))
        if not versions:
            return None
        vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vs, "preferredVersion": vs[0]}

    def _group_list(self) -> Reply:
        # In the catalog's order, built-in groups before custom resources, as a real server ranks them: kubectl
        # takes the first group that has a resource, so `kubectl get jobs` means batch's Jobs, not Volcano's.
        groups = list(dict.fromkeys(gv.split("/", 1)[0] for gv in self._group_versions if "/" in gv))
        return _json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                           "groups": [d for g in groups if (d := self._group_doc(g))]})

    def _group(self, group: str) -> Reply:
        doc = self._group_doc(group)
        return _json(200, doc) if doc else self._no_group(f"/apis/{group}")

    def _resource_list(self, gv: str) -> Reply:
        resources = []
        for s in sorted(self._group_versions[gv], key=lambda s: s.kind.resource):
            k = s.kind
            r: dict[str, Any] = {"name": k.resource, "singularName": k.singular, "namespaced": k.namespaced,
                                 "kind": k.kind, "verbs": READ_ONLY_VERBS}
            if k.short_names:
                r["shortNames"] = list(k.short_names)
            if k.categories:
                r["categories"] = list(k.categories)
            resources.append(r)
        return _json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})

    # -- OpenAPI v3: only what kubectl's write path reads ----------------------------------
    def _openapi_v3(self, gv_path: str) -> Reply:
        """No schemas: only, per served kind, a PATCH operation that accepts `fieldValidation`.

        kubectl create/apply first asks whether the server validates fields itself
        (cli-runtime resource/query_param_verifier_v3.go supportsQueryParamV3: a PATCH path with the
        kind's x-kubernetes-group-version-kind and a fieldValidation query parameter). Saying yes
        sends the write here, where it gets the read-only Status; saying nothing (404) would stop
        kubectl earlier with "failed to download openapi", which says nothing about read-only."""
        paths = {("api/v1" if "/" not in gv else f"apis/{gv}"): gv for gv in self._group_versions}
        if not gv_path:
            return _json(200, {"paths": {p: {"serverRelativeURL": f"/openapi/v3/{p}"} for p in sorted(paths)}})
        gv = paths.get(gv_path)
        if gv is None:
            return status_reply(404, "NotFound", f"/openapi/v3/{gv_path}: no such group/version in this bundle")
        ops: dict[str, Any] = {}
        for s in self._group_versions[gv]:
            k = s.kind
            scope = "/namespaces/{namespace}" if k.namespaced else ""
            ops[f"/{gv_path}{scope}/{k.resource}/{{name}}"] = {"patch": {
                "description": "refused: the bundle is read-only",
                "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                "responses": {"405": {"description": "the bundle is read-only"}},
                "x-kubernetes-group-version-kind": {"group": k.group, "version": s.version, "kind": k.kind}}}
        return _json(200, {"openapi": "3.0.0", "info": {"title": "gpu-triage serve (read-only replay)", "version": "v1"},
                           "paths": ops})

    # -- objects ---------------------------------------------------------------------------
    def _resource_path(self, gv: str, rest: list[str], req: Request) -> Reply:
        if not rest:
            if gv not in self._group_versions:
                return self._no_group(req.path)
            return self._resource_list(gv)
        namespace = ""
        # /namespaces/{ns}/{resource}[/{name}[/{sub}]]; /namespaces and /namespaces/{name} are the Namespace kind
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        resource, name, sub = rest[0], (rest[1] if len(rest) > 1 else ""), rest[2:]
        served = self._by_path.get((gv, resource))
        if served is None:
            return self._not_collected(gv, resource, req.path)
        kind = served.kind
        if sub:
            return status_reply(404, "NotFound", f"{req.path}: the {'/'.join(sub)} subresource is not in a bundle "
                                "(only the objects kubectl get -o json returned were collected)")
        if namespace and not kind.namespaced:
            return status_reply(404, "NotFound", f"{req.path}: {resource} are cluster-scoped")
        if name:
            item = served.index.get((namespace if kind.namespaced else "", name))
            if item is None:
                return status_reply(404, "NotFound", f'{resource}{"." + kind.group if kind.group else ""} "{name}" not found',
                                    {"name": name, "group": kind.group, "kind": resource})
            return self._one(served, item, req)
        return self._list(served, namespace, req)

    def _one(self, served: Served, item: dict, req: Request) -> Reply:
        if _wants_table(req.accept):
            return _json(200, self._table(served, [item], req, rv=served.resource_version))
        return _json(200, _with_type(served, item))

    def _list(self, served: Served, namespace: str, req: Request) -> Reply:
        q = req.query
        try:
            label_terms = parse_labels(q.get("labelSelector", ""))
            field_terms = parse_fields(q.get("fieldSelector", ""), served.kind.name)
        except SelectorError as exc:
            return status_reply(400, "BadRequest", str(exc))
        items = [it for it in served.items
                 if (not namespace or (it.get("metadata") or {}).get("namespace") == namespace)
                 and (not label_terms or labels_match(label_terms, it))
                 and (not field_terms or fields_match(field_terms, it))]
        if q.get("watch") in ("true", "1"):
            return self._watch(served, items, q)
        start, cont = _page(items, q)
        if start < 0:
            return status_reply(410, "Expired", "the continue token is not one this server issued; list again without it")
        page = items[start:cont] if cont is not None else items[start:]
        meta: dict[str, Any] = {"resourceVersion": served.resource_version}
        if cont is not None and cont < len(items):
            meta["continue"] = base64.urlsafe_b64encode(str(cont).encode()).decode()
            meta["remainingItemCount"] = len(items) - cont
        if _wants_table(req.accept):
            return _json(200, self._table(served, page, req, meta=meta))
        kind = served.kind
        return _json(200, {"kind": f"{kind.kind}List", "apiVersion": served.group_version, "metadata": meta,
                           "items": [_with_type(served, it) for it in page]})

    def _watch(self, served: Served, items: list[dict], q: dict[str, str]) -> Reply:
        """A bundle never changes: a watch from our resourceVersion has nothing to say and ends at once;
        a watch from the start (no version, or "0") sends every object as ADDED, then ends."""
        rv = q.get("resourceVersion", "")
        if rv not in ("", "0"):
            return Reply(status=200, body=b"")
        lines = [orjson.dumps({"type": "ADDED", "object": _with_type(served, it)}) for it in items]
        return Reply(status=200, body=b"\n".join(lines) + (b"\n" if lines else b""))

    def _table(self, served: Served, items: list[dict], req: Request, *, meta: dict | None = None,
               rv: str | None = None) -> dict:
        resource = served.kind.name
        include = req.query.get("includeObject", "Metadata")
        rows = []
        now = self.store.collected  # the times in the answer move with the request: the ages are those at collection
        for it in items:
            row: dict[str, Any] = {"cells": cells(resource, it, now)}
            if include == "Object":
                row["object"] = _with_type(served, it)
            elif include != "None":
                row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                 "metadata": it.get("metadata") or {}}
            phase = (it.get("status") or {}).get("phase") if resource == "pods" and isinstance(it.get("status"), dict) else None
            if phase in ("Succeeded", "Failed"):  # printers.go podSuccessConditions / podFailedConditions
                row["conditions"] = [{"type": "Completed", "status": "True", "reason": phase,
                                      "message": "The pod has completed successfully." if phase == "Succeeded" else "The pod failed."}]
            rows.append(row)
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                "metadata": meta or {"resourceVersion": rv or served.resource_version},
                "columnDefinitions": column_definitions(resource), "rows": rows}


def _with_type(served: Served, item: dict) -> dict:
    """Items inside a kubectl List keep apiVersion/kind; add them when a bundle dropped them."""
    if item.get("kind") and item.get("apiVersion"):
        return item
    out = dict(item)
    out.setdefault("kind", served.kind.kind)
    out.setdefault("apiVersion", served.group_version)
    return out


def _wants_table(accept: str) -> bool:
    return "as=Table" in accept


def _page(items: list[dict], q: dict[str, str]) -> tuple[int, int | None]:
    """(start, end) from limit/continue; start -1 for a token we did not issue."""
    start = 0
    token = q.get("continue", "")
    if token:
        try:
            start = int(base64.urlsafe_b64decode(token.encode()).decode())
        except (ValueError, UnicodeDecodeError):
            return -1, None
        if start < 0 or start > len(items):
            return -1, None
    limit_text = q.get("limit", "")
    if limit_text.isdigit() and int(limit_text) > 0:
        return start, start + min(int(limit_text), MAX_LIMIT)
    return start, None


__all__ = ["Api", "Reply", "Request", "status_reply", "TABLES"]
