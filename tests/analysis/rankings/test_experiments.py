"""Tests of pdeval.analysis.rankings.training: He, Macdonald & Ounis (2008) training sensitivity (E11)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from pdeval.errors import PdevalError, SchemaError
from pdeval.analysis.rankings.training import (
    combine_sensitivities,
    full_judgment_wilcoxon,
    inverse_sd,
    sign_test,
    training_sensitivity,
)

TOL = 1e-9

# E11 worked examples
THETA_MAP = [0.75, 0.70, 0.80, 0.75, 0.75, 0.65, 0.80, 0.75, 0.70, 0.75]
THETA_BPREF = [0.75, 0.75, 0.75, 0.70, 0.75, 0.75, 0.80, 0.75, 0.75, 0.75]

GRID = [0.60, 0.65, 0.70, 0.75, 0.80, 0.85]
TRAIN = ["t1", "t2"]
TEST = [f"u{i}" for i in range(8)]


def test_e11_inverse_sd_examples():
    assert statistics_sd(THETA_MAP) == pytest.approx(0.0459468292, abs=TOL)
    assert inverse_sd(THETA_MAP) == pytest.approx(21.7642875033, abs=TOL)
    assert inverse_sd(THETA_BPREF) == pytest.approx(42.4264068712, abs=TOL)
    assert inverse_sd([0.5, 0.5, 0.5]) == math.inf
    # np.std of ten copies of 0.6 is 1.2e-16 (the mean rounds): equal values are still perfectly stable
    assert inverse_sd([0.6] * 10) == math.inf


def test_equal_optima_are_infinitely_stable_despite_rounding():
    frame = experiment()
    frame.loc[frame["level"].eq(10), "value"] = 1.0 - (frame["b"] - 0.60).abs()  # every sample trains to 0.60
    frame["b"] = frame["b"].replace({0.60: 0.6})
    out = training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    stab = out.stability.set_index(["measure", "level"])
    assert set(out.optimal.loc[out.optimal["level"] == 10, "theta"]) == {0.6}
    assert stab.loc[("AP", 10), "sigma"] == 0.0 and stab.loc[("AP", 10), "inv_sigma"] == math.inf
    dstab = out.diff_stability.set_index(["level", "evaluated"])
    assert dstab.loc[(10, "AP"), "inv_sigma"] == math.inf
    assert math.isnan(inverse_sd([0.5]))


def statistics_sd(values):
    import statistics

    return statistics.stdev(values)


def test_e11_sign_test_example():
    assert sign_test(10, 12) == pytest.approx(158 / 4096, abs=TOL)
    assert sign_test(10, 12) == pytest.approx(0.0385742188, abs=TOL)
    # one-sided half of it, as quoted in E11
    assert st.binomtest(10, 12, 0.5, alternative="greater").pvalue == pytest.approx(0.0192871094, abs=TOL)


@pytest.mark.parametrize("a, b", [(0, 0), (0, 1), (3, 7), (34, 64), (60, 64), (8, 16)])
def test_sign_test_matches_binomtest(a, b):
    expected = 1.0 if b == 0 else st.binomtest(a, b, 0.5).pvalue
    assert sign_test(a, b) == pytest.approx(expected, abs=1e-12)


def test_sign_test_rejects_bad_counts():
    with pytest.raises(PdevalError):
        sign_test(5, 3)


def full_values(theta, topic):
    """Complete-judgment test values: AP peaks at 0.70, bpref at 0.80, topic-dependent."""
    k = int(topic[1:])
    ap = 0.5 - (theta - 0.70) ** 2 * (1 + 0.3 * k) + 0.01 * k
    bpref = 0.6 - (theta - 0.80) ** 2 * (1 + 0.1 * k) - 0.02 * k
    return {"AP": ap, "bpref": bpref}


def experiment(full_rows=True):
    """A sweep over GRID: reduced training qrels at levels 10 and 50, full qrels for all topics."""
    rows = []
    for level, targets in ((10, (THETA_MAP, THETA_BPREF)), (50, ([0.75] * 10, [0.75] * 10))):
        for sample in range(10):
            for theta in GRID:
                for topic in TRAIN:
                    for measure, target in zip(("AP", "bpref"), targets):
                        value = 1.0 - abs(theta - target[sample]) + (0.01 if topic == "t1" else 0.0)
                        rows.append((theta, level, sample, topic, measure, value))
    if full_rows:
        for theta in GRID:
            for topic in TRAIN:
                # full training: AP peaks at 0.75, bpref at 0.65
                rows.append((theta, np.nan, np.nan, topic, "AP", 1.0 - abs(theta - 0.75)))
                rows.append((theta, np.nan, np.nan, topic, "bpref", 1.0 - abs(theta - 0.65)))
            for topic in TEST:
                for measure, value in full_values(theta, topic).items():
                    rows.append((theta, np.nan, np.nan, topic, measure, value))
    frame = pd.DataFrame(rows, columns=["b", "level", "sample", "query_id", "measure", "value"])
    frame["run"] = "bm25_b" + frame["b"].map("{:.2f}".format)
    return frame


def full_mean(theta, measure):
    return float(np.mean([full_values(theta, t)[measure] for t in TEST]))


def test_training_sensitivity_protocol():
    out = training_sensitivity(experiment(), param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)

    # 1. optimal parameters per sample are the worked example's lists
    opt = out.optimal[out.optimal["level"] == 10].sort_values("sample")
    assert list(opt.loc[opt["measure"] == "AP", "theta"]) == pytest.approx(THETA_MAP)
    assert list(opt.loc[opt["measure"] == "bpref", "theta"]) == pytest.approx(THETA_BPREF)

    # 3. parameter stability
    stab = out.stability.set_index(["measure", "level"])["inv_sigma"]
    assert stab["AP", 10] == pytest.approx(21.7642875033, abs=TOL)
    assert stab["bpref", 10] == pytest.approx(42.4264068712, abs=TOL)
    assert stab["AP", 50] == math.inf and stab["bpref", 50] == math.inf

    # 2. test effectiveness X(Y) with complete judgments
    eff = out.effectiveness.set_index(["level", "sample", "evaluated", "trained"])["value"]
    for s in range(10):
        assert eff[10, s, "AP", "AP"] == pytest.approx(full_mean(THETA_MAP[s], "AP"), abs=TOL)
        assert eff[10, s, "AP", "bpref"] == pytest.approx(full_mean(THETA_BPREF[s], "AP"), abs=TOL)
        assert eff[10, s, "bpref", "AP"] == pytest.approx(full_mean(THETA_MAP[s], "bpref"), abs=TOL)
        assert eff[10, s, "bpref", "bpref"] == pytest.approx(full_mean(THETA_BPREF[s], "bpref"), abs=TOL)

    # 4. effectiveness stability
    diff_ap = [abs(full_mean(a, "AP") - full_mean(b, "AP")) for a, b in zip(THETA_MAP, THETA_BPREF)]
    diff_bpref = [abs(full_mean(b, "bpref") - full_mean(a, "bpref")) for a, b in zip(THETA_MAP, THETA_BPREF)]
    dstab = out.diff_stability.set_index(["level", "evaluated"])["inv_sigma"]
    assert dstab[10, "AP"] == pytest.approx(1 / np.std(diff_ap, ddof=1), abs=1e-6)
    assert dstab[10, "bpref"] == pytest.approx(1 / np.std(diff_bpref, ddof=1), abs=1e-6)
    assert dstab[50, "AP"] == math.inf  # every sample trains both to 0.75: all differences 0

    # 5. sign tests: level 10 decides, level 50 is a tie (inf vs inf) and is dropped
    signs = out.sign_tests().set_index("kind")
    assert signs.loc["opt", "a"] == 1 and signs.loc["opt", "b"] == 1
    assert signs.loc["opt", "label"] == "1/1" and signs.loc["opt", "n_tied"] == 1
    assert signs.loc["opt", "p_value"] == pytest.approx(1.0)
    expected_a = int(1 / np.std(diff_bpref, ddof=1) > 1 / np.std(diff_ap, ddof=1))
    assert signs.loc["diff", "a"] == expected_a and signs.loc["diff", "b"] == 1
    only50 = out.sign_tests(levels=[50]).set_index("kind")
    assert only50.loc["opt", "b"] == 0 and only50.loc["opt", "p_value"] == 1.0
    # rtol: 21.76 and 42.43 lie 48.7 % apart (relative to the larger), so rtol=0.5 ties them
    assert out.sign_tests(rtol=0.4).set_index("kind").loc["opt", "b"] == 1
    assert out.sign_tests(rtol=0.5).set_index("kind").loc["opt", "b"] == 0

    # 6. Wilcoxon at complete judgments: theta*_AP = 0.75, theta*_bpref = 0.65 on full qrels
    w = out.wilcoxon.iloc[0]
    assert w["theta_measure"] == pytest.approx(0.65) and w["theta_baseline"] == pytest.approx(0.75)
    a = [full_values(0.65, t)["AP"] for t in TEST]
    b = [full_values(0.75, t)["AP"] for t in TEST]
    expected = st.wilcoxon(a, b)
    assert w["p_value"] == pytest.approx(expected.pvalue, abs=TOL)
    assert w["statistic"] == pytest.approx(expected.statistic, abs=TOL)
    assert w["n_topics"] == len(TEST)


def test_ties_go_to_the_first_grid_value():
    frame = experiment()
    flat = frame["level"].notna() & (frame["measure"] == "AP")
    frame.loc[flat, "value"] = 0.5
    out = training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    assert set(out.optimal.loc[out.optimal["measure"] == "AP", "theta"]) == {0.60}
    out = training_sensitivity(
        frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST, grid=GRID[::-1]
    )
    assert set(out.optimal.loc[out.optimal["measure"] == "AP", "theta"]) == {0.85}


def test_reference_sources_agree():
    frame = experiment()
    full = frame[frame["level"].isna()].drop(columns=["level", "sample"])
    by_nan = training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    by_ref = training_sensitivity(
        frame[frame["level"].notna()], param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST, reference=full
    )
    pd.testing.assert_frame_equal(by_nan.effectiveness, by_ref.effectiveness)
    pd.testing.assert_frame_equal(by_nan.stability, by_ref.stability)
    # full_level: the complete qrels stored as level 100 (every sample identical)
    at100 = pd.concat([full.assign(level=100, sample=s) for s in range(2)], ignore_index=True)
    frame100 = pd.concat([frame[frame["level"].notna()], at100], ignore_index=True)
    by_level = training_sensitivity(
        frame100, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST, full_level=100
    )
    eff = by_level.effectiveness
    pd.testing.assert_frame_equal(
        eff[eff["level"] != 100].reset_index(drop=True), by_nan.effectiveness.reset_index(drop=True), check_dtype=False
    )
    # level 100 trains on complete qrels: theta* = 0.75 (AP) and 0.65 (bpref) in both samples
    at = by_level.optimal[by_level.optimal["level"] == 100].set_index(["measure", "sample"])["theta"]
    assert at["AP", 0] == pytest.approx(0.75) and at["bpref", 1] == pytest.approx(0.65)


def test_several_tasks_pool_their_cases():
    frame = experiment()
    out = training_sensitivity(
        frame, param="b", measures=["bpref"], tasks={"A->B": (TRAIN, TEST), "A->B'": (TRAIN, TEST[:4])}
    )
    assert set(out.stability["task"]) == {"A->B", "A->B'"}
    signs = out.sign_tests().set_index("kind")
    assert signs.loc["opt", "a"] == 2 and signs.loc["opt", "b"] == 2 and signs.loc["opt", "n_cases"] == 4
    assert signs.loc["opt", "p_value"] == pytest.approx(0.5)
    assert len(out.wilcoxon) == 2


def test_models_combine_into_model_task_level_cases():
    frame = experiment()
    bm25 = training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    # a second "model": the same sweep with bpref's level-10 optima made *less* stable than AP's
    other = frame.rename(columns={"b": "c"})
    flip = other["level"].eq(10) & other["measure"].isin(["AP", "bpref"])
    swapped = other.loc[flip].copy()
    swapped["measure"] = swapped["measure"].map({"AP": "bpref", "bpref": "AP"})
    other = pd.concat([other[~flip], swapped], ignore_index=True)
    pl2 = training_sensitivity(other, param="c", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    both = combine_sensitivities({"BM25": bm25, "PL2": pl2})
    assert both.param == {"BM25": "b", "PL2": "c"}
    assert list(both.stability.columns[:2]) == ["model", "task"]
    assert len(both.optimal) == len(bm25.optimal) + len(pl2.optimal)
    pd.testing.assert_frame_equal(
        both.stability[both.stability["model"] == "PL2"].drop(columns="model").reset_index(drop=True), pl2.stability
    )
    # level 10 decides in both models, in opposite directions: 1 of 2 untied (model, task, level) cases
    signs = both.sign_tests().set_index("kind")
    assert signs.loc["opt", "a"] == 1 and signs.loc["opt", "b"] == 2 and signs.loc["opt", "n_cases"] == 4
    assert signs.loc["opt", "p_value"] == pytest.approx(1.0)
    assert set(both.wilcoxon["model"]) == {"BM25", "PL2"}
    # levels per model: level 10 counts for BM25 only -> its one case, which bpref wins
    only = both.sign_tests(levels={"BM25": [10], "PL2": [50]}).set_index("kind")
    assert only.loc["opt", "a"] == 1 and only.loc["opt", "b"] == 1 and only.loc["opt", "n_cases"] == 2
    with pytest.raises(PdevalError, match="not values of 'model'"):
        both.sign_tests(levels={"BM2": [10]})
    with pytest.raises(PdevalError, match="same comparison"):
        combine_sensitivities({"BM25": bm25, "other": dataclasses.replace(bm25.bundle, measures=["nDCG"])})
    with pytest.raises(PdevalError, match="already has"):
        combine_sensitivities({"all": both})


def test_full_judgment_wilcoxon_identical_settings():
    frame = experiment()
    # bpref := AP on complete judgments, so both train to the same parameter value
    same = frame[frame["level"].isna()].copy()
    same.loc[(same["measure"] == "bpref"), "value"] = same.loc[(same["measure"] == "AP"), "value"].to_numpy()
    out = full_judgment_wilcoxon(
        same.drop(columns=["level", "sample"]), param="b", train_topics=TRAIN, test_topics=TEST, measures=["bpref"]
    )
    assert out["p_value"].item() == 1.0 and math.isnan(out["statistic"].item())


def test_errors_name_the_problem():
    frame = experiment(full_rows=False)
    with pytest.raises(SchemaError, match="reference="):
        training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    frame = experiment()
    with pytest.raises(SchemaError, match="'c'"):
        training_sensitivity(frame, param="c", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)
    with pytest.raises(SchemaError, match="infAP"):
        training_sensitivity(frame, param="b", measures=["infAP"], train_topics=TRAIN, test_topics=TEST)
    with pytest.raises(SchemaError, match="only 8 of the 9"):
        training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST + ["zz"])
    with pytest.raises(PdevalError, match="reference_measure=.AP. must not be one of measures"):
        training_sensitivity(frame, param="b", measures=["AP"], train_topics=TRAIN, test_topics=TEST)
    gappy = frame.drop(frame.index[(frame["level"] == 10) & (frame["sample"] == 3) & (frame["b"] == 0.70)][:1])
    with pytest.raises(SchemaError, match="lacks topics"):
        training_sensitivity(gappy, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST)


def test_the_reference_measure_is_named_as_a_measure():
    """Vocabulary: baseline= is a run everywhere; training_sensitivity's measure is reference_measure=."""
    frame = experiment()
    out = training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST,
                               reference_measure="AP")
    assert isinstance(out, pd.DataFrame) and set(out["kind"]) == {"opt", "diff"}
    assert out.reference_measure == "AP" and isinstance(out.stability, pd.DataFrame)
    with pytest.raises(PdevalError, match="'baseline' is now called 'reference_measure'"):
        training_sensitivity(frame, param="b", measures=["bpref"], train_topics=TRAIN, test_topics=TEST, baseline="AP")
