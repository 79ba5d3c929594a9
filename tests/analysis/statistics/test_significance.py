"""Tests of pdeval.analysis.statistics.swaps (swap rates, E9), .bootstrap (discriminative power, E10) and .significance (paired tests)."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hs

from pdeval.errors import PdevalError, SchemaError
from pdeval.analysis.statistics.bootstrap import bootstrap_replicates, discriminative_power, paired_bootstrap
from pdeval.analysis.statistics.scores import score_matrices
from pdeval.analysis.statistics.significance import adjust_pvalues, compare
from pdeval.analysis.statistics.swaps import swap_counts, swap_rates

TOL = 1e-9


def to_frame(matrix, runs=None, measure="AP", **keys):
    matrix = np.asarray(matrix, dtype=float)
    runs = runs or [f"r{i}" for i in range(matrix.shape[0])]
    rows = [
        {"run": runs[i], "query_id": f"q{j:02d}", **keys, "measure": measure, "value": matrix[i, j]}
        for i in range(matrix.shape[0])
        for j in range(matrix.shape[1])
    ]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# E9 swap rates
# --------------------------------------------------------------------------------------

E9 = {"X": [0.50, 0.30, 0.20, 0.60], "Y": [0.40, 0.45, 0.10, 0.50], "Z": [0.10, 0.20, 0.15, 0.30]}


def e9_frame():
    return to_frame(list(E9.values()), runs=list(E9))


def test_e9_worked_example_bins():
    out = swap_rates(e9_frame(), measures="AP", c=2, n_resamples="all", progress=False)
    nonempty = out.bins[out.bins["count"] > 0]
    got = {int(b): (int(s), int(k)) for b, s, k in zip(nonempty["bin"], nonempty["swaps"], nonempty["count"])}
    assert got == {2: (3, 3), 7: (0, 2), 10: (3, 4), 12: (0, 1), 17: (0, 1), 20: (0, 7)}
    assert len(out.bins) == 21
    assert out.bins.loc[out.bins["bin"] == 10, "rate"].item() == pytest.approx(0.75, abs=TOL)
    assert out.bins.loc[out.bins["bin"] == 12, "lower"].item() == pytest.approx(0.12, abs=TOL)
    summary = out.summary.iloc[0]
    assert summary["n_resamples"] == 6
    assert summary["swaps"] == 6 and summary["count"] == 18
    assert summary["rate"] == pytest.approx(1 / 3, abs=TOL)
    assert summary["diff_required"] == pytest.approx(0.12, abs=TOL)
    means = {k: sum(v) / 4 for k, v in E9.items()}
    assert summary["best_mean"] == pytest.approx(max(means.values()), abs=TOL)
    assert summary["diff_required_pct"] == pytest.approx(0.12 / max(means.values()) * 100, abs=TOL)
    assert summary["sd_means"] == pytest.approx(statistics.stdev(means.values()), abs=TOL)


def test_e9_worked_example_rule_first():
    out = swap_rates(e9_frame(), measures="AP", c=2, n_resamples="all", rule="first", progress=False)
    assert out.summary["diff_required"].item() == pytest.approx(0.07, abs=TOL)


def direct_swap_counts(scores, c, w=0.01, nb=21):
    """Every ordered pair of disjoint c-subsets, every unordered run pair, in plain loops."""
    m, n = len(scores), len(scores[0])
    swaps, count = [0] * nb, [0] * nb
    for q1 in itertools.combinations(range(n), c):
        rest = [t for t in range(n) if t not in q1]
        for q2 in itertools.combinations(rest, c):
            for i, j in itertools.combinations(range(m), 2):
                d1 = sum(scores[i][t] for t in q1) / c - sum(scores[j][t] for t in q1) / c
                d2 = sum(scores[i][t] for t in q2) / c - sum(scores[j][t] for t in q2) / c
                b = min(nb - 1, math.floor(abs(d1) / w + 1e-9))
                count[b] += 1
                swaps[b] += d1 * d2 < 0
    return swaps, count


@settings(max_examples=15, deadline=None)
@given(hs.integers(3, 5), hs.integers(4, 6), hs.integers(0, 10_000))
def test_swap_counts_all_trials_match_direct_loops(m, n, seed):
    scores = np.round(np.random.default_rng(seed).random((m, n)), 2)
    c = n // 2
    swaps, count, total = swap_counts(scores, c=c, n_resamples="all")
    expected_swaps, expected_count = direct_swap_counts(scores.tolist(), c)
    assert total == math.comb(n, c) * math.comb(n - c, c)
    assert swaps.tolist() == expected_swaps
    assert count.tolist() == expected_count


def test_swap_rates_random_trials_reproducible():
    rng = np.random.default_rng(5)
    frame = to_frame(rng.random((6, 20)))
    a = swap_rates(frame, c=10, n_resamples=300, seed=11, progress=False)
    b = swap_rates(frame, c=10, n_resamples=300, seed=11, progress=False)
    pd.testing.assert_frame_equal(a.bins, b.bins)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    assert a.summary["count"].item() == 15 * 300
    assert a.bins["count"].sum() == 15 * 300


def test_swap_rates_rejects_bad_sizes():
    with pytest.raises(PdevalError, match="2c"):
        swap_rates(e9_frame(), c=3, n_resamples="all", progress=False)


# --------------------------------------------------------------------------------------
# E10 paired bootstrap
# --------------------------------------------------------------------------------------

E10_X = [0.60, 0.40, 0.30, 0.50, 0.70]
E10_Y = [0.50, 0.45, 0.10, 0.40, 0.50]
E10_IDX = np.array([[0, 1, 2, 3, 4], [2, 2, 2, 1, 0], [1, 1, 3, 3, 4], [0, 0, 0, 0, 1], [4, 2, 4, 2, 1]])


def test_e10_worked_example_replicates():
    z = np.array(E10_X) - np.array(E10_Y)
    means, tstar = bootstrap_replicates(z[None, :], E10_IDX)
    assert means[0] == pytest.approx([0.0, 0.02, -0.05, -0.04, 0.04], abs=TOL)
    assert np.abs(tstar[0]) == pytest.approx([0.0, 0.4082482905, 1.0314212463, 1.3333333333, 0.8], abs=TOL)


@pytest.mark.parametrize("alpha, delta", [(0.05, 0.04), (0.4, 0.05)])
def test_e10_worked_example_pair(alpha, delta):
    pairs = paired_bootstrap(np.array([E10_X, E10_Y]), E10_IDX, alpha=alpha, runs=["x", "y"])
    row = pairs.iloc[0]
    assert (row["run_a"], row["run_b"]) == ("x", "y")
    assert row["diff"] == pytest.approx(0.11, abs=TOL)
    assert row["t"] == pytest.approx(2.4003967926, abs=TOL)
    assert row["asl"] == 0.0
    assert bool(row["significant"])
    assert row["delta"] == pytest.approx(delta, abs=TOL)


def direct_bootstrap(scores, indices, alpha):
    """Sakai's test written pair by pair and replicate by replicate."""
    m, n = scores.shape
    out = []
    for i, j in itertools.combinations(range(m), 2):
        z = scores[i] - scores[j]
        t_obs = z.mean() / (z.std(ddof=1) / math.sqrt(n))
        w = z - z.mean()
        ts, ms = [], []
        for idx in indices:
            sample = w[idx]
            ms.append(sample.mean())
            ts.append(abs(sample.mean() / (sample.std(ddof=1) / math.sqrt(n))))
        asl = sum(t >= abs(t_obs) for t in ts) / len(indices)
        k = math.ceil(alpha * len(indices))
        kth = sorted(ts, reverse=True)[k - 1]
        b = ts.index(kth)
        out.append((t_obs, asl, abs(ms[b])))
    return out


