"""What the API server said about a pod it refused (or admitted): an attempt's dry-run stderr or an owner's
FailedCreate event, reduced to the admission step it speaks for. Parsed in linear time: the text is untrusted.

The forms (admission.md, "the API server's order"), as the real components write them:
- built-in plugins: `pods "x" is forbidden: …` (admission.NewForbidden), among them
  RuntimeClass `pod rejected: RuntimeClass "x" not found` (plugin/pkg/admission/runtimeclass),
  ResourceQuota `exceeded quota: …` (plugin/pkg/admission/resourcequota),
  LimitRanger `maximum nvidia.com/gpu usage per Container is 1, but limit is 2`, `minimum … but request is …`,
  `… max limit to request ratio per Container is …` (plugin/pkg/admission/limitranger/admission.go),
  Pod Security `violates PodSecurity "restricted:latest": …` (staging apiserver pkg/admission/plugin/security);
- validation: `Pod "x" is invalid: <field path>: <error>` (pkg/apis/core/validation, field.ErrorList);
- a webhook's denial, no prefix: `admission webhook "name" denied the request: …`
  (staging apiserver pkg/admission/plugin/webhook/errors/statuserror.go ToStatusErr); Gatekeeper's message
  starts with `[constraint]`, Kyverno's says `resource Pod/ns/x was blocked due to the following policies`;
- a webhook that could not be called: `failed calling webhook "name": failed to call webhook: Post …`
  (staging apiserver pkg/util/webhook/error.go ErrCallingWebhook);
- a ValidatingAdmissionPolicy: `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: …`
  (staging apiserver pkg/admission/plugin/policy/validating/dispatcher.go), which kubectl prints as
  `The pods "x" is invalid: : ValidatingAdmissionPolicy …`: a policy, not validation.
"""

from __future__ import annotations

import re

from analyzer.model.target import ServerText

_NAMED = re.compile(r'(?:pods|Pod) "(?P<name>[^"]*)" is (?:forbidden|invalid): ')
_QUOTA_PARTS = ("exceeded quota: ", ", requested: ", ", used: ", ", limited: ")
MAX_TEXT = 8192  # a real admission message is a few hundred characters
MAX_LINES = 64  # lines of one refusal kept (Kyverno's denial spans several)

# What the API server's text says, reduced to the step it speaks for.
SAYS_RUNTIMECLASS = "runtimeclass"
SAYS_INVALID = "invalid"
SAYS_LIMITRANGE = "limit-range"
SAYS_DENIED = "denied"
SAYS_UNAVAILABLE = "unavailable"
SAYS_QUOTA = "quota"
SAYS_OTHER = "other-refusal"
SAYS_ADMITTED = "admitted"

_CALLING = 'failed calling webhook "'
_WEBHOOK = 'admission webhook "'
_POLICY = "ValidatingAdmissionPolicy '"
_PODSECURITY = 'violates PodSecurity "'
_RUNTIMECLASS = re.compile(r'RuntimeClass "(?P<rc>[^"]*)" not found')
# LimitRanger's three constraints (limitranger/admission.go minConstraint, maxConstraint,
# limitRequestRatioConstraint); older releases end the sentence with a full stop.
_LIMIT = re.compile(r"(?P<bound>minimum|maximum) (?P<resource>[^ ,\[\]]+) usage per (?P<per>Container|Pod) is "
                    r"(?P<value>[^ ,.\[\]]+)")
_RATIO = re.compile(r"(?P<resource>[^ ,\[\]]+) max limit to request ratio per (?P<per>Container|Pod) is "
                    r"(?P<value>[^ ,\[\]]+)")
_SERVICE = re.compile(r'no endpoints available for service "(?P<service>[^"]*)"')
_FIELD = re.compile(r"\[?(?P<field>[A-Za-z][\w.\[\]/-]*): (?P<error>Invalid value|Required value|Unsupported value|"
                    r"Forbidden|Duplicate value|Too many|Too long|Not found|Internal error)")


def _between(text: str, start: str, end: str) -> tuple[str, int] | None:
    """The text after `start` up to `end`, and where it ends; str.find only (linear whatever the text)."""
    at = text.find(start)
    if at < 0:
        return None
    begin = at + len(start)
    stop = text.find(end, begin)
    return (text[begin:stop], stop + len(end)) if stop >= 0 else None


def _quota_detail(why: str) -> dict | None:
    """`exceeded quota: NAME, requested: …, used: …, limited: …`, split with str.find: linear time
    whatever a hostile event says (a regex with .*? backtracks quadratically)."""
    positions = []
    start = 0
    for part in _QUOTA_PARTS:
        at = why.find(part, start)
        if at < 0:
            return None
        positions.append((at, at + len(part)))
        start = at + len(part)
    names = ("quota", "requested", "used", "limited")
    out = {}
    for i, name in enumerate(names):
        begin = positions[i][1]
        end = positions[i + 1][0] if i + 1 < len(positions) else len(why)
        out[name] = why[begin:end].strip()
    return out


