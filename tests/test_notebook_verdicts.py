"""The verdict helpers of the reproduction notebooks (``notebooks/support.py``): ties never win,
identity checks are counted apart from findings, and a finding the data cannot test is neither
reproduced nor not."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "notebooks"))
from support import combine, identity, tally, untestable, versus  # noqa: E402


def test_a_floating_point_tie_at_the_tolerance_is_no_difference():
    # 2/276 computed two ways: equal up to rounding, never "a > b by more than 2/276"
    tol = 2 / 276
    a, b = 0.75, 0.75 - tol * (1 + 1e-15)
    assert versus(a, b, tol=tol, claim="a > b").outcome == "no difference"
    assert versus(a + 0.01, b, tol=tol, claim="a > b").outcome == "yes"
    assert versus(b - 0.01, a, tol=tol, claim="a > b").outcome == "no"


def test_paired_samples_need_two_standard_errors_beyond_the_tolerance():
    d = np.array([0.02, 0.0, 0.02, 0.0])  # mean 0.01, SE 0.0058
    assert versus(d, np.zeros(4), tol=0.001, claim="a > b").outcome == "no difference"
    assert versus(d + 0.05, np.zeros(4), tol=0.001, claim="a > b").outcome == "yes"


def test_untestable_parts_make_the_whole_finding_untestable():
    verdict = combine([versus(1.0, 0.0, tol=0.1, claim="x"), untestable("too few judgments")])
    assert verdict.outcome == "not testable"
    assert verdict.tolerance == "too few judgments"


def test_tally_counts_findings_and_identities_apart():
    rows = [("f1", "yes", "finding"), ("f2", "partly", "finding"), ("f3", "no difference (paper: a > b)", "finding"),
            ("f4", "not testable", "finding"), ("i1", "yes", "identity"), ("i2", "no", "identity")]
    table = pd.DataFrame(rows, columns=["paper's finding", "agrees", "kind"])
    assert tally(table) == {"findings": 4, "reproduced": 1, "partly": 1, "not": 1, "untested": 1,
                            "checks": 2, "checks_held": 1}
    # tables written before the kind column hold findings only
    assert tally(table.drop(columns="kind"))["findings"] == 6


def test_identity_verdicts_are_marked_and_may_name_their_paper():
    verdict = identity(True, tolerance="exact", paper="Sakai 2007")
    assert (verdict.outcome, verdict.kind, verdict.paper) == ("yes", "identity", "Sakai 2007")
