"""pdeval.estimate: bootstrap, calibrated labels and prediction-powered inference.

Oracles: the engine (:func:`pdeval.evaluate`) for today's values and for the values under a
given labelling of the unjudged documents (a slow loop over runs, one evaluation each);
``ppi-python`` for PPI; a simulation with known truth for PPI's coverage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.analysis.estimates import label_priors
from pdeval.analysis.estimates.ppi import ppi_mean
from pdeval.errors import DuplicateError, MeasureError, OverlapError, OverlapWarning, PdevalError, SchemaError

MEASURES = ["P@5", "R@5", "AP", "AP@5", "RR", "RR@3", "nDCG", "nDCG@5", "nDCG(gains={1:1,2:5})@5",
            "RBP(p=0.5)", "RBP(rel=2)@5"]


def collection(seed: int, n_runs: int = 3, n_topics: int = 3, depth: int = 12, judged: int = 18, docs: int = 30):
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(n_runs):
        for topic in range(n_topics):
            ranked = rng.permutation(docs)[:depth]
            rows += [(f"r{run}", f"t{topic}", f"d{d}", float(depth - i) + (rng.random() < 0.2)) for i, d in
                     enumerate(ranked)]
    qrels = [(f"t{topic}", f"d{d}", int(rng.integers(0, 3))) for topic in range(n_topics)
             for d in rng.permutation(docs)[:judged]]
    return (pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"]),
            pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]))


def completed(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """Every retrieved document judged: the unjudged ones nonrelevant."""
    pairs = run[["query_id", "doc_id"]].drop_duplicates()
    merged = pairs.merge(qrels, how="outer").fillna({"relevance": 0})
    return merged.astype({"relevance": int})


def test_today_value_is_the_engines():
    run, qrels = collection(1)
    got = pdeval.estimate(run, qrels, MEASURES, n_resamples=20, seed=0)
    expected = pdeval.evaluate(run, qrels, MEASURES)
    merged = got.merge(expected, on=["run", "query_id", "measure"], suffixes=("", "_engine"))
    assert len(merged) == len(got) == len(expected)
    np.testing.assert_allclose(merged["value"], merged["value_engine"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method, prior", [("bootstrap", "pool"), ("bootstrap", "run"), ("bootstrap", "both"),
                                           ("bootstrap", "condensed"), ("bootstrap", "unique"), ("labels", None)])
def test_complete_judgments_give_todays_value_with_zero_width(method, prior):
    run, qrels = collection(2)
    full = completed(run, qrels)
    options = {"pool_depth": 5} if prior == "unique" else {}
    if prior is not None:
        options["prior"] = prior
    automatic = full if method == "labels" else None
    measures = [m for m in MEASURES if "@" in m] if prior == "condensed" else MEASURES  # it needs cutoffs
    got = pdeval.estimate(run, full, measures, method=method, automatic=automatic, n_resamples=30, seed=3, **options)
    assert (got["unjudged"] == 0).all()
    np.testing.assert_allclose(got["estimate"], got["value"], atol=1e-12)
    assert (got["low"] == got["high"]).all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), prior=st.sampled_from(["pool", "run", "both", "condensed", "unique"]))
def test_property_complete_judgments_zero_width(seed, prior):
    run, qrels = collection(seed, n_runs=2, n_topics=2, depth=6, judged=10, docs=14)
    unique = {"pool_depth": 3} if prior == "unique" else {}
    measures = ["P@3", "nDCG@4", "AP@5", "RBP(p=0.7)@6"] if prior == "condensed" else ["P@3", "nDCG@4", "AP", "RBP(p=0.7)"]
    got = pdeval.estimate(run, completed(run, qrels), measures, prior=prior,
                          n_resamples=5, seed=seed, per="run", **unique)
    np.testing.assert_allclose(got["estimate"], got["value"], atol=1e-12)
    assert (got["low"] == got["high"]).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_certain_labels_give_the_engines_value_on_the_filled_qrels(seed):
    """Reference loop: automatic labels that agree with every human label make the calibrated
    prior certain (smoothing=0), so every draw is the automatic labelling; the estimate is then
    what the engine gives each run on the qrels filled with the automatic labels (the run cut at
    the measure's cutoff: deeper documents are not drawn for it)."""
    run, qrels = collection(seed + 10)
    rng = np.random.default_rng(seed)
    pairs = run[["query_id", "doc_id"]].drop_duplicates()
    unjudged = pairs.merge(qrels, how="left")
    unjudged = unjudged[unjudged["relevance"].isna()].assign(relevance=lambda f: rng.integers(0, 3, len(f)))
    automatic = pd.concat([qrels, unjudged.astype({"relevance": int})], ignore_index=True)
    got = pdeval.estimate(run, qrels, MEASURES, method="labels", automatic=automatic, smoothing=0, n_resamples=3,
                          seed=seed)
    assert (got["low"] == got["high"]).all()
    ranked = pdeval.rank_run(run).merge(unjudged, on=["query_id", "doc_id"])  # the unjudged rows, with ranks
    for name, part in run.groupby("run"):
        for measure in MEASURES:
            cutoff = pdeval.parse_measure(measure).cutoff
            drawn = ranked[(ranked["run"] == name) & (ranked["rank"] <= (cutoff or np.inf))]
            filled = pd.concat([qrels, drawn[["query_id", "doc_id", "relevance"]]], ignore_index=True)
            expected = pdeval.evaluate(part, filled, measure, depth=cutoff)
            mine = got[(got["run"] == name) & (got["measure"] == str(pdeval.parse_measure(measure)))]
            merged = mine.merge(expected, on=["run", "query_id"], suffixes=("", "_engine"))
            assert len(merged) == len(mine)
            np.testing.assert_allclose(merged["estimate"], merged["value_engine"], atol=1e-12, err_msg=measure)


def _calibration(seed: int, n_topics: int = 4):
    """Human grades and an automatic judge's labels of the same pairs, topic by topic."""
    rng = np.random.default_rng(seed)
    rows = [(f"t{t}", f"d{d}", int(rng.integers(0, 3)), int(rng.integers(0, 4)))
            for t in range(n_topics) for d in range(int(rng.integers(3, 9)))]
    pairs = pd.DataFrame(rows, columns=["query_id", "doc_id", "human", "auto"])
    return (pairs[["query_id", "doc_id"]].assign(relevance=pairs["human"]),
            pairs[["query_id", "doc_id"]].assign(relevance=pairs["auto"]), pairs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_resample_calibrates_on_its_resample_of_topics(seed):
    """Reference: for topic weights w, the table is the crosstab of the pairs of every topic
    repeated w_t times, plus the smoothing, normalised per automatic label; a label without a
    pair in the resample keeps its row of the table of all topics; a row whose automatic label
    is none of the judge's gets the pool prior."""
    human, auto, pairs = _calibration(seed)
    grades, labels = np.array([0, 1, 2]), range(4)
    rows = np.array([0, 1, 2, 3, 7])
    pool = np.tile([0.5, 0.3, 0.2], (len(rows), 1))
    effect = label_priors.calibrated_priors(human, auto, grades, rows, pool, smoothing=0.5)

    def table(frame):
        counts = pd.crosstab(frame["auto"], frame["human"]).reindex(index=labels, columns=grades, fill_value=0)
        return counts.sum(axis=1).to_numpy() > 0, ((counts + 0.5).T / (counts + 0.5).sum(axis=1)).T.to_numpy().copy()

    _, full = table(pairs)
    topics = list(dict.fromkeys(pairs["query_id"]))
    weights = np.random.default_rng(seed).integers(0, 3, size=(5, len(topics)))
    weights[weights.sum(axis=1) == 0, 1] = 2
    weights[0] = np.eye(len(topics), dtype=int)[0]  # one topic only: some labels unseen
    got = effect.rows(effect.tables(weights))
    for b, w in enumerate(weights):
        seen, drawn = table(pd.concat([pairs[pairs["query_id"] == t] for t, k in zip(topics, w) for _ in range(k)]))
        drawn[~seen] = full[~seen]
        expected = np.vstack([drawn[r] if r in labels else pool[i] for i, r in enumerate(rows)])
        np.testing.assert_allclose(got[b], expected, atol=1e-12)
    assert not np.allclose(got[0], got[1])


def test_one_calibration_topic_leaves_no_calibration_uncertainty():
    human, auto, _ = _calibration(3, n_topics=1)
    effect = label_priors.calibrated_priors(human, auto, np.array([0, 1, 2]), np.array([0, 1, 2, 3]), np.zeros((4, 3)))
    drawn = effect.draw(50, np.random.default_rng(0))
    np.testing.assert_allclose(drawn, np.broadcast_to(effect.rows(effect.table), drawn.shape), atol=1e-12)


def test_calibration_uncertainty_widens_the_interval():
    """A judge that agrees with the assessors on half the topics and inverts the grades on the
    others: every resample of the topics calibrates differently, so the interval of a run mean
    is wider than with the table of all topics for every draw (that table, given through a
    callable, is the fixed-table oracle), around about the same estimate."""
    run, qrels = collection(8, n_topics=20, judged=10)
    judged_half = qrels.iloc[::2]
    every = completed(run, qrels)  # the judge labels every retrieved document
    flip = every["query_id"].isin([f"t{t}" for t in range(10)])
    automatic = every.assign(relevance=np.where(flip, 2 - every["relevance"], every["relevance"]))
    grades = np.array([0, 1, 2])
    label_of = automatic.set_index(["query_id", "doc_id"])["relevance"]
    fixed = label_priors.calibrated_priors(judged_half, automatic, grades, grades, np.zeros((3, 3))).table

    def fixed_table(query_ids, doc_ids):
        return fixed[label_of.reindex(pd.MultiIndex.from_arrays([query_ids, doc_ids])).to_numpy()]

    options = {"n_resamples": 4000, "per": "run", "seed": 3}
    varying = pdeval.estimate(run, judged_half, "nDCG@10", method="labels", automatic=automatic, **options)
    one_table = pdeval.estimate(run, judged_half, "nDCG@10", method="labels", automatic=fixed_table, **options)
    width = lambda frame: (frame["high"] - frame["low"]).to_numpy()
    assert (width(varying) > 1.2 * width(one_table)).all()
    np.testing.assert_allclose(varying["estimate"], one_table["estimate"], atol=0.01)


def test_seeded_draws_repeat_and_differ_by_seed():
    run, qrels = collection(4)
    first = pdeval.estimate(run, qrels, ["nDCG@5", "AP"], n_resamples=100, seed=7)
    again = pdeval.estimate(run, qrels, ["nDCG@5", "AP"], n_resamples=100, seed=np.random.default_rng(7))
    other = pdeval.estimate(run, qrels, ["nDCG@5", "AP"], n_resamples=100, seed=8)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["estimate"], other["estimate"])


def test_run_level_is_the_mean_of_topics_with_a_joint_interval():
    run, qrels = collection(5, n_topics=6)
    topics = pdeval.estimate(run, qrels, ["P@5", "nDCG@5"], n_resamples=400, seed=1)
    runs = pdeval.estimate(run, qrels, ["P@5", "nDCG@5"], n_resamples=400, seed=1, per="run")
    means = topics.groupby(["run", "measure"])[["value", "estimate"]].mean().reset_index()
    merged = runs.merge(means, on=["run", "measure"], suffixes=("", "_topics"))
    np.testing.assert_allclose(merged["value"], merged["value_topics"], atol=1e-12)
    np.testing.assert_allclose(merged["estimate"], merged["estimate_topics"], atol=1e-12)
    averaged_width = topics.assign(w=topics["high"] - topics["low"]).groupby(["run", "measure"])["w"].mean()
    joint_width = runs.set_index(["run", "measure"]).eval("high - low")
    # independent topics: the mean's interval is narrower than the average per-topic interval
    assert (joint_width <= averaged_width.reindex(joint_width.index) + 1e-12).all()
    assert (runs["topics"] == 6).all()


def test_calibrated_labels_follow_the_automatic_judge():
    run, qrels = collection(6)
    judged_half = qrels.iloc[::2]
    optimistic = qrels.assign(relevance=2)  # the judge calls everything highly relevant
    got = pdeval.estimate(run, judged_half, ["P@5"], method="labels", automatic=qrels, n_resamples=300, seed=2)
    high = pdeval.estimate(run, judged_half, ["P@5"], method="labels", automatic=optimistic, n_resamples=300, seed=2)
    assert (got["estimate"] >= got["value"] - 1e-12).all()
    assert high["estimate"].mean() != pytest.approx(got["estimate"].mean())


def test_refusals_name_the_problem():
    run, qrels = collection(7)
    with pytest.raises(MeasureError, match="supports P, R, AP"):
        pdeval.estimate(run, qrels, "Bpref")
    with pytest.raises(MeasureError, match="primed"):
        pdeval.estimate(run, qrels, "AP'")
    with pytest.raises(PdevalError, match="n_resamples"):
        pdeval.estimate(run, qrels, "AP", n_resamples=10.5)
    with pytest.raises(PdevalError, match="confidence"):
        pdeval.estimate(run, qrels, "AP", confidence=1.0)
    with pytest.raises(PdevalError, match="automatic="):
        pdeval.estimate(run, qrels, "AP", method="labels")
    with pytest.raises(PdevalError, match="prior"):
        pdeval.estimate(run, qrels, "AP", prior="everything")
    with pytest.raises(PdevalError, match="qrels frame"):
        pdeval.estimate(run, qrels, "AP", method="labels", automatic="llm.qrels")
    with pytest.raises(SchemaError, match=r"qrels=.*several variants in level \(2 values\)"):
        pdeval.estimate(run, pdeval.reduce(qrels, [50, 30], seed=1), "AP")
    with pytest.raises(OverlapError, match="share no topic"):
        pdeval.estimate(run, qrels.assign(query_id="elsewhere" + qrels["query_id"]), "AP")
    with pytest.raises(PdevalError, match="per='run'"):
        pdeval.estimate(run, qrels, "AP", method="ppi", automatic=qrels)
    with pytest.raises(PdevalError, match="'level' is now called 'per'"):
        pdeval.estimate(run, qrels, "AP", level="run")


def test_each_refusal_names_what_is_wrong():
    """The options of another method are refused, not ignored; an empty run, empty qrels, a run
    of another collection and repeated automatic labels each get their own message."""
    run, qrels = collection(7)
    with pytest.raises(PdevalError, match=r"automatic= applies to method='labels' or method='ppi' only"):
        pdeval.estimate(run, qrels, "AP", automatic=qrels)  # the bootstrap would have ignored the labels
    with pytest.raises(PdevalError, match=r"smoothing= applies to method='labels' only"):
        pdeval.estimate(run, qrels, "AP", smoothing=2.0)
    with pytest.raises(PdevalError, match=r"strata= applies to method='ppi' only"):
        pdeval.estimate(run, qrels, "AP", strata={"1": "a"})
    with pytest.raises(PdevalError, match=r"depth=0 is not None or an integer >= 1"):
        pdeval.estimate(run, qrels, "AP", depth=0)
    with pytest.raises(SchemaError, match="the run frame has no rows"):
        pdeval.estimate(run.iloc[:0], qrels, "AP")
    with pytest.raises(SchemaError, match=r"the human qrels \(qrels=\) have no rows"):
        pdeval.estimate(run, qrels.iloc[:0], "AP", method="ppi", automatic=qrels, per="run")
    with pytest.raises(DuplicateError, match=r"automatic= repeats a label.*drop_duplicates") as raised:
        pdeval.estimate(run, qrels, "AP", method="labels", automatic=pd.concat([qrels, qrels.iloc[:1]]))
    assert "duplicates=" not in str(raised.value)
    labels = pd.concat([qrels.assign(label_set="a"), qrels.assign(label_set="b")])
    with pytest.raises(SchemaError, match=r"automatic=.*several variants in label_set"):
        pdeval.estimate(run, qrels, "AP", method="labels", automatic=labels)
    with pytest.raises(SchemaError, match="automatic labels share no"):
        pdeval.estimate(run, qrels, "AP", method="labels", automatic=qrels.assign(doc_id="x" + qrels["doc_id"]))


# ---- PPI -------------------------------------------------------------------------------------
ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (test extra) is the oracle of PPI")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("tuned", [True, False])
def test_ppi_equals_ppi_python(seed, tuned):
    rng = np.random.default_rng(seed)
    n, N = 15 + seed, 40 + 3 * seed
    truth = rng.random(n + N)
    predicted = 0.7 * truth + 0.2 * rng.random(n + N)
    Y, Yhat, Yu = truth[:n], predicted[:n], predicted[n:]
    est, low, high, lam = ppi_mean(Y, Yhat, Yu, confidence=0.9, tuned=tuned)
    kwargs = {} if tuned else {"lam": 1}
    expected = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu, **kwargs)
    expected_low, expected_high = ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=0.1, **kwargs)
    assert est[0] == pytest.approx(float(np.ravel(expected)[0]), abs=1e-9)
    assert low[0] == pytest.approx(float(np.ravel(expected_low)[0]), abs=1e-9)
    assert high[0] == pytest.approx(float(np.ravel(expected_high)[0]), abs=1e-9)