def test_paired_bootstrap_matches_direct_loops():
    rng = np.random.default_rng(2)
    scores = rng.random((5, 12))
    indices = rng.integers(0, 12, size=(80, 12))
    got = paired_bootstrap(scores, indices, alpha=0.1)
    expected = direct_bootstrap(scores, indices, 0.1)
    assert got["t"].to_numpy() == pytest.approx([e[0] for e in expected], abs=TOL)
    assert got["asl"].to_numpy() == pytest.approx([e[1] for e in expected], abs=TOL)
    assert got["delta"].to_numpy() == pytest.approx([e[2] for e in expected], abs=TOL)
    assert list(zip(got["run_a"], got["run_b"])) == list(itertools.combinations(range(5), 2))


def test_paired_bootstrap_streams_chunks_with_tied_replicates(monkeypatch):
    import pdeval.analysis.statistics.bootstrap as bootstrap

    rng = np.random.default_rng(6)
    scores = np.round(rng.random((4, 9)), 1)
    base = rng.integers(0, 9, size=(13, 9))
    indices = np.concatenate([base, base[::-1], base])  # every |t*| value occurs three times
    expected = direct_bootstrap(scores, indices, 0.2)
    monkeypatch.setattr(bootstrap, "CHUNK_ELEMENTS", 60)  # a handful of replicates per chunk
    got = paired_bootstrap(scores, indices, alpha=0.2)
    assert got["asl"].to_numpy() == pytest.approx([e[1] for e in expected], abs=TOL)
    assert got["delta"].to_numpy() == pytest.approx([e[2] for e in expected], abs=TOL)


