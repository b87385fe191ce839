"""Rewrite the README's worked `why --explain` example with what the command prints now.

    python scripts/refresh_readme_example.py

tests/test_readme.py fails when the example is stale; this script is the fix.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMAND = "$ gpu-triage why dumps/lab-seven-states-v1.36 lab/exhausted --explain\n"


def main() -> int:
    out = subprocess.run([sys.executable, "-m", "analyzer", "why", "dumps/lab-seven-states-v1.36", "lab/exhausted",
                          "--explain"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    readme = (REPO / "README.md").read_text()
    start = readme.index(COMMAND) + len(COMMAND)
    end = readme.index("```", start)
    (REPO / "README.md").write_text(readme[:start] + out + readme[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