def test_estimate_ppi_equals_ppi_python_on_run_scores():
    run, qrels = collection(8, n_runs=3, n_topics=12, judged=25)
    automatic = qrels.assign(relevance=np.where(np.random.default_rng(0).random(len(qrels)) < 0.8,
                                                qrels["relevance"], 0))
    human = qrels[qrels["query_id"].isin([f"t{i}" for i in range(5)])]
    got = pdeval.estimate(run, human, ["P@5", "AP"], method="ppi", automatic=automatic, per="run")
    gold = pdeval.evaluate(run, human, ["P@5", "AP"], complete=True)
    auto = pdeval.evaluate(run, automatic, ["P@5", "AP"], complete=True)
    for row in got.itertuples(index=False):
        g = gold[(gold["run"] == row.run) & (gold["measure"] == row.measure)].set_index("query_id")["value"]
        a = auto[(auto["run"] == row.run) & (auto["measure"] == row.measure)].set_index("query_id")["value"]
        labelled = sorted(g.index)
        unlabelled = sorted(set(a.index) - set(labelled))
        Y, Yhat, Yu = g[labelled].to_numpy(), a[labelled].to_numpy(), a[unlabelled].to_numpy()
        assert row.estimate == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu))[0]), abs=1e-9)
        low, high = ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=0.05)
        assert (row.low, row.high) == pytest.approx((float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9)
        assert (row.labelled, row.unlabelled) == (5, 7)
    differences = pdeval.estimate(run, human, ["P@5"], method="ppi", automatic=automatic, per="run", baseline="r0")
    assert sorted(differences["run"]) == ["r1", "r2"] and (differences["baseline"] == "r0").all()


@pytest.mark.parametrize("strata", [None, "halves"])
def test_ppi_with_every_topic_judged_is_exact_with_zero_width(strata):
    """Human labels on every topic: no topic is left to infer, so PPI returns the human mean
    with an interval of width zero, whatever the automatic labels say."""
    run, qrels = collection(8, n_runs=3, n_topics=6, judged=25)
    automatic = qrels.assign(relevance=1 - qrels["relevance"].clip(0, 1))  # a judge that is always wrong
    by = None if strata is None else {f"t{i}": i % 2 for i in range(6)}
    got = pdeval.estimate(run, qrels, ["P@5", "AP"], method="ppi", automatic=automatic, per="run", strata=by)
    truth = pdeval.evaluate(run, qrels, ["P@5", "AP"], complete=True).groupby(["run", "measure"])["value"].mean()
    expected = truth.loc[list(zip(got["run"], got["measure"]))].to_numpy()
    np.testing.assert_allclose(got["estimate"], expected, rtol=0, atol=1e-12)
    assert (got["low"] == got["estimate"]).all() and (got["high"] == got["estimate"]).all()
    assert (got["unlabelled"] == 0).all() and (got["lam"] == 0).all()


def test_ppi_intervals_cover_at_their_level():
    """2,000 simulated experiments with known truth: the 95 % intervals cover 95 % ± 2 %."""
    rng = np.random.default_rng(2026)
    reps, n, N, mean = 2000, 40, 400, 0.4
    truth = rng.beta(2, 3, size=(n + N, reps))  # E = 0.4
    predicted = np.clip(truth + rng.normal(0.1, 0.15, size=truth.shape), 0, 1)  # biased judge
    est, low, high, _ = ppi_mean(truth[:n], predicted[:n], predicted[n:], confidence=0.95)
    coverage = np.mean((low <= mean) & (mean <= high))
    assert abs(coverage - 0.95) <= 0.02, coverage
    naive = predicted.mean(axis=0)  # the judge alone is biased: its mean misses the truth
    assert abs(naive.mean() - mean) > 0.05


def test_cli_estimate_columns_are_estimates_values(tmp_path):
    """``pdeval eval --estimate bootstrap``: per-topic and ``all`` lines carry the estimate,
    low and high of pdeval.estimate (per topic, and per run with the joint interval)."""
    import subprocess
    import sys

    run, qrels = collection(11)
    run_file, qrels_file = tmp_path / "runs", tmp_path / "qrels.txt"
    run_file.mkdir()
    for name, part in run.groupby("run"):
        pdeval.write_run(part, run_file / name)
    pdeval.write_qrels(qrels, qrels_file)
    done = subprocess.run([sys.executable, "-m", "pdeval", "eval", str(qrels_file), str(run_file), "-m", "P.5", "-q",
                           "--estimate", "bootstrap", "--resamples", "200", "--seed", "3", "--format", "csv",
                           "--names", "pdeval"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    from io import StringIO

    table = pd.read_csv(StringIO(done.stdout), dtype={"query_id": str})
    topics = pdeval.estimate(run, qrels, "P@5", n_resamples=200, seed=3)
    runs = pdeval.estimate(run, qrels, "P@5", n_resamples=200, seed=3, per="run").assign(query_id="all")
    expected = pd.concat([topics, runs]).set_index(["run", "query_id"])
    got = table.set_index(["run", "query_id"])
    for column in ("estimate", "low", "high"):
        np.testing.assert_allclose(got[column], expected[column].reindex(got.index), atol=1e-12)
    refused = subprocess.run([sys.executable, "-m", "pdeval", "eval", str(qrels_file), str(run_file), "-m", "bpref",
                              "--estimate", "bootstrap"], capture_output=True, text=True)
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
    assert "supports P, R, AP" in refused.stderr


def test_estimate_intervals_figure_and_refusal():
    from pdeval.report import figures

    run, qrels = collection(12)
    means = pdeval.estimate(run, qrels, ["P@5", "AP"], n_resamples=50, seed=1, per="run")
    fig = figures.estimate_intervals(means, measures="AP")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(
        means[means["measure"] == "AP"].sort_values("estimate", ascending=False)["run"])
    with pytest.raises(SchemaError, match="per='run'"):
        figures.estimate_intervals(pdeval.estimate(run, qrels, "AP", n_resamples=5, seed=1), measures="AP")


def test_a_top_grade_no_run_retrieves_keeps_its_place_in_the_priors():
    """Graded qrels whose top grade (3) no run retrieves: the run prior has a column for it
    (it broke the default prior with a broadcasting error)."""
    run = pd.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "1", "2", "2"] * 2,
                        "doc_id": ["d1", "d2", "d3", "d4", "d2", "d5", "d4", "d6"], "score": [4.0, 3, 2, 1] * 2})
    qrels = pd.DataFrame({"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["d1", "zz", "d9", "d3", "d4"],
                          "relevance": [1, 3, 0, 2, 0]})
    got = pdeval.estimate(run, qrels, "nDCG@3", n_resamples=50, seed=1, progress=False)
    assert len(got) == 4 and got["estimate"].between(got["low"], got["high"]).all()
    judged = got.loc[got["unjudged"] == 0]
    assert (judged["estimate"] == judged["value"]).all()


