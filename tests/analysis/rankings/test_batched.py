"""Tests of pdeval.analysis.rankings.batched: every coefficient on many rows at once equals the
one-pair definitions (scipy, pandas, autojudge-evaluate's pyircore and tau_gap, the tie-breaking
expectation of tau_AP), with and without ties; cutoffs; method names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from autojudge_oracle import autojudge
from pdeval.analysis.rankings.batched import batched, parse_method, rows_coefficients, top_k
from pdeval.analysis.rankings.coefficients import correlation, kendall_tau, tau_ap, tau_ap_b, tau_gap
from pdeval.errors import PdevalError

TOL = 1e-9


def vectors(seed: int, rows: int = 60):
    """Pairs of score vectors of 2..12 systems, a third of them with ties, a few constant."""
    rng = np.random.default_rng(seed)
    for r in range(rows):
        n = int(rng.integers(2, 13))
        a, b = rng.random(n), rng.random(n)
        if r % 3 == 1:
            a, b = np.round(a * 3) / 3, np.round(b * 3) / 3
        if r % 17 == 5:
            b = np.full(n, 0.5)
        yield a, b


def same(x, y):
    return (np.isnan(x) and np.isnan(y)) or abs(x - y) <= TOL


def test_kernels_equal_the_one_pair_definitions():
    for est, ref in vectors(1):
        frame = pd.DataFrame({"e": est, "r": ref})
        expected = {
            "tau_a": kendall_tau(est, ref, "a"), "tau_b": st.kendalltau(est, ref).statistic if np.ptp(ref) and np.ptp(est) else np.nan,
            "spearman": frame.corr("spearman").iloc[0, 1], "pearson": frame.corr("pearson").iloc[0, 1],
            "tau_ap": tau_ap(est, ref), "rms": float(np.sqrt(np.mean((est - ref) ** 2))),
        }
        for method, want in expected.items():
            assert same(batched(method, est[None], ref[None])[0], want), (method, est, ref)


@pytest.mark.skipif(autojudge() is None, reason="autojudge-evaluate (test extra) is the oracle of tau_ap_b and tau_gap")
def test_tau_ap_b_and_tau_gap_equal_autojudge():
    oracle = autojudge()
    for est, ref in vectors(2, 120):
        if est.size < 2:
            continue
        assert same(tau_ap_b(est, ref), oracle.pyircore.tauap_b(list(ref), list(est)))
        assert same(tau_ap_b(est, ref), tau_ap_b(ref, est))  # symmetric
        assert same(tau_gap(est, ref), oracle.tau_gap.tau_gap(list(ref), list(est)))


def test_many_rows_equal_one_row_at_a_time():
    rng = np.random.default_rng(3)
    est, ref = rng.random((40, 9)), rng.random((40, 9))
    est[::4] = np.round(est[::4] * 4)
    for method in ["tau_b", "tau_ap", "tau_ap_b", "tau_gap", "spearman", "tau_b@4", "tau_gap@3"]:
        whole = batched(method, est, ref)
        single = [correlation(e, r, method) for e, r in zip(est, ref)]
        assert np.allclose(whole, single, atol=TOL, rtol=0, equal_nan=True), method


def test_tau_ap_b_without_ties_is_the_mean_of_both_tau_ap():
    rng = np.random.default_rng(4)
    for _ in range(20):
        est, ref = rng.random(8), rng.random(8)
        assert tau_ap_b(est, ref) == pytest.approx(0.5 * (tau_ap(est, ref) + tau_ap(ref, est)), abs=TOL)


def test_tau_gap_weighs_the_head_and_the_gaps():
    truth = np.array([1.0, 0.9, 0.5, 0.4])
    assert tau_gap(truth, truth) == pytest.approx(1.0)
    head_swap = tau_gap(np.array([0.9, 1.0, 0.5, 0.4]), truth)
    tail_swap = tau_gap(np.array([1.0, 0.9, 0.4, 0.5]), truth)
    assert head_swap < tail_swap < 1.0  # same size of swap, nearer the head costs more
    assert np.isnan(tau_gap(np.array([1.0, 2.0]), np.array([3.0, 3.0])))


def test_cutoffs_take_the_reference_best_in_column_order():
    est = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])
    ref = np.array([[0.1, 0.9, 0.9, 0.3, 0.8]])
    e, r = top_k(est, ref, 3)
    assert e.tolist() == [[4.0, 3.0, 1.0]] and r.tolist() == [[0.9, 0.9, 0.8]]
    e, r = top_k(est, ref, 2)  # the tie at the cut is broken by position
    assert r.tolist() == [[0.9, 0.9]]
    e, r = top_k(est, ref, 3)
    assert batched("tau_b@3", est, ref)[0] == batched("tau_b", e, r)[0]


def test_rows_with_different_systems_are_grouped_by_their_masks():
    rng = np.random.default_rng(6)
    est, ref = rng.random((6, 7)), rng.random((6, 7))
    mask = np.ones((6, 7), dtype=bool)
    mask[1, 2] = mask[4, 2] = mask[5, [0, 6]] = False
    out = rows_coefficients(est, ref, mask, ["tau_b", "pearson"])
    for r in range(6):
        assert out[r, 0] == pytest.approx(kendall_tau(est[r, mask[r]], ref[r, mask[r]]), abs=TOL)


def test_method_names():
    assert parse_method("tau_b") == ("tau_b", None)
    assert parse_method("tau_gap@10") == ("tau_gap", 10)
    for bad in ["kendall", "tau_b@0", "tau_b@x", "tau_b@"]:
        with pytest.raises(PdevalError, match="unknown comparison method"):
            parse_method(bad)
