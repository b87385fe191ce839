"""The fast schema engine (jsonschema-rs) and the reference engine (jsonschema) agree.

Both run on the same inputs, valid and broken, and must report the same
findings (same files, JSON paths and messages), so the speed never changes a
verdict.
"""

from __future__ import annotations

import copy
import json

import pytest

from analyzer.bundle.reading import open_bundle
from analyzer.bundle.validation import SchemaSet, check_pod_object, load_documents
from helpers import LAB, copy_bundle

ENGINES = ("jsonschema-rs", "jsonschema")


def _findings(path) -> list[str]:
    out = []
    for engine in ENGINES:
        with open_bundle(path) as b:
            loaded = load_documents(b, engine=engine)
        out.append(sorted(str(v) for v in loaded.violations))
    assert out[0] == out[1], f"engines disagree:\n{out[0]}\n{out[1]}"
    return out[0]


def test_engines_agree_on_the_shipped_example():
    assert _findings(LAB) == []


def _break(b) -> None:
    pods = json.loads((b / "pods.json").read_text())
    items = pods["items"]
    items[0]["spec"]["containers"] = "cuda"
    items[1]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = {"v": 1}
    items[2]["spec"]["tolerations"][0]["effect"] = "Sometimes"
    del items[3]["metadata"]["name"]
    items[4]["spec"]["containers"] = []
    items[5]["spec"]["nodeSelector"] = {"a": 1}
    items[6]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Near"}]}]}}}
    items[7]["status"]["phase"] = 3
    items.append("not an object")
    (b / "pods.json").write_text(json.dumps(pods, indent=4))
    nodes = json.loads((b / "nodes.json").read_text())
    nodes["items"][0]["spec"]["taints"] = [{"key": "a"}]
    nodes["items"][1]["status"]["capacity"]["cpu"] = "1.5.5"
    del nodes["items"][2]["status"]
    (b / "nodes.json").write_text(json.dumps(nodes, indent=4))
    man = json.loads((b / "manifest.json").read_text())
    man["formatVersion"] = "1"
    man["files"][0]["sha256"] = "0" * 64
    (b / "manifest.json").write_text(json.dumps(man, indent=2))


def test_engines_agree_on_broken_inputs(tmp_path):
    b = copy_bundle(tmp_path)
    _break(b)
    found = _findings(b)
    assert len(found) >= 12
    assert any("pods.json: $.items[9]: expected object, found string" in f for f in found)
    assert any("nodes.json: $.items[2].status: expected required key 'status'" in f for f in found)


@pytest.mark.parametrize("mutate", [
    lambda p: p["spec"].__setitem__("containers", [{"name": "x", "resources": {"requests": {"cpu": "1e400"}}}]),
    lambda p: p.__setitem__("metadata", []),
    lambda p: p["spec"].__setitem__("schedulingGates", [{}]),
    lambda p: p["spec"].__setitem__("overhead", {"cpu": -1}),
])
def test_engines_agree_on_single_objects(mutate):
    pods = json.loads((LAB / "pods.json").read_text())
    pod = copy.deepcopy(pods["items"][0])
    mutate(pod)
    assert check_pod_object(pod, engine="jsonschema-rs") == check_pod_object(pod, engine="jsonschema")


def test_default_engine_is_the_fast_one():
    assert SchemaSet().engine == "jsonschema-rs"


def test_each_schema_keeps_every_definition_it_reaches_and_no_other():
    # A schema carries only the shared definitions it refers to (bundle/schemas.load_schema): each $ref still
    # resolves, and the fifty it never reaches are not compiled at every start.
    import re

    from analyzer.bundle import schemas

    shared = json.loads((schemas.schema_dir() / schemas.DEFS_FILE).read_text())["$defs"]
    for path in sorted(schemas.schema_dir().glob("*.schema.json")):
        if path.name == schemas.DEFS_FILE:
            continue
        schema = schemas.load_schema(path.name.removesuffix(".schema.json"))
        text = json.dumps(schema)
        refs = set(re.findall(r'"\$ref": "#/\$defs/([^"/]+)"', text))
        assert refs <= set(schema["$defs"]), path.name
        assert set(schema["$defs"]) <= refs | set(json.loads(path.read_text()).get("$defs", {})), path.name
        assert len(schema["$defs"]) < len(shared), path.name