def test_a_topic_with_only_unjudged_rows_is_left_out_with_a_warning():
    run = pd.DataFrame({"run": "a", "query_id": ["1", "1", "3"], "doc_id": ["d1", "d2", "d7"], "score": [2.0, 1, 1]})
    qrels = pd.DataFrame({"query_id": ["1", "1", "3"], "doc_id": ["d1", "d2", "d7"], "relevance": [1, 0, -1]})
    assert set(pdeval.evaluate(run, qrels, "P@2")["query_id"]) == {"1", "3"}
    with pytest.warns(OverlapWarning, match=r"1 topic\(s\) of the run have qrels rows but no judged document .*'3'"):
        got = pdeval.estimate(run, qrels, "P@2", n_resamples=10, progress=False)
    assert set(got["query_id"]) == {"1"}


CANONICALISING = ("canonicalize", "as_run", "as_qrels")


def canonical_entries(call) -> dict:
    """How often ``call()`` enters each canonicalising function of pdeval.frames.canonical, from
    any pdeval module (those that imported the function by name included)."""
    import sys
    from unittest import mock

    import pdeval.analysis.estimates.core  # noqa: F401  (loaded before the patching: public names load lazily)
    from pdeval.frames import canonical

    counts = {name: 0 for name in CANONICALISING}
    patches = []
    for name in CANONICALISING:
        original = getattr(canonical, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)

        for module in [m for key, m in sys.modules.items() if key.startswith("pdeval") and m is not None]:
            if getattr(module, name, None) is original:
                patches.append(mock.patch.object(module, name, counted))
    for patch in patches:
        patch.start()
    try:
        call()
    finally:
        for patch in patches:
            patch.stop()
    return counts


