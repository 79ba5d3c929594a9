"""Docstrings a user learns from: every public function has one numpydoc docstring with every
parameter typed and described, Returns, See Also and an Examples section, and the examples run.

The checks are numpydoc's own validation (:data:`CHECKS`, by numpydoc's codes); the examples
are run as doctests with ``pdeval``, ``pd`` and ``np`` imported, on the bundled data or small
frames written in the example itself.
"""

from __future__ import annotations

import doctest
import inspect

import numpy as np
import pandas as pd
import pytest
from numpydoc.validate import validate

import pdeval
from pdeval.public import API, path

#: numpydoc's codes that every public docstring must pass
CHECKS = {
    "GL08": "has a docstring",
    "PR01": "documents every parameter",
    "PR02": "documents no parameter it lacks",
    "PR03": "documents the parameters in the signature's order",
    "PR04": "gives every parameter a type",
    "PR07": "describes every parameter",
    "PR10": "separates a parameter from its type by ' : '",
    "RT01": "has a Returns section",
    "RT03": "describes what it returns",
    "SA01": "has a See Also section",
    "EX01": "has an Examples section",
}

FUNCTIONS = sorted(name for name in API if inspect.isfunction(getattr(pdeval, name)))



def numpydoc_errors(name: str) -> list[str]:
    return [f"{code} ({CHECKS[code]}): {text}" for code, text in validate(path(name))["errors"] if code in CHECKS]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_docstring_passes_numpydocs_validation(name):
    errors = numpydoc_errors(name)
    assert errors == [], f"{name}: " + "; ".join(errors)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    function = getattr(pdeval, name)
    globs = {"pdeval": pdeval, "pd": pd, "np": np}
    tests = doctest.DocTestFinder(recurse=False).find(function, name, globs=globs)
    examples = [test for test in tests if test.examples]
    assert examples, f"{name} has no example to run"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in examples:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0, f"{name}: an example fails (see the output above)"
