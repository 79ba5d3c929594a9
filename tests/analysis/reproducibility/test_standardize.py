"""pdeval.standardize: trec_eval 10.0's ``-Z`` output byte for byte (trec_eval built into a
temporary folder), the published outputs of Urbano, Lima & Hanjalic (SIGIR 2019) for all four
methods, the definitions of the papers as identities (z has mean 0 and sd 1 over the reference
runs; std_cdf, std_ab and the ECDF are functions of it or of the reference values), the papers'
stated properties and slow loops as Hypothesis properties, and the errors.

The worked example is Urbano et al.'s within-collection experiment: their repository
julian-urbano/sigir2019-standardization publishes the score matrices and, per random trial, the
correlations between mean raw and mean standardised scores (``tests/data/standardization``
holds the numbers of one trial per collection and says how they were drawn). Neither paper's
text was reachable here for a table of raw and standardised values; Sakai's abstract (sample mean
and sample sd of past runs) and his ICTIR 2016 slides (A = 0.15, B = 0.5, "std-AB with clipping")
give the conventions but no numbers, and no code of his was found.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import pdeval
from pdeval.errors import ParseError, PdevalError, PdevalWarning
from locations import REPO

ROOT = REPO
TREC_EVAL = ROOT.parent / "shared" / "tools" / "trec_eval-10.0"
CLEF15 = ROOT.parent / "shared" / "data" / "clef2015-chs-task2"


def _matrix_result(matrix: np.ndarray, measure: str = "AP") -> pd.DataFrame:
    runs, topics = matrix.shape
    return pd.DataFrame({
        "run": np.repeat([f"r{i}" for i in range(runs)], topics),
        "query_id": np.tile([f"t{j}" for j in range(topics)], runs),
        "measure": measure,
        "value": matrix.ravel(),
    })


SMALL = _matrix_result(np.array([[0.1, 0.5, 0.9], [0.3, 0.5, 0.2], [0.5, 0.8, 0.4], [0.7, 0.2, 0.6]]))


def test_z_has_mean_zero_and_sd_one_over_the_reference_runs():
    z = pdeval.standardize(SMALL)
    per_topic = z.groupby("query_id")["value"]
    assert np.allclose(per_topic.mean(), 0) and np.allclose(per_topic.std(), 1)


def test_the_transforms_are_functions_of_z():
    z = pdeval.standardize(SMALL, ["r0", "r1", "r2"])["value"].to_numpy()
    cdf = pdeval.standardize(SMALL, ["r0", "r1", "r2"], method="std_cdf")["value"].to_numpy()
    ab = pdeval.standardize(SMALL, ["r0", "r1", "r2"], method="std_ab")["value"].to_numpy()
    assert np.allclose(cdf, stats.norm.cdf(z))
    assert np.allclose(ab, np.clip(0.15 * z + 0.5, 0, 1))
    # Urbano et al.'s view of std-AB: the CDF of a uniform distribution on
    # [mean - sd B/A, mean + sd (1 - B)/A] (their R code's U-std)
    ref = SMALL[SMALL.run != "r3"].groupby("query_id")["value"]
    mean, sd = SMALL["query_id"].map(ref.mean()), SMALL["query_id"].map(ref.std())
    uniform = stats.uniform.cdf(SMALL["value"], loc=mean - sd * 0.5 / 0.15, scale=sd / 0.15)
    assert np.allclose(ab, uniform)


def test_ecdf_counts_the_reference_values_at_most_x():
    ecdf = pdeval.standardize(SMALL, method="ecdf").set_index(["run", "query_id"])["value"]
    # topic t1: values 0.5, 0.5, 0.8, 0.2 -> F(0.5) = 3/4, F(0.8) = 1, F(0.2) = 1/4
    assert ecdf[("r0", "t1")] == 0.75 and ecdf[("r2", "t1")] == 1.0 and ecdf[("r3", "t1")] == 0.25


values = st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6).flatmap(lambda runs: st.lists(
    st.lists(values, min_size=runs, max_size=runs), min_size=1, max_size=5)), st.integers(0, 3))
def test_every_method_equals_a_slow_loop(columns, extra):
    matrix = np.array(columns).T  # runs x topics
    result = _matrix_result(matrix)
    reference = [f"r{i}" for i in range(matrix.shape[0])]
    ecdf = pdeval.standardize(result, reference, method="ecdf")["value"].to_numpy()
    z = pdeval.standardize(result, reference, zero_variance="nan")["value"].to_numpy()
    for row, (i, j) in enumerate(np.ndindex(*matrix.shape)):
        topic = matrix[:, j]
        assert ecdf[row] == np.mean(topic <= matrix[i, j])
        sd = np.std(topic, ddof=1)
        if np.all(topic == topic[0]):  # (numpy's two-pass sd of equal values can be 1e-17, not 0)
            assert np.isnan(z[row])
        else:
            assert z[row] == pytest.approx((matrix[i, j] - topic.mean()) / sd, abs=1e-9)
    assert np.all(np.diff(ecdf.reshape(matrix.shape)[np.argsort(matrix, axis=0), np.arange(matrix.shape[1])],
                          axis=0) >= 0)  # monotone in the value


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6).flatmap(lambda runs: st.lists(
    st.lists(values, min_size=runs, max_size=runs, unique=True), min_size=1, max_size=4)),
    st.floats(0.01, 0.3), st.floats(0.3, 0.7))
def test_std_ab_puts_the_reference_mean_at_b_and_one_sd_at_b_plus_minus_a(columns, a, b):
    """Sakai (ICTIR 2016): std-AB = A z + B, so the "average" system scores B and one standard deviation
    (the sample sd of the reference runs) above or below it scores B +- A; beyond [0, 1] it is clipped."""
    matrix = np.array(columns).T
    mean, sd = matrix.mean(0), matrix.std(0, ddof=1)
    probes = np.vstack([mean, mean + sd, mean - sd, mean + 10 * sd / a, mean - 10 * sd / a])
    result = _matrix_result(np.vstack([matrix, probes]))
    reference = [f"r{i}" for i in range(matrix.shape[0])]
    ab = pdeval.standardize(result, reference, method="std_ab", a=a, b=b)["value"].to_numpy()
    ab = ab.reshape(-1, matrix.shape[1])[matrix.shape[0]:]
    expected = np.array([b, b + a, b - a, 1.0, 0.0])[:, None] * np.ones(matrix.shape[1])
    assert np.allclose(ab, expected, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6).flatmap(lambda runs: st.lists(
    st.lists(values, min_size=runs, max_size=runs, unique=True), min_size=1, max_size=4)))
def test_the_ecdf_is_uniform_over_the_reference_runs_and_ignores_monotone_transforms(columns):
    """Urbano et al. (SIGIR 2019): E-std is the ECDF of the reference runs' scores on the topic, in (0, 1];
    with no ties the n reference runs get exactly 1/n, 2/n, ..., 1 (a uniform distribution, mean
    (n + 1) / 2n), and a strictly increasing transform of every score changes nothing."""
    matrix = np.array(columns).T
    runs = matrix.shape[0]
    result = _matrix_result(matrix)
    ecdf = pdeval.standardize(result, method="ecdf")["value"].to_numpy().reshape(matrix.shape)
    assert np.all((ecdf > 0) & (ecdf <= 1))
    assert np.array_equal(np.sort(ecdf, axis=0), np.tile(np.arange(1, runs + 1)[:, None] / runs, matrix.shape[1]))
    assert np.allclose(ecdf.mean(0), (runs + 1) / (2 * runs))
    stretched = result.assign(value=np.exp(3 * result["value"]) + result["value"] ** 3)
    assert np.array_equal(pdeval.standardize(stretched, method="ecdf")["value"].to_numpy(), ecdf.ravel())


def test_a_reference_set_of_one_run_is_refused():
    with pytest.raises(PdevalError, match="reference set holds 1 run"):
        pdeval.standardize(SMALL, ["r0"])
    with pytest.raises(PdevalError, match="reference set holds 1 run"):
        pdeval.standardize(SMALL, "r0", method="ecdf")


def test_zero_variance_is_named_or_follows_a_policy():
    flat = SMALL.assign(value=np.where(SMALL.query_id == "t1", 0.5, SMALL.value))
    with pytest.raises(PdevalError, match="standard deviation 0.*'query_id': 't1'"):
        pdeval.standardize(flat)
    nan = pdeval.standardize(flat, zero_variance="nan")
    assert nan.loc[nan.query_id == "t1", "value"].isna().all()
    rule = pdeval.standardize(flat, ["r0", "r1"], zero_variance="trec_eval", fill_value=-1e6)
    t1 = rule[rule.query_id == "t1"].set_index("run")["value"]
    assert (t1 == 0).all()  # every value equals the (flat) mean
    assert pdeval.standardize(flat, method="ecdf").notna().all().all()  # the ECDF needs no variance
    # Urbano et al.'s code: mean 0 and sd 1 where the reference does not vary, so z is the raw value
    t1 = flat.query_id == "t1"
    flat.loc[t1 & (flat.run == "r3"), "value"] = 0.9  # not a reference run
    raw = pdeval.standardize(flat, ["r0", "r1"], zero_variance="raw", method="std_ab")
    assert np.allclose(raw.loc[t1, "value"], [0.575, 0.575, 0.575, 0.635])
    assert raw.loc[~t1, "value"].equals(pdeval.standardize(flat[~t1], ["r0", "r1"], method="std_ab")["value"])


def test_unknown_reference_runs_and_topics_are_named():
    with pytest.raises(PdevalError, match=r"reference=\['r0', 'nope'\] names run\(s\) \['nope'\]"):
        pdeval.standardize(SMALL, ["r0", "nope"])
    other = SMALL[SMALL.query_id != "t2"]
    with pytest.raises(PdevalError, match="topics no reference run has"):
        pdeval.standardize(SMALL, other)


def test_zscore_files_round_trip_and_bad_lines_are_located(tmp_path):
    table = pdeval.zscore_table(SMALL)
    assert set(table.columns) == {"query_id", "measure", "mean", "stddev"} and set(table["measure"]) == {"map"}
    path = tmp_path / "z.txt"
    pdeval.write_zscores(table, path)
    back = pdeval.read_zscores(path)
    pd.testing.assert_frame_equal(back, table.reset_index(drop=True), check_dtype=False)
    from_file = pdeval.standardize(SMALL, zscores=path)
    pd.testing.assert_frame_equal(from_file, pdeval.standardize(SMALL))
    (tmp_path / "bad.txt").write_text("t0 map 0.5 0.1\nt1 map 0.5\n")
    with pytest.raises(ParseError, match="bad.txt, line 2"):
        pdeval.read_zscores(tmp_path / "bad.txt")
    with pytest.raises(PdevalError, match=r"standardize\(\): zscores= applies to .* only, not method='ecdf'"):
        pdeval.standardize(SMALL, zscores=path, method="ecdf")
    with pytest.warns(PdevalWarning, match="no mean and deviation"):
        partial = pdeval.standardize(SMALL, zscores=table[table.query_id != "t2"])
    assert partial.loc[partial.query_id == "t2", "value"].isna().all()


def test_options_outside_their_domain_are_refused_naming_them():
    """Issue class 1: a=nan made every value NaN; text where a number goes raised a raw error."""
    for options, named in (({"method": "std_ab", "a": float("nan")}, "a=nan"), ({"fill_value": "x"}, "fill_value='x'"),
                           ({"method": "std_ab", "b": float("inf")}, "b=inf")):
        with pytest.raises(PdevalError, match=rf"standardize\(\): {re.escape(named)} is not"):
            pdeval.standardize(SMALL, **options)
    with pytest.raises(PdevalError, match="'missing' is now called 'fill_value'"):
        pdeval.standardize(SMALL, missing=-1e6)
    with pytest.raises(PdevalError, match="'raise' is now called 'error'"):
        pdeval.standardize(SMALL, zero_variance="raise")
    with pytest.raises(PdevalError, match=r"a= applies to method='std_ab' only"):
        pdeval.standardize(SMALL, a=0.2)


def test_trec_eval_rule_finds_the_mean_of_equal_values():
    """Issue class 5: three reference runs scoring 0.4 have the floating-point mean
    0.4000000000000001; x == mean failed and the topic got NaN instead of 0."""
    flat = pd.DataFrame({"run": ["r0", "r1", "r2"] * 2, "query_id": ["t0"] * 3 + ["t1"] * 3, "measure": "AP",
                         "value": [0.4, 0.4, 0.4, 0.1, 0.5, 0.9]})
    out = pdeval.standardize(flat, zero_variance="trec_eval")
    assert out["value"].tolist()[:3] == [0.0, 0.0, 0.0]
    table = pdeval.zscore_table(flat)
    assert table["stddev"].iloc[0] == 0.0 and table["mean"].iloc[0] == 0.4


def test_ecdf_leaves_nan_values_out():
    """Issue class 5: a NaN value became 1.0 and counted in the other runs' denominators."""
    frame = pd.DataFrame({"run": ["r0", "r1", "r2"], "query_id": "t0", "measure": "AP", "value": [np.nan, 0.3, 0.5]})
    out = pdeval.standardize(frame, method="ecdf")["value"].tolist()
    assert np.isnan(out[0]) and out[1:] == [0.5, 1.0]