@pytest.mark.parametrize("options", [{}, {"prior": "unique", "pool_depth": 5}, {"method": "labels"}])
def test_estimate_canonicalises_each_frame_once(options):
    run, qrels = collection(3)
    frames = 2
    if options.get("method") == "labels":
        options = {**options, "automatic": qrels.assign(relevance=1)}
        frames = 3
    counts = canonical_entries(lambda: pdeval.estimate(run, qrels, ["AP", "nDCG@5"], n_resamples=5, seed=0,
                                                       progress=False, **options))
    # one as_run (the run) and one as_qrels per qrels frame, each canonicalizing its frame once
    # (before: 4 canonicalize / 1 as_run / 2 as_qrels; unique 5/1/3; labels 7/1/5)
    assert counts == {"canonicalize": frames, "as_run": 1, "as_qrels": frames - 1}, counts


@pytest.mark.parametrize("ties", ["trec", "expected", "optimistic", "pessimistic"])
def test_estimate_with_complete_judgments_is_evaluate_under_the_same_ties(ties):
    run, qrels = collection(4)
    run["score"] = np.floor(run["score"] / 3.0)  # runs of tied scores, some across the cutoffs
    full = completed(run, qrels)
    got = pdeval.estimate(run, full, MEASURES, n_resamples=5, seed=0, ties=ties, progress=False)
    expected = pdeval.evaluate(run, full, MEASURES, ties=ties)
    merged = got.merge(expected, on=["run", "query_id", "measure"], suffixes=("", "_engine"))
    assert len(merged) == len(got) == len(expected)
    for column in ("value", "estimate", "low", "high"):
        np.testing.assert_allclose(merged[column], merged["value_engine"], rtol=0, atol=1e-12, err_msg=column)


