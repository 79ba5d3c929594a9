"""The README's promises: its quickstart runs, its measure table is the registry's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pdeval
from pdeval.cli.commands import measure_table_markdown

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_code_runs_and_gives_what_it_says(capsys):
    import matplotlib

    matplotlib.use("Agg")
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 2, "the README lost its python code blocks"
    namespace: dict = {}
    for number, block in enumerate(blocks):  # later blocks go on from the quickstart's names
        exec(compile(block, f"README python block {number + 1}", "exec"), namespace)
    res, curve = namespace["res"], namespace["curve"]
    assert list(res.columns) == ["run", "query_id", "measure", "value"]
    assert set(curve["level"]) == {90, 70, 50, 30, 10}
    assert {"tau_b", "tau_ap"} == set(curve["method"])
    assert capsys.readouterr().out.strip()


SHARED = README.parents[1] / "shared" / "data"


def test_readme_download_examples_run_from_a_mirror(tmp_path, monkeypatch):
    """Blocks fenced ```python download``` fetch full collections: run them from the data kept
    beside the repository, laid out as a mirror, into a temporary cache."""
    if not SHARED.is_dir():
        pytest.skip(f"the project's shared data is not at {SHARED}: no mirror for the download examples")
    monkeypatch.setenv("PDEVAL_DATA_MIRROR", str(SHARED))
    monkeypatch.setenv("PDEVAL_CACHE", str(tmp_path))
    blocks = re.findall(r"```python download\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README lost its download example"
    namespace: dict = {"pdeval": pdeval}
    for number, block in enumerate(blocks):
        exec(compile(block, f"README download block {number + 1}", "exec"), namespace)
    assert namespace["dl"].runs["run"].nunique() == 63


def test_measure_table_is_generated_from_the_registry():
    text = README.read_text()
    table = text.split("<!-- measures:start -->")[1].split("<!-- measures:end -->")[0].strip()
    assert table == measure_table_markdown(), "regenerate it with: pdeval measures --markdown"
    for name in pdeval.measures.REGISTRY:
        assert f"`{name}`" in table


def test_readme_keeps_exactly_the_two_setup_commands():
    text = README.read_text()
    first_block = re.search(r"```sh\n(.*?)```", text, flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
