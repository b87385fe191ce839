"""kubectl-shaped Kubernetes objects for the synthetic bundle generator.

Used by the bundle generator; no other part of the project imports it. Four modules (base: templates and
values; containers; pods; cluster: nodes, owners, events, the rest); this face names everything they define.

Speed is the point here: 150,000 pods of ~10 KB each cannot go through
``json.dumps(indent=4)`` one by one (with ``indent`` CPython falls back to its
pure-Python encoder).  Instead every distinct *shape* of object (a workload
class in a given state) is built once as a dict whose per-object values are
placeholders, encoded once exactly as kubectl prints it (4-space indentation,
map keys sorted, which is what ``kubectl get -o json`` does), and split into
literal pieces.  Rendering an object is then one ``str.join`` of the pieces
with its values.

Placeholders: ``P("name")`` inside a string becomes ``@@name@@`` and is
replaced by the value as-is (values must be JSON-safe: names, uids,
timestamps, IPs; messages are escaped with ``js()``); ``RAW("n")`` stands for
a whole JSON value (a number, ``null``) and is replaced without quotes.
"""

from __future__ import annotations

from bundle_objects.base import (  # noqa: F401
    BASE, BASE_EPOCH, LAST_APPLIED, MARKER, P, RAW, Tpl, _ALNUM, _BIN, _PH, digest_of, fmt_cpu, fmt_mem, h64, js, qty, suffix_from, ts, ts_micro, uid_from,
)
from bundle_objects.containers import (  # noqa: F401
    DEFAULT_TOLERATIONS, DS_TOLERATIONS, DS_TOLERATIONS_HOSTNET, GPU_TOLERATION, TOKEN_MOUNT, cond, container_spec, container_status, resources_of, token_volume,
)
from bundle_objects.pods import (  # noqa: F401
    pod_metadata, pod_obj, pod_spec, pod_template, qos_of,
)
from bundle_objects.cluster import (  # noqa: F401
    NODE_CONDITIONS, _owner_md, cond_n, daemonset_obj, event_controller, event_scheduler, job_obj, namespace_obj, node_obj, quota_obj, replicaset_idle_obj, replicaset_obj, runtimeclass_obj, statefulset_obj,
)