def test_ecdf_names_the_topic_the_reference_lacks():
    """Issue class 4: the ECDF path said how many values but not which topic."""
    other = SMALL[SMALL.query_id != "t2"]
    with pytest.raises(PdevalError, match=r"topics no reference run has, e.g. \[\{'query_id': 't2'"):
        pdeval.standardize(SMALL, other, method="ecdf")


def test_the_accessor_calls_the_function():
    pd.testing.assert_frame_equal(SMALL.ir.standardize(["r0", "r2"], method="std_ab"),
                                  pdeval.standardize(SMALL, ["r0", "r2"], method="std_ab"))


# ---- Urbano, Lima & Hanjalic's published outputs (SIGIR 2019) --------------------------------

URBANO = ROOT / "tests" / "data" / "standardization" / "urbano2019_within.json"
AUTHORS_NAMES = {"z": "z-std", "std_cdf": "N-std", "std_ab": "U-std", "ecdf": "E-std"}


def _published_trial(collection: str) -> tuple[np.ndarray, dict]:
    """(runs x topics scores of the trial's topics in the authors' draw order, the trial's r and tau)."""
    data = json.loads(URBANO.read_text())["collections"][collection]
    scores = np.array(data["scores"])  # topics (data["topics"]) x runs
    trial = data["trials"][0]
    rows = [data["topics"].index(topic) for topic in trial["topics"]]
    assert scores.shape == (50, data["n_runs"]) and len(set(rows)) == 50
    return scores[rows].T, trial