def test_estimate_ties_reorder_each_draw():
    run, qrels = collection(5)
    run["score"] = np.floor(run["score"] / 4.0)
    low = pdeval.estimate(run, qrels, ["P@5", "nDCG@5"], n_resamples=50, seed=1, ties="pessimistic", progress=False)
    high = pdeval.estimate(run, qrels, ["P@5", "nDCG@5"], n_resamples=50, seed=1, ties="optimistic", progress=False)
    mid = pdeval.estimate(run, qrels, ["P@5", "nDCG@5"], n_resamples=50, seed=1, ties="expected", progress=False)
    assert (low["estimate"] <= mid["estimate"] + 1e-12).all() and (mid["estimate"] <= high["estimate"] + 1e-12).all()
    assert (low["estimate"] < high["estimate"]).any()


@pytest.mark.parametrize("ties", ["trec", "expected", "optimistic", "pessimistic"])
def test_estimate_ties_keep_whole_runs_across_the_cut(ties):
    run = pd.DataFrame({"run": "r", "query_id": "1", "doc_id": list("abcd"), "score": [2.0, 1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": list("abcd"), "relevance": [0, 1, 0, 2]})
    measures = ["P@2", "R@2", "AP@2", "RR@2", "nDCG@2", "RBP@2"]
    got = pdeval.estimate(run, qrels, measures, n_resamples=3, ties=ties, progress=False).set_index("measure")
    expected = pdeval.evaluate(run, qrels, measures, ties=ties).set_index("measure")["value"]
    np.testing.assert_allclose(got.loc[expected.index, "estimate"], expected, rtol=0, atol=1e-12)
    if ties != "trec":  # a depth cut in trec_eval's order would fix which tied documents are kept, as in evaluate
        with pytest.raises(PdevalError, match="cannot be combined with"):
            pdeval.estimate(run, qrels, measures, n_resamples=3, ties=ties, depth=2, progress=False)