def test_paired_bootstrap_zero_sd_rules():
    same = [0.3, 0.5, 0.2, 0.4]
    shifted = [0.4, 0.6, 0.3, 0.5]  # constant nonzero difference
    indices = np.random.default_rng(0).integers(0, 4, size=(50, 4))
    out = paired_bootstrap(np.array([same, same, shifted]), indices, alpha=0.05)
    identical = out.iloc[0]
    assert identical["t"] == 0.0 and identical["asl"] == 1.0 and not identical["significant"]
    constant = out.iloc[1]
    assert constant["t"] == -np.inf and constant["asl"] == 0.0 and constant["significant"]


def random_result(m=8, n=15, seed=1, measures=("AP", "bpref")):
    rng = np.random.default_rng(seed)
    base = rng.random((m, 1)) * 0.3
    frames = [to_frame(np.clip(base + rng.random((m, n)) * 0.5, 0, 1), measure=mm) for mm in measures]
    return pd.concat(frames, ignore_index=True)


def test_discriminative_power_same_seed_same_output():
    result = random_result()
    a = discriminative_power(result, n_resamples=300, seed=4, progress=False)
    b = discriminative_power(result, n_resamples=300, seed=4, progress=False)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    pd.testing.assert_frame_equal(a.summary, b.summary)


def test_discriminative_power_summary_is_consistent_with_pairs():
    result = random_result()
    out = discriminative_power(result, n_resamples=200, seed=0, alpha=0.05, progress=False)
    assert list(out.summary["measure"]) == ["AP", "bpref"]
    for _, row in out.summary.iterrows():
        pairs = out.pairs[out.pairs["measure"] == row["measure"]]
        significant = int((pairs["asl"] < 0.05).sum())
        assert row["pairs"] == 8 * 7 // 2 == len(pairs)
        assert row["significant"] == significant
        assert row["label"] == f"{significant}/28 = {100 * significant / 28:.1f}%"
        assert row["diff_required"] == pytest.approx(pairs["delta"].max(), abs=TOL)
        assert row["diff_required_2sig"] == float(f"{row['diff_required']:.2g}")
    # the replicates are those of default_rng(seed).integers(0, n, (B, n)), shared by all pairs
    indices = np.random.default_rng(0).integers(0, 15, size=(200, 15))
    group = next(score_matrices(result, "AP"))
    direct = paired_bootstrap(group.scores, indices, runs=group.runs)
    got = out.pairs[out.pairs["measure"] == "AP"].reset_index(drop=True)
    assert got["asl"].to_numpy() == pytest.approx(direct["asl"].to_numpy(), abs=TOL)


