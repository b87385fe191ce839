"""One stand-in cluster for the collector tests: scripts/collect.py run against tests/fake_kubectl/kubectl.

The fake kubectl is put first on PATH; it replays the JSON files in `data` (the lab's real outputs by default,
copied per test), real error texts on demand, and logs every argv it is given. No cluster, no network.
The `kube` fixture (conftest.py) gives each test its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import LAB, REPO

SCRIPT = REPO / "scripts" / "collect.py"
FAKE_DIR = REPO / "tests" / "fake_kubectl"


class Kube:
    """One stand-in cluster: replay data, a work dir (cwd), the argv log."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        self.work = tmp / "work"
        self.log = tmp / "kubectl.log"
        self.data.mkdir()
        self.work.mkdir()
        for f in LAB.glob("*.json"):
            shutil.copy(f, self.data / f.name)
        shutil.copy(LAB / "admission-errors.txt", self.data / "admission-errors.txt")
        shutil.copytree(LAB / "manifests", self.work / "manifests")
        self.extra: dict[str, str] = {}

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        # The fake's `#!/usr/bin/env python3` finds this interpreter's directory
        # first (fast; no pyenv shim), after the fake kubectl itself.
        env["PATH"] = os.pathsep.join([str(FAKE_DIR), os.path.dirname(sys.executable),
                                       env.get("PATH", "")])
        env["FAKE_KUBECTL_DATA"] = str(self.data)
        env["FAKE_KUBECTL_LOG"] = str(self.log)
        env["PYTHONPATH"] = str(REPO)
        env.pop("KUBECONFIG", None)
        env.update(self.extra)
        env.update(extra)
        return env

    def collect(self, *args: str, python: str | None = None, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([python or sys.executable, str(SCRIPT), *args], cwd=self.work,
                              env=self.env(**extra), capture_output=True, text=True, timeout=60, check=False)

    def popen(self, *args: str, **extra: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(SCRIPT), *args], cwd=self.work,
                                env=self.env(**extra), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def bundle(self, result: subprocess.CompletedProcess) -> Path:
        return self.work / result.stdout.splitlines()[-1]

    def argvs(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def set_list(self, resource: str, obj: dict) -> bytes:
        data = (json.dumps(obj, indent=4, ensure_ascii=False) + "\n").encode()
        (self.data / f"{resource}.json").write_bytes(data)
        return data
