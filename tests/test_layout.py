"""The tests mirror the package: a module's tests are found by its path.

A test file of one part of pdeval lives in the folder of that part (``tests/analysis/estimates/``
beside ``pdeval/analysis/estimates/``); the files at the top of ``tests/`` are those that cut
across the package (:data:`CROSS_CUTTING`: contracts, conformance with the peers, documentation
and notebooks, the boundary catalogues).
"""

from __future__ import annotations

from pathlib import Path

from locations import REPO, TESTS

#: top-level test files, each checking the whole package (or its documents) rather than one part
CROSS_CUTTING = {
    "test_api_conventions.py", "test_architecture.py", "test_boundary.py", "test_boundary_bounds.py",
    "test_boundary_derived.py", "test_boundary_files.py", "test_boundary_sources.py", "test_conformance.py",
    "test_contract.py", "test_dask.py", "test_differential.py", "test_docs.py", "test_docstrings.py",
    "test_layout.py", "test_notebook_retrieval.py", "test_notebook_verdicts.py", "test_notebooks.py",
    "test_readme.py", "test_sizes.py",
}
#: folders of tests/ that hold data, not tests
DATA_FOLDERS = {"data", "__pycache__"}


def test_every_test_folder_is_a_folder_of_the_package():
    folders = [p for p in TESTS.rglob("*") if p.is_dir() and not DATA_FOLDERS & set(p.relative_to(TESTS).parts)]
    strays = [str(p.relative_to(TESTS)) for p in folders if not (REPO / "pdeval" / p.relative_to(TESTS)).is_dir()]
    assert strays == [], f"test folders without a pdeval package of that path: {strays}"


def test_the_top_of_tests_holds_only_cross_cutting_tests():
    top = {p.name for p in TESTS.glob("test_*.py")}
    assert top - CROSS_CUTTING == set(), "a test of one part of pdeval goes into that part's folder"
    assert CROSS_CUTTING - top == set(), "listed as cross-cutting but absent"


def test_test_file_names_are_unique():
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []  # pytest imports them by basename