def test_discriminative_power_thirty_runs_fifty_topics():
    # the size named in the brief; no timing assertion (machines differ)
    result = random_result(m=30, n=50, seed=9, measures=("AP",))
    out = discriminative_power(result, n_resamples=1000, seed=0, progress=False)
    assert out.summary["pairs"].item() == 435
    assert len(out.pairs) == 435


def test_score_matrices_reject_missing_cells():
    frame = to_frame(np.ones((3, 4))).iloc[1:]
    with pytest.raises(SchemaError, match=r"1 \(run, topic\) cell\(s\) are missing"):
        discriminative_power(frame, n_resamples=10, progress=False)
    doubled = pd.concat([to_frame(np.ones((2, 3))), to_frame(np.ones((2, 3)))])
    with pytest.raises(SchemaError, match="several values"):
        swap_rates(doubled, c=1, progress=False)


def test_variants_are_analysed_separately():
    rng = np.random.default_rng(0)
    frame = pd.concat([to_frame(rng.random((4, 10)), level=lv) for lv in (10, 50)], ignore_index=True)
    out = discriminative_power(frame, n_resamples=50, progress=False)
    assert list(out.summary["level"]) == [10, 50]
    swaps = swap_rates(frame, c=5, n_resamples=20, progress=False)
    assert list(swaps.summary["level"]) == [10, 50]
    assert set(swaps.bins["level"]) == {10, 50}


# --------------------------------------------------------------------------------------
# paired tests and corrections
# --------------------------------------------------------------------------------------


def test_compare_t_test_matches_scipy():
    result = random_result(m=4, n=12, measures=("AP",))
    out = compare(result, test="t", correction=None)
    group = next(score_matrices(result))
    assert len(out) == 6
    for _, row in out.iterrows():
        a = group.scores[group.runs.index(row["run_a"])]
        b = group.scores[group.runs.index(row["run_b"])]
        res = st.ttest_rel(a, b)
        ci = res.confidence_interval(0.95)
        assert row["p_value"] == pytest.approx(res.pvalue, abs=TOL)
        assert row["statistic"] == pytest.approx(res.statistic, abs=TOL)
        assert row["ci_low"] == pytest.approx(ci.low, abs=TOL)
        assert row["ci_high"] == pytest.approx(ci.high, abs=TOL)
        assert row["diff"] == pytest.approx((a - b).mean(), abs=TOL)
        assert row["effect_size"] == pytest.approx((a - b).mean() / (a - b).std(ddof=1), abs=TOL)
        assert row["p_adjusted"] == row["p_value"]


def test_compare_against_baseline_wilcoxon_and_sign():
    result = random_result(m=4, n=12, measures=("AP",))
    group = next(score_matrices(result))
    base = group.scores[group.runs.index("r0")]
    wil = compare(result, baseline="r0", test="wilcoxon", correction="bonferroni")
    assert list(wil["run"]) == ["r1", "r2", "r3"] and set(wil["baseline"]) == {"r0"}
    sign = compare(result, baseline="r0", test="sign", correction=None)
    for (_, w), (_, s) in zip(wil.iterrows(), sign.iterrows()):
        a = group.scores[group.runs.index(w["run"])]
        expected = st.wilcoxon(a, base).pvalue
        assert w["p_value"] == pytest.approx(expected, abs=TOL)
        assert w["p_adjusted"] == pytest.approx(min(1.0, 3 * expected), abs=TOL)
        diff = a - base
        binom = st.binomtest(int((diff > 0).sum()), int((diff != 0).sum()), 0.5)
        assert s["p_value"] == pytest.approx(binom.pvalue, abs=TOL)


@pytest.mark.parametrize("k, n", [(0, 5), (3, 7), (6, 12), (10, 12), (25, 40), (20, 40)])
def test_sign_test_matches_binomtest(k, n):
    from pdeval.analysis.statistics.significance import sign_test_p

    assert sign_test_p(np.array([k]), np.array([n]))[0] == pytest.approx(st.binomtest(k, n, 0.5).pvalue, abs=1e-12)