@pytest.mark.parametrize("collection", ["robust2004_ap", "terabyte2006_ap"])
def test_every_method_reproduces_the_authors_published_trial(collection):
    """The within-collection experiment of Urbano et al. (section 3.1): every AP score standardised against
    all runs of the collection on its topic; the authors' Pearson r and Kendall tau-b between the runs' mean
    raw and mean standardised scores over the trial's 50 topics, published to 6 decimals."""
    matrix, trial = _published_trial(collection)
    raw = matrix.mean(axis=1)
    for method, name in AUTHORS_NAMES.items():
        values = pdeval.standardize(_matrix_result(matrix), method=method)["value"].to_numpy()
        means = values.reshape(matrix.shape).mean(axis=1)
        assert np.corrcoef(raw, means)[0, 1] == pytest.approx(trial["r"][name], abs=5e-7), name
        # rounded so that means equal as numbers tie, as in the authors' R sums
        tau = stats.kendalltau(np.round(raw, 12), np.round(means, 12)).statistic
        assert tau == pytest.approx(trial["tau"][name], abs=5e-7), name


def test_the_published_trial_tells_the_conventions_apart():
    """The other readings of the papers miss the authors' r by far more than its rounding: the ECDF
    with < or with half the ties, std-AB unclipped or with the population sd, Phi of a population-sd z."""
    matrix, trial = _published_trial("robust2004_ap")
    raw = matrix.mean(axis=1)
    below = (matrix[None, :, :] < matrix[:, None, :]).mean(axis=1)  # [i, j]: share of runs k with x_kj < x_ij
    at_most = (matrix[None, :, :] <= matrix[:, None, :]).mean(axis=1)
    mean, sd, population = matrix.mean(0), matrix.std(0, ddof=1), matrix.std(0)
    rivals = {
        "E-std": [below, (below + at_most) / 2],
        "U-std": [0.15 * (matrix - mean) / sd + 0.5, np.clip(0.15 * (matrix - mean) / population + 0.5, 0, 1)],
        "N-std": [stats.norm.cdf((matrix - mean) / population)],
    }
    assert np.corrcoef(raw, at_most.mean(1))[0, 1] == pytest.approx(trial["r"]["E-std"], abs=5e-7)
    for name, readings in rivals.items():
        for values in readings:
            assert abs(np.corrcoef(raw, values.mean(1))[0, 1] - trial["r"][name]) > 2e-6, name


