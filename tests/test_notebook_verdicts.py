"""The verdict helpers of the reproduction notebooks (``notebooks/support.py``): ties never win,
identity checks are counted apart from findings, and a finding the data cannot test is neither
reproduced nor not; a notebook's closing section labels a numbered finding as its verdict does."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "notebooks"))
from support import (  # noqa: E402
    at_least, check, combine, construction, identity, not_worse, own, tally, untestable, versus,
)


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
    assert tally(table) == {"findings": 4, "reproduced": 1, "partly": 1, "not": 1, "undecided": 0, "untested": 1,
                            "checks": 2, "checks_held": 1, "construction": 0, "construction_held": 0,
                            "own": 0, "own_held": 0}
    # tables written before the kind column hold findings only
    assert tally(table.drop(columns="kind"))["findings"] == 6


def test_a_check_the_collection_cannot_test_counts_as_not_testable_not_as_failed():
    rows = [("c1", "not testable", "construction"), ("c2", "yes", "construction"), ("i1", "not testable", "identity"),
            ("f1", "yes", "finding")]
    counts = tally(pd.DataFrame(rows, columns=["paper's finding", "agrees", "kind"]))
    assert (counts["construction"], counts["construction_held"], counts["checks"]) == (1, 1, 0)
    assert (counts["findings"], counts["untested"], counts["reproduced"], counts["not"]) == (3, 2, 1, 0)


def test_identity_verdicts_are_marked_and_may_name_their_paper():
    verdict = identity(True, tolerance="exact", paper="Sakai 2007")
    assert (verdict.outcome, verdict.kind, verdict.paper) == ("yes", "identity", "Sakai 2007")


def test_undecided_by_construction_and_own_rows_are_counted_apart():
    rows = [("f1", "yes", "finding"), ("f2", "undecided (paper: a ≥ b)", "finding"), ("c1", "yes", "construction"),
            ("o1", "no", "own"), ("o2", "yes", "own")]
    counts = tally(pd.DataFrame(rows, columns=["paper's finding", "agrees", "kind"]))
    assert (counts["findings"], counts["reproduced"], counts["not"], counts["undecided"]) == (2, 1, 0, 1)
    assert (counts["construction"], counts["construction_held"], counts["own"], counts["own_held"]) == (1, 1, 2, 1)
    base = versus(1.0, 0.0, tol=0.1, claim="x")
    assert construction(base, "unjudged count as nonrelevant").kind == "construction"
    assert (own(base, "the unique prior").kind, own(base, "the unique prior").paper) == ("own", "pdeval")


def test_a_threshold_from_a_paper_is_compared_with_its_noise():
    assert at_least(0.95, 0.9, claim="≥ .9", se=0.01).outcome == "yes"
    assert at_least(0.90, 0.9, claim="≥ .9", se=0.01).outcome == "undecided"
    assert at_least(0.85, 0.9, claim="≥ .9", se=0.01).outcome == "no"
    assert check(value=0.901, limit=0.9, se=0.02, claim="≥ .9").outcome == "undecided"
    assert versus(0.5, 0.45, tol=0.01, se=0.03, claim="a > b").outcome == "no difference"


def test_a_non_inferiority_test_without_power_is_undecided():
    a, b = np.full(10, 0.8), np.full(10, 0.8) + np.tile([0.05, -0.05], 5)  # exact tie on average, SE 0.017
    assert not_worse(a, b, margin=0.02, claim="a ≳ b").outcome == "undecided"
    assert not_worse(a, b - 0.1, margin=0.02, claim="a ≳ b").outcome == "yes"
    assert not_worse(a - 0.2, b, margin=0.02, claim="a ≳ b").outcome == "no"


def test_a_multi_part_claim_names_the_failed_part_and_a_nested_mixed_stays_mixed():
    yes, no = versus(1.0, 0.0, tol=0.1, claim="x"), versus(0.0, 1.0, tol=0.1, claim="y")
    verdict = combine({"τ ≥ 0.9 at 9-25 %": no, "not earlier than the others": yes})
    assert verdict.outcome == "mixed"
    assert verdict.tolerance.startswith("failed: τ ≥ 0.9 at 9-25 % (no)")
    assert combine([yes, combine([yes, no])]).outcome == "mixed"
    nodiff = versus(0.0, 0.0, tol=0.1, claim="z")
    assert combine([yes, nodiff]).outcome == "partly"
    assert combine([yes, at_least(0.9, 0.9, claim="u", se=0.01)]).outcome == "undecided"


def test_the_summary_matches_the_verdict_files():
    root = Path(__file__).resolve().parent.parent
    summary = (root / "notebooks" / "REPRODUCTIONS.md").read_text()
    for csv in sorted((root / "notebooks" / "verdicts").glob("*.csv")):
        table = pd.read_csv(csv, keep_default_na=False)
        stem, _, coll = csv.stem.partition(".")
        link = f"collections/{stem}.{coll}.ipynb" if coll else f"{stem}.ipynb"
        rows = [line for line in summary.splitlines() if f"]({link})" in line and line.startswith("| ")]
        assert rows, f"{csv.name} has no row in REPRODUCTIONS.md"
        cells = [line.split(" | ") for line in rows]
        kind = table.get("kind", pd.Series("finding", index=table.index)).replace("", "finding")
        findings = (kind == "finding") | table["agrees"].str.startswith("not testable")  # untestable: any kind
        assert sum(int(c[3]) for c in cells) == int(findings.sum()), csv.name


#: the words a closing section uses to label a numbered finding ("* *(2) Mixed.* ..."), and the verdict
#: outcomes each may stand for
LABELS = {"yes": {"yes"}, "partly": {"partly"}, "mixed": {"mixed"}, "undecided": {"undecided"},
          "no": {"no", "no difference"}, "not": {"no", "no difference"}}


def _closing_labels(notebook: Path) -> list[tuple[str, str]]:
    """(finding number, label word) of every bullet ``* *(N) Word`` of the closing section."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
                     and "".join(c["source"]).startswith("## Where we agree"))
    return [(m.group(1), m.group(2).lower())
            for m in re.finditer(r"^\* \*\((\d+)\) ([A-Za-z]+)\b", text, flags=re.MULTILINE)
            if m.group(2).lower() in LABELS]


def test_a_closing_section_labels_a_numbered_finding_as_its_verdict_does():
    # "* *(2) Partly.*" over a verdict row "(2) ..." that says "mixed" is prose out of step with its table
    root = Path(__file__).resolve().parent.parent
    checked = 0
    for csv in sorted((root / "notebooks" / "verdicts").glob("*.csv")):
        if "." in csv.stem:  # a collection copy: its text describes the notebook's own run
            continue
        notebook = root / "notebooks" / f"{csv.stem}.ipynb"
        table = pd.read_csv(csv, keep_default_na=False)
        for number, word in _closing_labels(notebook):
            rows = table[table["paper's finding"].str.startswith(f"({number}) ")]
            outcomes = {a.split(" (")[0] for a in rows["agrees"]}
            assert not rows.empty and outcomes <= LABELS[word], \
                f"{notebook.name}: the closing section calls finding ({number}) '{word}', its verdicts say {sorted(outcomes)}"
            checked += 1
    assert checked >= 5  # many_systems and pool_bias label their findings so
