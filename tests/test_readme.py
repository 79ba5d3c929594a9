"""The README's and the user guide's promises: their examples run, the measure table is the registry's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pdeval
from pdeval.cli.commands import measure_table_markdown

README = Path(__file__).resolve().parents[1] / "README.md"
GUIDE = README.parent / "docs" / "guide"

#: pages of the user guide whose python examples go on from the README's quickstart (its names:
#: ``clef``, ``runs``, ``qrels``, ``res``, ``reduced``, ...); each runs in its own copy of them
EXECUTED_PAGES = ["sampled", "meta-evaluation", "statistics", "automatic-judgments", "bounds", "integrations"]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def run_blocks(blocks: list[str], namespace: dict, where: str) -> dict:
    for number, block in enumerate(blocks):  # later blocks go on from the earlier blocks' names
        exec(compile(block, f"{where} python block {number + 1}", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def quickstart() -> dict:
    import matplotlib

    matplotlib.use("Agg")
    blocks = python_blocks(README.read_text())
    assert blocks, "the README lost its quickstart"
    return run_blocks(blocks, {}, "README")


def test_readme_code_runs_and_gives_what_it_says(quickstart):
    res, curve = quickstart["res"], quickstart["curve"]
    assert list(res.columns) == ["run", "query_id", "measure", "value"]
    assert set(curve["level"]) == {90, 70, 50, 30, 10}
    assert {"tau_b", "tau_ap"} == set(curve["method"])


@pytest.mark.parametrize("page", EXECUTED_PAGES)
def test_guide_examples_run(page, quickstart):
    blocks = python_blocks((GUIDE / f"{page}.md").read_text())
    assert blocks, f"docs/guide/{page}.md lost its python examples"
    run_blocks(blocks, dict(quickstart), f"docs/guide/{page}.md")


def test_readme_is_a_landing_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert "make docs" in text
    for link in re.findall(r"\]\((docs/[^)#]+)", text):  # links into the documentation's pages
        assert (README.parent / link).is_file(), f"the README links to {link}, which does not exist"


SHARED = README.parents[1] / "shared" / "data"


def test_readme_download_examples_run_from_a_mirror(tmp_path, monkeypatch):
    """Blocks fenced ```python download``` fetch full collections: run them from the data kept
    beside the repository, laid out as a mirror, into a temporary cache."""
    if not SHARED.is_dir():
        pytest.skip(f"the project's shared data is not at {SHARED}: no mirror for the download examples")
    monkeypatch.setenv("PDEVAL_DATA_MIRROR", str(SHARED))
    monkeypatch.setenv("PDEVAL_CACHE", str(tmp_path))
    blocks = re.findall(r"```python download\n(.*?)```", (GUIDE / "datasets.md").read_text(), flags=re.S)
    assert blocks, "docs/guide/datasets.md lost its download example"
    namespace: dict = {"pdeval": pdeval}
    for number, block in enumerate(blocks):
        exec(compile(block, f"docs/guide/datasets.md download block {number + 1}", "exec"), namespace)
    assert namespace["dl"].runs["run"].nunique() == 63


def test_measure_table_is_generated_from_the_registry():
    text = (GUIDE / "measures.md").read_text()
    table = text.split("<!-- measures:start -->")[1].split("<!-- measures:end -->")[0].strip()
    assert table == measure_table_markdown(), "regenerate it with: pdeval measures --markdown"
    for name in pdeval.measures.REGISTRY:
        assert f"`{name}`" in table


def test_readme_keeps_exactly_the_two_setup_commands():
    text = README.read_text()
    first_block = re.search(r"```sh\n(.*?)```", text, flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