def test_compare_permutation_exact_matches_enumeration():
    rng = np.random.default_rng(8)
    scores = rng.random((3, 8))
    out = compare(to_frame(scores), test="permutation", correction=None, n_resamples=10_000)
    for (i, j), p in zip(itertools.combinations(range(3), 2), out["p_value"]):
        z = scores[i] - scores[j]
        observed = abs(z.mean())
        hits = sum(
            abs((np.array(signs) * z).mean()) >= observed - 1e-12 for signs in itertools.product([1, -1], repeat=8)
        )
        assert p == pytest.approx(hits / 256, abs=TOL)


def test_compare_random_tests_are_reproducible():
    result = random_result(m=4, n=20, measures=("AP",))
    for test in ("permutation", "bootstrap"):
        a = compare(result, test=test, seed=3, n_resamples=300)
        b = compare(result, test=test, seed=3, n_resamples=300)
        pd.testing.assert_frame_equal(a, b)
        assert ((a["p_value"] >= 0) & (a["p_value"] <= 1)).all()
        assert (a["ci_low"] <= a["diff"]).all() and (a["diff"] <= a["ci_high"]).all()


def direct_holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@settings(max_examples=100, deadline=None)
@given(hs.lists(hs.floats(0, 1, allow_nan=False), min_size=1, max_size=30))
def test_corrections_match_references(p):
    assert adjust_pvalues(p, "holm") == pytest.approx(direct_holm(p), abs=1e-12)
    assert adjust_pvalues(p, "bonferroni") == pytest.approx([min(1.0, len(p) * x) for x in p], abs=1e-12)
    assert adjust_pvalues(p, "fdr_bh") == pytest.approx(st.false_discovery_control(p, method="bh"), abs=1e-12)


def test_corrections_leave_nan_out_of_the_family():
    got = adjust_pvalues([0.01, np.nan, 0.04], "bonferroni")
    assert got[0] == pytest.approx(0.02) and np.isnan(got[1]) and got[2] == pytest.approx(0.08)


def test_compare_rejects_unknown_baseline_and_test():
    result = random_result(m=3, n=5, measures=("AP",))
    with pytest.raises(SchemaError, match="baseline 'zz'"):
        compare(result, baseline="zz")
    with pytest.raises(PdevalError, match=r"compare\(\): test=.anova. is not one of"):
        compare(result, test="anova")


def test_discriminative_power_and_swap_rates_return_frames():
    """Issue class 6: sort_values, ["power"] and pd.concat failed on their result objects."""
    result = random_result(m=4, n=12)
    power = discriminative_power(result, n_resamples=50, progress=False)
    assert isinstance(power, pd.DataFrame)
    assert power.sort_values("power")["power"].between(0, 1).all()
    both = pd.concat([power, power], ignore_index=True)
    assert type(both) is pd.DataFrame and len(both) == 2 * len(power)
    assert set(power.pairs["measure"]) == {"AP", "bpref"} and len(power.pairs) == 2 * 6
    swaps = swap_rates(result, c=5, n_resamples=30, progress=False)
    assert isinstance(swaps, pd.DataFrame) and swaps.sort_values("rate")["rate"].between(0, 1).all()
    assert len(pd.concat([swaps, swaps])) == 4 and len(swaps.bins) == 2 * 21
    pd.testing.assert_frame_equal(swaps.summary, pd.DataFrame(swaps))


def test_compare_takes_alpha_for_tests_and_intervals():
    """Vocabulary: compare took both alpha and confidence; the interval now covers 1 - alpha."""
    result = random_result(m=3, n=10, measures=("AP",))
    wide = compare(result, alpha=0.01)
    narrow = compare(result, alpha=0.2)
    assert (wide["ci_high"] - wide["ci_low"] > narrow["ci_high"] - narrow["ci_low"]).all()
    with pytest.raises(PdevalError, match="'confidence' is now called 'alpha'"):
        compare(result, confidence=0.95)
    with pytest.raises(PdevalError, match=r"compare\(\): alpha='0.05' is not a finite number"):
        compare(result, alpha="0.05")
    with pytest.raises(PdevalError, match="n_resamples= applies to test='permutation' or test='bootstrap' only"):
        compare(result, test="t", n_resamples=100)
