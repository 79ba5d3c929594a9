"""Progress bars and figures in a notebook: no ipywidgets warning, one bar per task, each figure
shown once without a ``<seaborn.axisgrid.FacetGrid ...>`` line.

The notebook is written into ``tmp_path`` and executed by nbclient in a kernel that runs this
interpreter (a temporary kernel spec, as tests/test_notebooks.py does); its first cell makes
``import ipywidgets`` fail, so the test holds whether or not ipywidgets is installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pdeval
from pdeval.common.progress import one_bar, progress_bar
from test_notebooks import _kernel_manager  # the same kernel spec as the notebook tests
from locations import REPO

MEASURES = ["AP", "P@10", "nDCG@10"]


def _bar_starts(text: str, desc: str) -> int:
    """How many bars named ``desc`` were drawn from zero (tqdm's text bar)."""
    return len(re.findall(rf"{re.escape(desc)}:\s+0%", text))


def test_one_bar_per_task_on_a_terminal(capsys):
    clef = pdeval.datasets.load("clef2018")
    result = pdeval.evaluate(clef.runs, clef.qrels, MEASURES)
    capsys.readouterr()
    pdeval.discriminative_power(result, n_resamples=1000, progress=True)  # one group per measure
    err = capsys.readouterr().err
    assert _bar_starts(err, "bootstrap") == 1
    assert "/6 [" in err  # the one bar counts the chunks of every group (2 each)
    pdeval.discriminative_power(result, n_resamples=1000, progress=False)
    assert capsys.readouterr().err == ""


def test_nested_tasks_share_the_outer_bar(capsys):
    @one_bar
    def inner():
        return sum(progress_bar(range(3), enabled=True, total=3, desc="inner"))

    @one_bar
    def outer():
        return [inner() for _ in range(2)] + [sum(progress_bar(range(4), enabled=True, total=4, desc="outer"))]

    assert outer() == [3, 3, 6]
    err = capsys.readouterr().err
    assert _bar_starts(err, "inner") == 1 and "/10 [" in err and _bar_starts(err, "outer") == 0
    assert list(progress_bar(range(2), enabled=True, total=2, desc="alone")) == [0, 1]  # no task: its own bar
    assert _bar_starts(capsys.readouterr().err, "alone") == 1


def test_a_finished_bar_is_drawn_at_100_percent(capsys):
    """Issue class 6: after a sub-second task the bar's last drawing was e.g. "83% 5/6" (tqdm
    redraws at most every 0.1 s) and a notebook kept it; a finished bar is drawn complete."""

    @one_bar
    def task():
        return sum(progress_bar(range(6), enabled=True, total=6, desc="fast"))

    assert task() == 15
    err = capsys.readouterr().err
    assert "6/6" in err and "100%" in err
    assert sum(progress_bar(range(6), enabled=True, total=6, desc="alone")) == 15  # its own bar too
    assert "6/6" in capsys.readouterr().err

    @one_bar
    def failing():
        for i in progress_bar(range(6), enabled=True, total=6, desc="broken"):
            if i == 2:
                raise ValueError("stop")

    with pytest.raises(ValueError):
        failing()
    assert "6/6" not in capsys.readouterr().err  # an interrupted bar is not shown as complete


def test_public_functions_finish_their_bars(capsys):
    clef = pdeval.datasets.load("clef2018")
    result = pdeval.evaluate(clef.runs, clef.qrels, MEASURES)
    capsys.readouterr()
    pdeval.tukey_hsd(result, measures="AP", n_resamples=200, progress=True)
    pdeval.swap_rates(result, c=6, n_resamples=60, progress=True)
    err = capsys.readouterr().err
    finals = re.findall(r"(\d+)/(\d+) \[", err)
    assert finals and err.count("100%") >= 2, err[-500:]


CELLS = [
    f"""import sys
sys.modules["ipywidgets"] = None  # a notebook without ipywidgets
sys.path.insert(0, {str(REPO)!r})
import pdeval
from pdeval.report import figures
clef = pdeval.datasets.load("clef2018")
result = pdeval.evaluate(clef.runs, clef.qrels, {MEASURES!r})
""",
    "power = pdeval.discriminative_power(result, n_resamples=1000, progress=True)",
    "swaps = pdeval.swap_rates(result, c=6, n_resamples=60, progress=True)",
    "figures.swap_rate_curve(swaps.bins)",  # a FacetGrid as the cell's value
    "result.ir.plot.topic_distributions(measures='AP')",  # a Figure as the cell's value, through the accessor
    "grid = figures.swap_rate_curve(swaps.bins)\ntype(grid).__name__",  # kept: still a FacetGrid
    "grid",  # shown again from its name: the figure once more, no text line
]


def test_a_notebook_without_ipywidgets(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    path = tmp_path / "progress.ipynb"
    nbformat.write(nb, path)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, km=_kernel_manager(tmp_path / "specs"), kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = [cell.outputs for cell in nb.cells]
    streams = ["".join(o.get("text", "") for o in cell if o.output_type == "stream") for cell in outputs]
    everything = "".join(streams)
    assert "TqdmWarning" not in everything and "IProgress" not in everything
    assert _bar_starts(streams[1], "bootstrap") == 1  # three measures, one bar
    assert _bar_starts(streams[2], "swap trials") == 1
    for cell in outputs[3:5] + outputs[6:]:  # each figure once, as an image, and no text repr of the grid
        images = [o for o in cell if "image/png" in o.get("data", {})]
        assert len(images) == 1, [o.output_type for o in cell]
        assert not any("FacetGrid" in str(o.get("data", {}).get("text/plain", "")) for o in cell)
    kept = [o for o in outputs[5] if o.output_type == "execute_result"]
    assert kept[0]["data"]["text/plain"] == "'FacetGrid'"
    assert sum("image/png" in o.get("data", {}) for o in outputs[5]) == 1  # drawn by the backend, once


def test_no_bar_comes_from_tqdm_auto():
    """tqdm.auto warns 'IProgress not found' in a notebook without ipywidgets: every bar
    (downloads and the report's stages too) is made by pdeval.common.progress.bar_class."""
    from tqdm.std import tqdm

    from pdeval.common.progress import bar_class, in_notebook

    assert not in_notebook() and bar_class() is tqdm
    offenders = [p.relative_to(REPO) for p in (REPO / "pdeval").rglob("*.py") if "from tqdm.auto" in p.read_text(encoding="utf-8")]
    assert offenders == []
