"""Tests of pdeval.analysis.rankings.correlation: system means, rank correlations (MEASURES.md E8)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

from pdeval.evaluation.results import summarize
from pdeval.analysis.rankings.correlation import (
    correlation_table,
    kendall_tau,
    pearson,
    rank_correlation,
    rms_error,
    spearman,
    tau_ap,
    tau_significance,
)
from pdeval.errors import PdevalError, PdevalWarning, SchemaError

TOL = 1e-9

# E8 worked example: x = reference (e.g. MAP on Q*), y = estimate
E8_X = [0.50, 0.40, 0.40, 0.20, 0.10]
E8_Y = [0.45, 0.41, 0.30, 0.35, 0.05]


def strict_tau_ap(estimate, reference):
    """tau_AP straight from Yilmaz, Aslam & Robertson (2008), for rankings without ties."""
    n = len(estimate)
    order = sorted(range(n), key=lambda i: -estimate[i])
    total = 0.0
    for pos in range(1, n):
        i = order[pos]
        correct = sum(1 for above in order[:pos] if reference[above] > reference[i])
        total += correct / pos
    return 2.0 / (n - 1) * total - 1.0


def tie_breakings(values):
    """Every strict ranking of ``values`` (descending) that breaks its ties differently.

    Yields score vectors without ties that keep the order of distinct values.
    """
    n = len(values)
    distinct = sorted(set(values), reverse=True)
    groups = [[i for i in range(n) if values[i] == v] for v in distinct]
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        ranking = [i for group in orders for i in group]
        scores = [0.0] * n
        for position, i in enumerate(ranking):
            scores[i] = float(n - position)
        yield scores


def expected_tau_ap(estimate, reference):
    """Mean of the strict tau_AP over every tie-breaking of both rankings (O(n^2) each)."""
    values = [
        strict_tau_ap(e, r) for e in tie_breakings(list(estimate)) for r in tie_breakings(list(reference))
    ]
    return sum(values) / len(values)


def frame_from_means(means: dict, measure="AP", topics=2, **keys):
    """A per-topic result frame whose per-run means are ``means``."""
    rows = []
    for run, value in means.items():
        for t in range(topics):
            offset = 0.01 * (t - (topics - 1) / 2)
            rows.append({"run": run, "query_id": f"q{t}", **keys, "measure": measure, "value": value + offset})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# E8 worked example
# --------------------------------------------------------------------------------------


def test_e8_worked_example_arrays():
    assert kendall_tau(E8_Y, E8_X, "a") == pytest.approx(0.7, abs=TOL)
    assert kendall_tau(E8_Y, E8_X, "b") == pytest.approx(0.7378647874, abs=TOL)
    assert kendall_tau(E8_Y, E8_X, "b") == pytest.approx(7 / math.sqrt(9 * 10), abs=TOL)
    assert pearson(E8_Y, E8_X) == pytest.approx(0.8205966613, abs=TOL)
    assert spearman(E8_Y, E8_X) == pytest.approx(0.8207826817, abs=TOL)
    assert rms_error(E8_Y, E8_X) == pytest.approx(0.0867179336, abs=TOL)


def test_e8_worked_example_frames():
    runs = [f"s{i}" for i in range(5)]
    estimate = frame_from_means(dict(zip(runs, E8_Y)), measure="bpref")
    reference = frame_from_means(dict(zip(runs, E8_X)), measure="AP")
    out = rank_correlation(estimate, reference, methods=["tau_a", "tau_b", "pearson", "spearman", "rms"])
    got = dict(zip(out["method"], out["value"]))
    assert got["tau_a"] == pytest.approx(0.7, abs=TOL)
    assert got["tau_b"] == pytest.approx(0.7378647874, abs=TOL)
    assert got["pearson"] == pytest.approx(0.8205966613, abs=TOL)
    assert got["spearman"] == pytest.approx(0.8207826817, abs=TOL)
    assert got["rms"] == pytest.approx(0.0867179336, abs=TOL)
    assert set(out["n_runs"]) == {5}
    assert set(out["reference"]) == {"AP"}
    assert set(out["measure"]) == {"bpref"}


def test_e8_tau_ap_of_example_matches_direct_expectation():
    assert tau_ap(E8_Y, E8_X) == pytest.approx(expected_tau_ap(E8_Y, E8_X), abs=TOL)
    assert tau_ap(E8_X, E8_Y) == pytest.approx(expected_tau_ap(E8_X, E8_Y), abs=TOL)


def test_e8_tau_significance_critical_value():
    # Sakai 2007: n = 30, alpha = 0.01 -> critical |tau| = 2.5758 * 0.128852 = 0.3319
    p, critical = tau_significance(0.0, 30, alpha=0.01)
    sd = math.sqrt(2 * (2 * 30 + 5) / (9 * 30 * 29))
    assert sd == pytest.approx(0.128852, abs=1e-6)
    assert critical == pytest.approx(st.norm.ppf(0.995) * sd, abs=TOL)
    assert critical == pytest.approx(0.3319, abs=1e-4)
    assert p == pytest.approx(1.0, abs=TOL)
    p, _ = tau_significance(critical, 30, alpha=0.01)
    assert p == pytest.approx(0.01, abs=1e-12)


def test_rank_correlation_alpha_columns():
    runs = [f"s{i}" for i in range(5)]
    estimate = frame_from_means(dict(zip(runs, E8_Y)), measure="bpref")
    reference = frame_from_means(dict(zip(runs, E8_X)), measure="AP")
    out = rank_correlation(estimate, reference, methods=["tau_b", "pearson"], alpha=0.05).set_index("method")
    sd = math.sqrt(2 * (2 * 5 + 5) / (9 * 5 * 4))
    z = 0.7378647874 / sd
    assert out.loc["tau_b", "p_value"] == pytest.approx(2 * st.norm.sf(z), abs=1e-9)
    assert out.loc["tau_b", "critical"] == pytest.approx(st.norm.isf(0.025) * sd, abs=TOL)
    assert out.loc["tau_b", "significant"] == bool(0.7378647874 > st.norm.isf(0.025) * sd)
    assert np.isnan(out.loc["pearson", "p_value"])
    assert not out.loc["pearson", "significant"]


# --------------------------------------------------------------------------------------
# tau_AP
# --------------------------------------------------------------------------------------


def test_tau_ap_published_values_of_ircor():
    # ircor (Urbano & Marrero 2017) documentation: x = true scores, y = estimated scores
    x = np.array([0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54])
    y = np.array([0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84])
    assert tau_ap(y, x) == pytest.approx(0.3928571, abs=1e-7)
    # ties in the estimate: tauAP_a
    assert tau_ap(np.round(y, 1), x) == pytest.approx(0.39903, abs=1e-5)


def test_tau_ap_is_asymmetric_and_top_weighted():
    reference = [5, 4, 3, 2, 1]
    top_swap = [4, 5, 3, 2, 1]
    bottom_swap = [5, 4, 3, 1, 2]
    assert kendall_tau(top_swap, reference) == pytest.approx(kendall_tau(bottom_swap, reference))
    assert tau_ap(top_swap, reference) < tau_ap(bottom_swap, reference)
    assert tau_ap(reference, reference) == pytest.approx(1.0, abs=TOL)
    assert tau_ap(reference[::-1], reference) == pytest.approx(-1.0, abs=TOL)


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.floats(0, 1, allow_nan=False), min_size=2, max_size=25, unique=True), hs.randoms())
def test_tau_ap_without_ties_matches_direct_loop(reference, random):
    estimate = list(reference)
    random.shuffle(estimate)
    assume(len(set(estimate)) == len(estimate))
    assert tau_ap(estimate, reference) == pytest.approx(strict_tau_ap(estimate, reference), abs=TOL)


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(hs.tuples(hs.integers(0, 3), hs.integers(0, 3)), min_size=2, max_size=6),
)
def test_tau_ap_with_ties_is_expected_value_over_tie_breaking(pairs):
    estimate = [float(a) for a, _ in pairs]
    reference = [float(b) for _, b in pairs]
    count = 1
    for values in (estimate, reference):
        for v in set(values):
            count *= math.factorial(values.count(v))
    assume(count <= 3000)
    assert tau_ap(estimate, reference) == pytest.approx(expected_tau_ap(estimate, reference), abs=TOL)


# --------------------------------------------------------------------------------------
# agreement with scipy; ranges
# --------------------------------------------------------------------------------------

tie_heavy = hs.lists(hs.tuples(hs.integers(0, 6), hs.integers(0, 6)), min_size=3, max_size=40)
real_valued = hs.lists(
    hs.tuples(hs.floats(-1e3, 1e3, allow_nan=False), hs.floats(-1e3, 1e3, allow_nan=False)), min_size=3, max_size=40
)


def _not_constant(pairs):
    x = [a for a, _ in pairs]
    y = [b for _, b in pairs]
    return len(set(x)) > 1 and len(set(y)) > 1


@settings(max_examples=150, deadline=None)
@given(hs.one_of(tie_heavy, real_valued))
def test_tau_b_spearman_pearson_agree_with_scipy(pairs):
    assume(_not_constant(pairs))
    x = np.array([a for a, _ in pairs], dtype=float)
    y = np.array([b for _, b in pairs], dtype=float)
    assert kendall_tau(x, y, "b") == pytest.approx(st.kendalltau(x, y, variant="b").statistic, abs=TOL)
    assert spearman(x, y) == pytest.approx(st.spearmanr(x, y).statistic, abs=TOL)
    # pearson on nearly-constant float data loses precision in any implementation
    assume(np.std(x) > 1e-6 * max(1.0, np.abs(x).max()) and np.std(y) > 1e-6 * max(1.0, np.abs(y).max()))
    assert pearson(x, y) == pytest.approx(st.pearsonr(x, y).statistic, abs=1e-8)


@settings(max_examples=100, deadline=None)
@given(tie_heavy)
def test_tau_a_counts_pairs_directly(pairs):
    x = [a for a, _ in pairs]
    y = [b for _, b in pairs]
    n = len(x)
    concordant = discordant = 0
    for i, j in itertools.combinations(range(n), 2):
        s = (x[i] - x[j]) * (y[i] - y[j])
        concordant += s > 0
        discordant += s < 0
    assert kendall_tau(x, y, "a") == pytest.approx((concordant - discordant) / (n * (n - 1) / 2), abs=TOL)


@settings(max_examples=150, deadline=None)
@given(hs.one_of(tie_heavy, real_valued))
def test_tau_values_lie_in_unit_interval(pairs):
    x = [a for a, _ in pairs]
    y = [b for _, b in pairs]
    for value in (kendall_tau(x, y, "a"), kendall_tau(x, y, "b"), tau_ap(x, y), tau_ap(y, x)):
        assert np.isnan(value) or -1 - 1e-12 <= value <= 1 + 1e-12


def test_degenerate_inputs_give_nan():
    assert np.isnan(kendall_tau([1.0], [2.0]))
    assert np.isnan(kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "b"))
    assert kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "a") == 0.0
    assert np.isnan(pearson([1.0, 1.0], [1.0, 2.0]))
    assert np.isnan(tau_ap([1.0], [1.0]))


# --------------------------------------------------------------------------------------
# frames
# --------------------------------------------------------------------------------------


def test_summarize_per_variant():
    frame = pd.DataFrame(
        {
            "run": ["a", "a", "b", "b", "a", "a"],
            "query_id": ["1", "2", "1", "2", "1", "2"],
            "level": [10, 10, 10, 10, 50, 50],
            "measure": "AP",
            "value": [0.2, 0.4, 0.1, 0.1, 0.5, np.nan],
        }
    )
    with pytest.warns(PdevalWarning, match="NaN"):
        means = summarize(frame)
    means = means.set_index(["run", "level"])
    assert means.loc[("a", 10), "value"] == pytest.approx(0.3, abs=TOL)
    assert means.loc[("b", 10), "value"] == pytest.approx(0.1, abs=TOL)
    assert means.loc[("a", 50), "value"] == pytest.approx(0.5, abs=TOL)
    assert means.loc[("a", 50), "topics"] == 1
    assert means.loc[("a", 50), "undefined"] == 1
    pooled = summarize(frame.dropna(), by=[]).set_index("run")
    assert pooled.loc["a", "value"] == pytest.approx((0.2 + 0.4 + 0.5) / 3, abs=TOL)


def reduced_experiment():
    """Reference (full qrels) and a reduced result with levels and samples."""
    rng = np.random.default_rng(7)
    runs = [f"r{i}" for i in range(6)]
    full = rng.random(6)
    parts = []
    truth = {}
    for level in (10, 50):
        for sample in range(3):
            means = full + rng.normal(0, 0.1 if level == 10 else 0.02, 6)
            truth[level, sample] = means
            for measure in ("bpref", "infAP"):
                parts.append(frame_from_means(dict(zip(runs, means)), measure=measure, level=level, sample=sample))
    reference = frame_from_means(dict(zip(runs, full)), measure="AP")
    return pd.concat(parts, ignore_index=True), reference, full, truth


def test_rank_correlation_groups_and_aggregate_over_samples():
    result, reference, full, truth = reduced_experiment()
    out = rank_correlation(result, reference, methods=["tau_b", "tau_ap", "rms"])
    assert len(out) == 2 * 2 * 3 * 3
    row = out[(out.measure == "infAP") & (out.level == 10) & (out["sample"] == 1) & (out.method == "tau_ap")]
    assert row["value"].item() == pytest.approx(tau_ap(truth[10, 1], full), abs=TOL)
    row = out[(out.measure == "bpref") & (out.level == 50) & (out["sample"] == 2) & (out.method == "rms")]
    assert row["value"].item() == pytest.approx(np.sqrt(np.mean((truth[50, 2] - full) ** 2)), abs=TOL)

    agg = rank_correlation(result, reference, methods="tau_b", aggregate=True, alpha=0.05)
    assert list(agg.columns[:4]) == ["measure", "level", "reference", "method"]
    row = agg[(agg.measure == "bpref") & (agg.level == 10)].iloc[0]
    taus = [st.kendalltau(truth[10, s], full).statistic for s in range(3)]
    assert row["mean"] == pytest.approx(np.mean(taus), abs=TOL)
    assert row["std"] == pytest.approx(np.std(taus, ddof=1), abs=TOL)
    assert row["count"] == 3
    assert row["n_runs"] == 6
    assert row["critical"] == pytest.approx(st.norm.isf(0.025) * math.sqrt(2 * 17 / (9 * 6 * 5)), abs=TOL)


def test_rank_correlation_against_a_measure_of_the_same_result():
    result, _, _, truth = reduced_experiment()
    out = rank_correlation(result, reference_measure="bpref", methods=["tau_b"])
    assert set(out["measure"]) == {"infAP"}
    assert set(out["reference"]) == {"bpref"}
    assert np.allclose(out["value"], 1.0)  # both measures got the same means


def test_rank_correlation_matches_reference_measures_by_name():
    runs = ["a", "b", "c", "d"]
    result = pd.concat(
        [frame_from_means(dict(zip(runs, [1, 2, 3, 4])), "AP"), frame_from_means(dict(zip(runs, [4, 3, 2, 1])), "P@10")]
    )
    reference = pd.concat(
        [frame_from_means(dict(zip(runs, [1, 2, 3, 4])), "AP"), frame_from_means(dict(zip(runs, [1, 2, 3, 4])), "P@10")]
    )
    out = rank_correlation(result, reference, methods="tau_a").set_index("measure")
    assert out.loc["AP", "value"] == pytest.approx(1.0)
    assert out.loc["P@10", "value"] == pytest.approx(-1.0)
    assert out.loc["P@10", "reference"] == "P@10"
    with pytest.raises(SchemaError, match="nDCG"):
        rank_correlation(result.assign(measure=result.measure.replace("P@10", "nDCG")), reference)


def test_rank_correlation_missing_runs_warn_or_raise():
    result = frame_from_means({"a": 0.1, "b": 0.2, "c": 0.3, "x": 0.5}, "bpref")
    reference = frame_from_means({"a": 0.1, "b": 0.3, "c": 0.2, "y": 0.9}, "AP")
    with pytest.warns(PdevalWarning, match=r"1 system\(s\) of the result.*1 reference system"):
        out = rank_correlation(result, reference, methods="tau_a")
    assert out["n_runs"].item() == 3
    assert out["value"].item() == pytest.approx(1 / 3, abs=TOL)
    with pytest.raises(SchemaError, match="lack a reference value"):
        rank_correlation(result, reference, missing="error")


def test_rank_correlation_errors_name_the_problem():
    result, reference, _, _ = reduced_experiment()
    with pytest.raises(SchemaError, match="nope"):
        rank_correlation(result, reference_measure="nope")
    with pytest.raises(PdevalError, match=r"reference='bpref'.*reference_measure="):
        rank_correlation(result, "bpref")
    with pytest.raises(PdevalError, match="reference=.*reference_measure=.*neither"):
        rank_correlation(result)
    with pytest.raises(PdevalError, match="not both"):
        rank_correlation(result, reference, reference_measure="bpref")
    with pytest.raises(SchemaError, match="sample"):
        rank_correlation(result.drop(columns="sample").drop_duplicates(["run", "query_id", "level", "measure"]), reference, aggregate=True)
    with pytest.raises(Exception, match="kendall"):
        rank_correlation(result, reference, methods=["kendall"])
    pooled = pd.concat([reference.assign(pool="depth10"), reference.assign(pool="depth100")])
    with pytest.raises(SchemaError, match="'pool' with several values"):
        rank_correlation(result, pooled)
    # a single-valued extra column of the reference is ignored
    out = rank_correlation(result, reference.assign(pool="depth100"))
    assert len(out) == 2 * 2 * 3


def test_correlation_table_square_and_consistent():
    runs = [f"r{i}" for i in range(7)]
    rng = np.random.default_rng(3)
    values = {m: rng.random(7) for m in ("AP", "bpref", "nDCG")}
    result = pd.concat([frame_from_means(dict(zip(runs, v)), m) for m, v in values.items()])
    table = correlation_table(result, methods="tau_b")
    assert list(table.index) == ["AP", "bpref", "nDCG"] == list(table.columns)
    assert np.allclose(np.diag(table), 1.0)
    assert np.allclose(table.to_numpy(), table.to_numpy().T)
    assert table.loc["AP", "bpref"] == pytest.approx(st.kendalltau(values["AP"], values["bpref"]).statistic, abs=TOL)
    ap_table = correlation_table(result, methods="tau_ap")
    assert ap_table.loc["AP", "bpref"] == pytest.approx(tau_ap(values["bpref"], values["AP"]), abs=TOL)
    with pytest.raises(SchemaError, match="several variants"):
        correlation_table(pd.concat([result.assign(level=1), result.assign(level=2)]))