# ---- trec_eval -Z, byte for byte ------------------------------------------------------------

@pytest.fixture(scope="module")
def trec_eval(tmp_path_factory) -> Path:
    if not TREC_EVAL.is_dir():
        pytest.skip("trec_eval 10.0's source is in ../shared/tools beside the repository, which is absent")
    if not (shutil.which("cc") or shutil.which("gcc")) or not shutil.which("make"):
        pytest.skip("no C compiler or make to build trec_eval")
    build = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(TREC_EVAL, build)
    subprocess.run(["make", "-s"], cwd=build, check=True, capture_output=True)
    return build / "trec_eval"


def _trec_eval_z_text(z: pd.DataFrame) -> str:
    """trec_eval's -q -Z layout: per topic (sorted), the measures in trec_eval's order as
    ``Z%-22s\\t%s\\t%6.4f``, then the mean of each measure over the topics as ``all``."""
    from pdeval.integrations.trec_eval.names import Item, order_key
    from pdeval.measures import parse

    measures = {m: parse(m) for m in z["measure"].unique()}
    order = {m: order_key(measures[m], Item(m, measures[m].trec_eval_name()), i) for i, m in enumerate(measures)}
    z = z.assign(name=z["measure"].map(lambda m: measures[m].trec_eval_name()), key=z["measure"].map(order))
    z = z.sort_values(["query_id", "key"])
    lines = [f"Z{n:<22}\t{q}\t{v:6.4f}" for n, q, v in zip(z["name"], z["query_id"], z["value"])]
    means = z.groupby(["key", "name"], sort=True)["value"].mean()
    lines += [f"Z{n:<22}\tall\t{v:6.4f}" for (_, n), v in means.items()]
    return "\n".join(lines) + "\n"


