"""What the API server's recorded refusal says (an attempt's answer, an owner's FailedCreate event), in words, and
the object that refused where the bundle holds it (rules/admission.py decides the word)."""

from __future__ import annotations

from analyzer.model.target import ServerText
from analyzer.model.views import Cluster
from analyzer.targets.server_text import SAYS_DENIED, SAYS_UNAVAILABLE


def text_reason(text: ServerText) -> str:
    d = text.detail
    if text.says == SAYS_DENIED and d.get("webhook"):
        return f"admission webhook {d['webhook']} denied it: {d.get('message', '')}"
    if text.says == SAYS_DENIED and d.get("policy"):
        binding = f" (binding {d['binding']})" if d.get("binding") else ""
        return f"ValidatingAdmissionPolicy {d['policy']}{binding} denied it: {d.get('message', '')}"
    if text.says == SAYS_DENIED and d.get("podSecurity"):
        return f"Pod Security {d['podSecurity']} denied it: {d.get('message', '')}"
    if text.says == SAYS_UNAVAILABLE:
        return f"webhook {d.get('webhook', '?')} could not be called: {d.get('message', '')}"
    return f"the API server said: {text.text}"


def policy_objects(cluster: Cluster, text: ServerText, namespace: str, ev: dict) -> None:
    """Names the denying object where the bundle holds it."""
    world = cluster.admission
    d = text.detail
    if world is None:
        return
    if d.get("webhook") and d["webhook"] in world.webhook_names:
        ev["denied_by"] = f"webhook {d['webhook']} of {world.webhook_names[d['webhook']]}"
    elif d.get("policy"):
        held = d["policy"] in world.policies
        ev["denied_by"] = (f"ValidatingAdmissionPolicy {d['policy']}" + ("" if held else " (not in the bundle)")
                           + (f", bound by {d['binding']}" if d.get("binding") in world.bindings else ""))
    elif d.get("podSecurity"):
        level = world.labels_of(namespace).get("pod-security.kubernetes.io/enforce")
        ev["denied_by"] = (f"namespace {namespace} enforces Pod Security {level}" if level
                           else f"Pod Security {d['podSecurity']} (the cluster's default level)")
