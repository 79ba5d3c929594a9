"""The notebooks in ``notebooks/`` run end to end, in fast mode, on the data the repository carries.

Each notebook is executed with nbclient in a kernel that runs *this* interpreter
(``sys.executable``): a temporary ``python3`` kernel spec pointing at it is the only spec the
kernel manager sees, so a user-level ``python3`` kernel of another environment cannot be picked
up. ``PDEVAL_FAST=1`` makes the notebooks use reduced sample counts (all of them together run in
about a minute); ``PDEVAL_FIGURES`` sends their PNG figures to a temporary folder, so the test
never overwrites the committed figures. The notebooks are executed in memory and not saved.

The committed notebooks must also carry the outputs of a full run (so that they read on GitHub):
every code cell executed, in order, without an error, and every figure they save present in
``notebooks/figures/``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
EXPECTED = {
    "alternatives_to_bpref",
    "inferred_ap",
    "rankeff",
    "rpref",
    "training_sensitivity",
    "pool_bias",
    "label_agreement_llmjudge",
    "label_agreement_rag",
    "leaderboard_nist_vs_gpt4",
    "sampled_judgments",
    "bounds",
    "reproducibility",
    "estimates",
    "pool_bias_and_budgets",
    "ties",
    "llm_judges",
    "calibration",
}
CELL_TIMEOUT = 600  # seconds per cell; the fast settings need far less


def _kernel_manager(spec_dir: Path):
    """A kernel manager whose only ``python3`` kernel spec runs ``sys.executable``."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    write_kernel_spec(spec_dir / "python3")
    specs = KernelSpecManager()
    specs.kernel_dirs = [str(spec_dir)]
    specs.ensure_native_kernel = False
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs)


def test_every_notebook_is_there():
    assert {p.stem for p in PATHS} >= EXPECTED


def test_kernel_is_this_interpreter(tmp_path):
    km = _kernel_manager(tmp_path / "specs")
    assert km.kernel_spec.argv[0] == sys.executable


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_in_fast_mode(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    source = path.read_text(encoding="utf-8")
    if "bm25_runs" in source:
        pytest.importorskip("bm25s", reason="the notebook makes BM25 runs with the bm25s library (test extra)")
    monkeypatch.setenv("PDEVAL_FAST", "1")
    monkeypatch.setenv("PDEVAL_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.reads(source, as_version=4)
    cells = "".join(cell.source for cell in nb.cells)
    if '"shared" / "data"' in cells and not (REPO.parent / "shared" / "data").is_dir():
        pytest.skip("the notebook reads the shared data beside the repository (../shared/data), which is absent")
    client = nbclient.NotebookClient(
        nb,
        km=_kernel_manager(tmp_path / "specs"),
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError with the failing cell's traceback
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    fast = [o for o in outputs if o.get("output_type") == "stream" and "FAST=True" in o.get("text", "")]
    assert fast, "the notebook should print FAST=True under PDEVAL_FAST=1"
    # every figure the notebook saves was written (to the temporary folder)
    for name in re.findall(r'save\([^,]+,\s*"([^"]+)"', source):
        assert (tmp_path / "figures" / f"{name}.png").is_file(), name


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_committed_notebook_has_full_run_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    counts = [cell.get("execution_count") for cell in code]
    assert all(isinstance(c, int) for c in counts), "every code cell must be executed"
    assert counts == sorted(counts), "cells must have been executed in order"
    for cell in code:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", cell["source"][:200]
            if output.get("output_type") == "stream":
                assert "FAST=True" not in "".join(output.get("text", "")), "committed outputs must come from a full run"
    source = "".join("".join(cell["source"]) for cell in code)
    for name in re.findall(r'save\([^,]+,\s*"([^"]+)"', source):
        assert (NOTEBOOKS / "figures" / f"{name}.png").is_file(), f"notebooks/figures/{name}.png is missing"


COPIES = sorted((NOTEBOOKS / "collections").glob("*.ipynb"))


@pytest.mark.parametrize("path", COPIES, ids=[p.stem for p in COPIES])
def test_a_copy_on_another_collection_says_so_and_shows_its_own_verdicts(path):
    """The prose of a copy was written for the notebook's own run: the copy's first cell must
    say which collection it runs on and repeat the verdicts computed on it (its CSV)."""
    import pandas as pd

    stem, collection = path.stem.split(".", 1)
    first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    assert f"runs on `{collection}`" in first
    verdicts = pd.read_csv(NOTEBOOKS / "verdicts" / f"{path.stem}.csv")
    rows = [line for line in first.splitlines() if line.startswith("| ") and not line.startswith("| paper's")]
    assert len(rows) == len(verdicts)
    for line, agrees in zip(rows, verdicts["agrees"]):
        assert f"| {agrees} |" in line