def test_z_scores_equal_trec_eval_minus_Z_byte_for_byte(trec_eval, tmp_path):
    if not CLEF15.is_dir():
        pytest.skip("the CLEF eHealth 2015 runs live in ../shared/data beside the repository, which is absent")
    qrels = CLEF15 / "qrels" / "qrels.eng.clef2015.qtest.graded.txt"
    names = ["FDUSGInfo_EN_Run.1", "ECNU_EN_Run.1", "KISTI_EN_RUN.1", "CUNI_EN_Run.2", "USST_EN_Run.1"]
    runs = pd.concat([pdeval.read_run(CLEF15 / "runs" / f"{n}.dat.gz").assign(run=n) for n in names])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        result = pdeval.evaluate(runs, pdeval.read_qrels(qrels), ["AP", "P@10", "nDCG@10", "Bpref"])
    zfile = tmp_path / "zscores.txt"
    pdeval.write_zscores(pdeval.zscore_table(result, names[1:]), zfile)
    run_file = tmp_path / "run.txt"
    run_file.write_bytes(gzip.open(CLEF15 / "runs" / f"{names[0]}.dat.gz").read())
    command = [str(trec_eval), "-q", "-Z", str(zfile), "-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", "-m", "bpref",
               str(qrels), str(run_file)]
    expected = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    z = pdeval.standardize(result[result.run == names[0]], zscores=zfile, fill_value=-1000000.0)
    ours = _trec_eval_z_text(z)
    assert "-1000000.0000" in expected  # topics where the reference runs all score 0: trec_eval's rule
    assert ours == expected
