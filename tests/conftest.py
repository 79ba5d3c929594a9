"""Test-wide settings.

Under ``CI`` (set by the continuous-integration run) Hypothesis draws the same examples on
every run (``derandomize=True``), so a submission is judged on the examples it was checked
with; locally it keeps drawing new ones, which is how edge cases are found.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

#: trec_eval 10.0's sources (the conformance tests build the binary from them)
TOOLS = Path(__file__).resolve().parents[2] / "shared" / "tools" / "trec_eval-10.0"

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory) -> Path:
    """trec_eval 10.0 built once per session into a temporary folder."""
    if not TOOLS.exists():
        pytest.skip(f"trec_eval's source ({TOOLS}) is not available on this machine")
    if shutil.which("make") is None or (shutil.which("gcc") or shutil.which("cc")) is None:
        pytest.skip("no C compiler (gcc/cc) and make to build trec_eval 10.0")
    folder = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(TOOLS, folder)
    built = subprocess.run(["make", "trec_eval"], cwd=folder, capture_output=True, text=True, timeout=600)
    if built.returncode != 0 or not (folder / "trec_eval").exists():
        pytest.skip(f"trec_eval 10.0 did not build: {built.stderr[-300:]}")
    return folder / "trec_eval"