def _webhook(text: str) -> ServerText | None:
    found = _between(text, _WEBHOOK, '" denied the request')
    if found is None:
        return None
    name, end = found
    message = text[end:].removeprefix(":").strip() or "without explanation"
    detail = {"webhook": name, "message": message}
    if message.startswith("[") and "]" in message[:256]:
        detail["constraint"] = message[1:message.index("]")]  # Gatekeeper names the constraint first
    return ServerText(says=SAYS_DENIED, text=text, detail=detail)


def _policy(text: str) -> ServerText | None:
    found = _between(text, _POLICY, "'")
    binding = _between(text, "' with binding '", "'")
    if found is None or " denied request" not in text:
        return None
    at = text.find("denied request:")
    message = text[at + len("denied request:"):].strip() if at >= 0 else ""
    detail = {"policy": found[0], "message": message}
    if binding is not None:
        detail["binding"] = binding[0]
    return ServerText(says=SAYS_DENIED, text=text, detail=detail)


def _pod_security(text: str) -> ServerText | None:
    found = _between(text, _PODSECURITY, '"')
    if found is None:
        return None
    level, end = found
    return ServerText(says=SAYS_DENIED, text=text,
                      detail={"podSecurity": level, "message": text[end:].removeprefix(":").strip()})


def _unavailable(text: str) -> ServerText | None:
    found = _between(text, _CALLING, '"')
    if found is None:
        return None
    name, end = found
    detail = {"webhook": name, "message": text[end:].removeprefix(":").strip()}
    service = _SERVICE.search(text)
    if service:
        detail["service"] = service.group("service")
    return ServerText(says=SAYS_UNAVAILABLE, text=text, detail=detail)


def _limit_range(text: str) -> ServerText | None:
    m = _LIMIT.search(text) or _RATIO.search(text)
    if m is None:
        return None
    detail = {"resource": m.group("resource"), "per": m.group("per"), "bound": m.group("value")}
    return ServerText(says=SAYS_LIMITRANGE, text=text, detail=detail)


def read_text(text: str) -> ServerText | None:
    """Classify an admission refusal in any of its forms; None when the text is no admission refusal.
    The step markers are searched first, whichever comes first in the text (a webhook's own message may quote
    anything after its prefix); `is invalid:` and `is forbidden:` alone are the fallback. The text kept starts
    where the step speaks (kubectl's `Error from server …: error when creating "file":` is left out)."""
    text = text[:MAX_TEXT]
    readers = ((_CALLING, _unavailable), (_WEBHOOK, _webhook), (_POLICY, _policy), (_PODSECURITY, _pod_security))
    for at, reader in sorted(((text.find(marker), reader) for marker, reader in readers if marker in text),
                             key=lambda pair: pair[0]):
        said = reader(text[at:])
        if said is not None:
            return said
    forbidden = text.find(" is forbidden: ")
    why = text[forbidden + len(" is forbidden: "):] if forbidden >= 0 else text
    m = _RUNTIMECLASS.search(why)
    if m:
        return ServerText(says=SAYS_RUNTIMECLASS, text=why, detail={"runtimeClassName": m.group("rc")})
    detail = _quota_detail(why)
    if detail is not None:
        return ServerText(says=SAYS_QUOTA, text=why, detail=detail)
    if "failed quota:" in why or "status unknown for quota" in why:
        return ServerText(says=SAYS_QUOTA, text=why)
    said = _limit_range(why)
    if said is not None:
        return said
    invalid = text.find(" is invalid: ")
    if invalid >= 0:
        named = _NAMED.search(text)
        field = _FIELD.match(text[invalid + len(" is invalid: "):])
        return ServerText(says=SAYS_INVALID, text=text[named.start():] if named else text,
                          detail={"field": field.group("field")} if field else {})
    if forbidden >= 0:
        return ServerText(says=SAYS_OTHER, text=why)
    return None


def _refusal_lines(lines: list[str], start: int) -> str:
    """A refusal and the lines that continue it (a webhook's message may hold newlines), up to the next
    `Error from server` or `error:` line."""
    out = [lines[start][:MAX_TEXT]]
    for line in lines[start + 1: start + MAX_LINES]:
        if line.startswith(("Error from server", "error:", "Warning:")):
            break
        out.append(line[:MAX_TEXT])
    return "\n".join(out)[:MAX_TEXT]


def text_for_pod(stderr: str, exit_status: int, pod_name: str) -> ServerText | None:
    """What an apply's stderr says about one pod of the manifest (a file can hold several). A refusal naming no
    pod (a webhook's, kubectl's `error when creating "file":`) is the pod's when no line names it."""
    lines = stderr[: MAX_TEXT * 16].splitlines()
    unnamed: ServerText | None = None
    for i, line in enumerate(lines):
        m = _NAMED.search(line[:MAX_TEXT])
        if m and m.group("name") == pod_name:
            said = read_text(_refusal_lines(lines, i))
            if said is not None:
                return said
        elif m is None and unnamed is None and line.startswith("Error from server"):
            unnamed = read_text(_refusal_lines(lines, i))
    if unnamed is not None:
        return unnamed
    if exit_status == 0:
        return ServerText(says=SAYS_ADMITTED, text="admitted (exit status 0)")
    return None  # the answer is about something else (a connection error, another object)


def text_from_event(message: str) -> ServerText | None:
    """A FailedCreate event's message (`Error creating: …`) when it is an admission refusal."""
    return read_text(message[:MAX_TEXT])
