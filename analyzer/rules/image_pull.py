"""image-pull's next action: which of the contract's three fixes (the reference, the pull secret, the node's access
to the registry) the runtime's words point to, with the image, the secret and the node named (rules/node_start.py
decides the word)."""

from __future__ import annotations

import re


# What the runtime says when a pull fails, by which of the contract's three fixes it asks for (containerd's and
# CRI-O's errors as the kubelet's image manager wraps them; registries answer 401/403/404/429 in their own words).
_NOT_THERE = re.compile(r"not found|manifest unknown|name unknown|repository does not exist|NotFound", re.I)
_NOT_ALLOWED = re.compile(r"unauthorized|authentication required|denied|forbidden|\b40[13]\b|no basic auth", re.I)
_RATE = re.compile(r"toomanyrequests|too many requests|rate limit|\b429\b", re.I)
_UNREACHABLE = re.compile(r"i/o timeout|no such host|connection refused|dial tcp|x509|tls|network is unreachable|"
                          r"deadline exceeded|connection reset", re.I)


def _registry(image: str) -> str:
    """The registry host of an image reference (docker.io when its first part is no host, as the runtime reads it)."""
    first, sep, _ = image.partition("/")
    return first if sep and ("." in first or ":" in first or first == "localhost") else "docker.io"


def image_action(spec: dict, node: str, row: dict, event: str) -> str:
    """The contract's three fixes (the reference, the pull secret, the node's access to the registry), the one the
    runtime's words point to, with the image, the secret and the node named."""
    name = row.get("container")
    containers = [c for key in ("initContainers", "containers") for c in spec.get(key) or () if isinstance(c, dict)]
    image = str(next((c.get("image") for c in containers if c.get("name") == name), "") or "")
    registry = _registry(image)
    text = f"{(row.get('waiting') or {}).get('message') or ''} {event}"
    ref = f"image {image!r} of container {name}"
    if (row.get("waiting") or {}).get("reason") == "InvalidImageName":
        return f"fix the {ref}: it is not a valid image reference"
    if _RATE.search(text):
        return f"{registry} limits pulls from node {node}: pull with credentials (a pull secret), or use a mirror"
    if _NOT_ALLOWED.search(text):
        secrets = [str(s.get("name")) for s in spec.get("imagePullSecrets") or () if isinstance(s, dict)]
        have = f"its imagePullSecrets {', '.join(secrets)}" if secrets else "it has no imagePullSecrets"
        return f"give the pod a pull secret that {registry} accepts for {image} ({have}), or fix the {ref}"
    if _NOT_THERE.search(text):
        return f"fix the {ref}: {registry} says it does not exist (the tag, the digest or the repository)"
    if _UNREACHABLE.search(text):
        return f"let node {node} reach {registry} (DNS, proxy, firewall, the registry's certificate), or use a mirror"
    return f"fix the {ref}, its pull secret, or node {node}'s access to {registry}"
