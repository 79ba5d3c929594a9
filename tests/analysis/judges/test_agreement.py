"""Tests for pdeval.analysis.judges.agreement: provenance, merging, agreement statistics, leaderboards, hole filling.

Oracles: ``sklearn.metrics.cohen_kappa_score`` (Cohen's kappa), the ``krippendorff`` package
(Krippendorff's alpha), ``scipy.stats.kendalltau`` (tau_b of leaderboards), ``pdeval.judged``
(Judged@k, itself checked against ir_measures' definition), hand-computed worked examples and
Hypothesis properties.
"""

from __future__ import annotations

import glob
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from locations import REPO

krippendorff = pytest.importorskip("krippendorff", reason="the krippendorff package (test extra) is the alpha oracle")
sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn (test extra) is the kappa oracle")

EXTRACT = REPO / "data" / "llmjudge-dl23" / "labels.tsv.gz"
SHARED = REPO.parent / "shared" / "data" / "llmjudge-dl23"
TOL = 1e-12


# ---------------------------------------------------------------------------------------------
# oracles


def sklearn_kappa(a, b, weights=None) -> float:
    """sklearn's kappa on the consecutive scale min..max (so label positions are grade values)."""
    lo, hi = int(min(np.min(a), np.min(b))), int(max(np.max(a), np.max(b)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sklearn_metrics.cohen_kappa_score(a, b, weights=weights, labels=list(range(lo, hi + 1))))


def kripp(data: np.ndarray, level: str) -> float:
    return float(krippendorff.alpha(reliability_data=np.asarray(data, dtype=float), level_of_measurement=level))


def check_against_oracles(reference: pd.DataFrame, sets: dict[str, pd.DataFrame], result) -> float:
    """Largest difference between ``result`` and sklearn / krippendorff over every set and statistic."""
    table = result.wide().set_index("label_set")
    worst = 0.0
    for name, labels in sets.items():
        both = reference.merge(labels, on=["query_id", "doc_id"], suffixes=("_r", "_s"))
        both = both[(both.relevance_r >= 0) & (both.relevance_s >= 0)]
        a, b = both.relevance_r.to_numpy(), both.relevance_s.to_numpy()
        row = table.loc[name]
        for weights, column in [(None, "kappa"), ("linear", "kappa_linear"), ("quadratic", "kappa_quadratic")]:
            expected = sklearn_kappa(a, b, weights)
            if np.isnan(expected):
                assert np.isnan(row[column]), (name, column)
            else:
                worst = max(worst, abs(expected - row[column]))
        if len(np.unique(np.concatenate([a, b]))) > 1:
            for level in ("nominal", "ordinal", "interval"):
                worst = max(worst, abs(kripp(np.vstack([a, b]), level) - row[f"alpha_{level}"]))
        assert row["exact"] == pytest.approx(np.mean(a == b), abs=TOL)
    return worst


def read_extract() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    wide = pd.read_csv(EXTRACT, sep="\t", dtype={"query_id": str, "doc_id": str})
    human = wide[["query_id", "doc_id", "human"]].rename(columns={"human": "relevance"})
    sets = {
        name: wide[["query_id", "doc_id", name]].rename(columns={name: "relevance"})
        for name in wide.columns[3:]
    }
    return human, sets


# ---------------------------------------------------------------------------------------------
# worked examples


def test_worked_example_kappa_alpha_confusion():
    # reference 0 0 1 1, other 0 1 1 1: O = [[1, 1], [0, 2]], n = 4
    ref = pd.DataFrame({"query_id": "q", "doc_id": list("abcd"), "relevance": [0, 0, 1, 1]})
    other = ref.assign(relevance=[0, 1, 1, 1])
    result = pdeval.agreement(ref, {"llm": other}, threshold=1, overall=False)
    stats = result.wide().set_index("label_set").loc["llm"]
    # p_o = 3/4, p_e = (2*1 + 2*3)/16 = 1/2, kappa = (3/4 - 1/2) / (1/2) = 1/2 (any weights: 2 grades)
    assert stats["kappa"] == pytest.approx(0.5, abs=TOL)
    assert stats["kappa_linear"] == pytest.approx(0.5, abs=TOL)
    assert stats["kappa_quadratic"] == pytest.approx(0.5, abs=TOL)
    # coincidences o = [[2, 1], [1, 4]], n_c = (3, 5), n = 8: alpha = 1 - 7 * 2 / (2 * 3 * 5) = 8/15
    for level in ("nominal", "ordinal", "interval"):
        assert stats[f"alpha_{level}"] == pytest.approx(8 / 15, abs=TOL)
    assert stats["exact"] == 0.75 and stats["binary"] == 0.75
    confusion = result.confusion.set_index(["reference", "label"])["count"]
    assert confusion.to_dict() == {(0, 0): 1, (0, 1): 1, (1, 0): 0, (1, 1): 2}


def test_weighted_kappa_uses_grade_values_three_grades():
    # reference 0 1 2 2, other 0 2 2 0: hand-computed weighted kappas
    ref = pd.DataFrame({"query_id": "q", "doc_id": list("abcd"), "relevance": [0, 1, 2, 2]})
    other = ref.assign(relevance=[0, 2, 2, 0])
    stats = pdeval.agreement(ref, other, overall=False).wide().iloc[0]
    # O = [[1,0,0],[0,0,1],[1,0,1]]; rows (1,1,2), cols (2,0,2); E = r c^T / 4
    O = np.array([[1, 0, 0], [0, 0, 1], [1, 0, 1]], float)
    E = np.outer(O.sum(1), O.sum(0)) / 4
    d = np.abs(np.subtract.outer(np.arange(3), np.arange(3))).astype(float)
    assert stats["kappa_linear"] == pytest.approx(1 - (O * d).sum() / (E * d).sum(), abs=TOL)
    assert stats["kappa_quadratic"] == pytest.approx(1 - (O * d**2).sum() / (E * d**2).sum(), abs=TOL)
    assert stats["label_set"] == "labels"


def test_pairs_in_one_set_only_are_counted_and_left_out():
    ref = pd.DataFrame({"query_id": "q", "doc_id": list("abcde"), "relevance": [0, 1, 2, 1, -1]})
    other = pd.DataFrame({"query_id": "q", "doc_id": list("abcxy"), "relevance": [0, 1, 1, 2, 0]})
    with pytest.warns(PdevalWarning, match="1 pair\\(s\\) only in the reference, 2 only in the set"):
        result = pdeval.agreement(ref, {"s": other})
    cov = result.coverage.iloc[0]
    # the -1 row of the reference is not a label
    assert (cov.n_reference, cov.n_labels, cov.n_common, cov.only_reference, cov.only_labels) == (4, 5, 3, 1, 2)
    assert result.statistics.query("label_set == 's'")["n_pairs"].unique().tolist() == [3]
    with pytest.raises(SchemaError, match="only the pairs both label"):
        pdeval.agreement(ref, {"s": other}, missing="error")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdeval.agreement(ref, {"s": other}, missing="ignore")


def test_per_topic_rows_and_overall():
    rng = np.random.default_rng(3)
    ref = pd.DataFrame({"query_id": np.repeat(["q1", "q2"], 30), "doc_id": [f"d{i}" for i in range(60)],
                        "relevance": rng.integers(0, 4, 60)})
    sets = {f"s{i}": ref.assign(relevance=np.clip(ref.relevance + rng.integers(-1, 2, 60), 0, 3)) for i in range(3)}
    result = pdeval.agreement(ref, sets, per_topic=True)
    table = result.wide()
    assert set(table.query_id) == {"q1", "q2", "all"}
    for name, labels in sets.items():
        for topic in ("q1", "q2"):
            part = ref.query_id == topic
            row = table[(table.label_set == name) & (table.query_id == topic)].iloc[0]
            expected = sklearn_kappa(ref.relevance[part], labels.relevance[part], "quadratic")
            assert row["kappa_quadratic"] == pytest.approx(expected, abs=TOL)
    # (all): Krippendorff's alpha of the reference and every set as coders of the same units
    data = np.vstack([ref.relevance, *[s.relevance for s in sets.values()]])
    overall = result.statistics.query("label_set == '(all)' and query_id == 'all'").set_index("statistic")["value"]
    for level in ("nominal", "ordinal", "interval"):
        assert overall[f"alpha_{level}"] == pytest.approx(kripp(data, level), abs=TOL)
    q1 = result.statistics.query("label_set == '(all)' and query_id == 'q1'").set_index("statistic")["value"]
    assert q1["alpha_ordinal"] == pytest.approx(kripp(data[:, :30], "ordinal"), abs=TOL)


def test_binary_agreement_at_threshold():
    ref = pd.DataFrame({"query_id": "q", "doc_id": list("abcdef"), "relevance": [0, 1, 2, 3, 3, 1]})
    other = ref.assign(relevance=[1, 0, 3, 2, 1, 2])
    for threshold in (1, 2, 3):
        stats = pdeval.agreement(ref, other, threshold=threshold, overall=False).wide().iloc[0]
        a, b = ref.relevance >= threshold, other.relevance >= threshold
        assert stats["binary"] == pytest.approx(np.mean(a == b), abs=TOL)
        expected = sklearn_kappa(a.astype(int), b.astype(int))
        assert stats["binary_kappa"] == pytest.approx(expected, abs=TOL, nan_ok=True)


# ---------------------------------------------------------------------------------------------
# random data against the oracles


@st.composite
def label_pair(draw):
    n = draw(st.integers(2, 40))
    grades = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    others = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return grades, others, keep


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(label_pair(), label_pair())
def test_random_label_sets_match_sklearn_and_krippendorff(first, second):
    rows = []
    reference = None
    sets = {}
    for name, (grades, others, keep) in (("a", first), ("b", second)):
        n = len(grades)
        docs = [f"{name}{i}" for i in range(n)]
        part = pd.DataFrame({"query_id": name, "doc_id": docs, "relevance": grades})
        reference = part if reference is None else pd.concat([reference, part], ignore_index=True)
        rows.append(pd.DataFrame({"query_id": name, "doc_id": docs, "relevance": others})[keep])
    combined = pd.concat(rows, ignore_index=True)
    sets = {"one": combined, "two": combined.assign(relevance=(combined.relevance + 1) % 5)}
    if not any(len(s) for s in sets.values()):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        result = pdeval.agreement(reference, sets, overall=False)
    nonempty = {k: v for k, v in sets.items() if len(v)}
    assert check_against_oracles(reference, nonempty, result) <= TOL


# ---------------------------------------------------------------------------------------------
# the LLMJudge label sets (in the repository, and the original files when the shared data is there)


def test_llmjudge_extract_matches_oracles_to_1e12():
    human, sets = read_extract()
    assert len(human) == 4423 and len(sets) == 33
    result = pdeval.agreement(human, sets, threshold=2)
    assert check_against_oracles(human, sets, result) <= TOL
    assert (result.coverage.n_common == 4423).all()


@pytest.mark.skipif(not SHARED.is_dir(), reason="the LLMJudge files (../shared/data/llmjudge-dl23) are absent")
def test_llmjudge_original_files_match_oracles_to_1e12():
    human = pdeval.read_qrels(str(SHARED / "llmjudge_test_qrel_idx.txt"))
    files = sorted(glob.glob(str(SHARED / "llm_labels" / "*.txt")))
    sets = {os.path.basename(p)[:-4]: pdeval.read_qrels(p) for p in files}
    assert len(sets) == 33
    result = pdeval.agreement(human, pdeval.label_sets(sets), threshold=2)
    assert check_against_oracles(human, sets, result) <= TOL
    # the multi-coder alpha over all 34 label sets
    wide = human.rename(columns={"relevance": "human"})
    for name, frame in sets.items():
        wide = wide.merge(frame.rename(columns={"relevance": name}), on=["query_id", "doc_id"])
    data = wide.drop(columns=["query_id", "doc_id"]).to_numpy(float).T
    overall = result.statistics.query("label_set == '(all)'").set_index("statistic")["value"]
    for level in ("nominal", "ordinal", "interval"):
        assert overall[f"alpha_{level}"] == pytest.approx(kripp(data, level), abs=TOL)


# ---------------------------------------------------------------------------------------------
# label sets and grade mappings


def test_label_sets_and_map_grades():
    a = pd.DataFrame({"query_id": "q", "doc_id": ["x", "y"], "relevance": [4, 0]})
    b = pd.DataFrame({"query_id": "q", "doc_id": ["x", "y"], "relevance": [3, 1]})
    long = pdeval.label_sets({"rag": a, "dl": b})
    assert long.label_set.tolist() == ["rag", "rag", "dl", "dl"]
    folded = pdeval.map_grades(long, {"rag": {0: 0, 1: 1, 2: 2, 3: 3, 4: 3}})
    assert folded.relevance.tolist() == [3, 0, 3, 1]
    assert pdeval.map_grades(a, {0: 0, 1: 0, 2: 1, 3: 1, 4: 1}).relevance.tolist() == [1, 0]
    with pytest.raises(SchemaError, match="no entry for grade\\(s\\) \\[4\\]"):
        pdeval.map_grades(a, {0: 0, 1: 1})
    with pytest.raises(SchemaError, match="label set\\(s\\) \\['nope'\\]"):
        pdeval.map_grades(long, {"nope": {0: 0}})
    with pytest.raises(SchemaError, match="repeated"):
        pdeval.label_sets(pd.concat([a.assign(label_set="s"), a.assign(label_set="s")]))
    # agreement after folding a 0-4 set onto 0-3 equals agreement on the folded frame
    r1 = pdeval.agreement(b, {"rag": a}, grade_map={0: 0, 1: 1, 2: 2, 3: 3, 4: 3}, overall=False)
    r2 = pdeval.agreement(b, {"rag": a.assign(relevance=[3, 0])}, overall=False)
    pd.testing.assert_frame_equal(r1.statistics, r2.statistics)


# ---------------------------------------------------------------------------------------------
# merging: never loses or duplicates a label


@st.composite
def two_label_sets(draw):
    pairs = [(q, d) for q in ("q1", "q2", "q3") for d in ("a", "b", "c", "d")]
    grade = st.one_of(st.none(), st.integers(-1, 3))
    human = [(q, d, g) for (q, d), g in zip(pairs, draw(st.lists(grade, min_size=12, max_size=12))) if g is not None]
    auto = [(q, d, g) for (q, d), g in zip(pairs, draw(st.lists(grade, min_size=12, max_size=12))) if g is not None]
    columns = ["query_id", "doc_id", "relevance"]
    return pd.DataFrame(human, columns=columns), pd.DataFrame(auto, columns=columns)


@settings(max_examples=100, deadline=None)
@given(two_label_sets(), st.sampled_from(["fill", "prefer", "replace"]))
def test_merge_never_loses_or_duplicates_a_label(sets, policy):
    human, auto = sets
    merged = pdeval.merge_qrels(human, auto, policy, automatic_source="llm")
    counts = merged.attrs["merge_counts"]
    keys = list(zip(merged.query_id, merged.doc_id))
    assert len(keys) == len(set(keys)), "a pair appears twice"
    h = {(q, d): g for q, d, g in human.itertuples(index=False)}
    a = {(q, d): g for q, d, g in auto.itertuples(index=False)}
    auto_topics = {q for (q, _), g in a.items() if g >= 0}
    got = {(q, d): (g, s) for q, d, g, s in merged.itertuples(index=False)}
    for pair in set(h) | set(a):
        hg, ag = h.get(pair), a.get(pair)
        h_label = hg is not None and hg >= 0
        a_label = ag is not None and ag >= 0
        if policy == "fill" or (policy == "replace" and pair[0] not in auto_topics):
            expected = (hg, "human") if h_label else (ag, "llm") if a_label else None
        elif policy == "prefer":
            expected = (ag, "llm") if a_label else (hg, "human") if h_label else None
        else:  # replace, on a topic the automatic set labels: automatic rows only
            expected = (ag, "llm") if ag is not None else "absent"
        if expected is None:  # a hole nobody labels stays a hole
            assert got[pair][0] < 0
        elif expected == "absent":
            assert pair not in got
        else:
            assert got[pair] == expected, (pair, policy)
    # every label of the inputs is in the output, or counted as ignored / dropped
    labels_in = int((human.relevance >= 0).sum() + (auto.relevance >= 0).sum())
    labels_out = int((merged.relevance >= 0).sum())
    assert labels_in == labels_out + counts["ignored"] + counts["dropped"]
    assert counts["human"] + counts["filled"] + counts["overridden"] + counts["unjudged"] == counts["total"] == len(merged)


def test_merge_qrels_returns_one_frame_and_says_where_the_counts_went():
    human = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b"], "relevance": [1, 0]})
    with pytest.raises(PdevalError, match=r"merge_qrels\(\): the parameter 'return_counts' is gone: "
                                          r"the counts are in merged.attrs\['merge_counts'\]"):
        pdeval.merge_qrels(human, human, return_counts=True)


def test_merge_counts_worked_example():
    human = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 0, -1]})
    auto = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c", "d"], "relevance": [2, 1, 3, 0]})
    fill = pdeval.merge_qrels(human, auto, "fill").attrs["merge_counts"]
    assert {k: fill[k] for k in ("human", "filled", "overridden", "ignored", "total")} == \
        {"human": 2, "filled": 2, "overridden": 0, "ignored": 2, "total": 4}
    merged = pdeval.merge_qrels(human, auto, "prefer")
    prefer = merged.attrs["merge_counts"]
    assert (prefer["overridden"], prefer["changed"], prefer["dropped"]) == (2, 1, 2)
    assert set(merged.source) == {"automatic"}
    with pytest.raises(PdevalError, match="policy"):
        pdeval.merge_qrels(human, auto, "union")


def test_source_is_not_a_variant_key():
    run = pd.DataFrame({"query_id": "q", "doc_id": list("abcd"), "score": [4.0, 3, 2, 1]})
    human = pd.DataFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [1, 0]})
    auto = pd.DataFrame({"query_id": "q", "doc_id": ["b", "d"], "relevance": [1, 1]})
    merged = pdeval.merge_qrels(human, auto)
    assert "source" in merged.columns
    with_source = pdeval.evaluate(run, merged, ["AP", "P@2"])
    without = pdeval.evaluate(run, merged.drop(columns="source"), ["AP", "P@2"])
    pd.testing.assert_frame_equal(with_source, without)
    assert "source" not in with_source.columns


def test_measures_per_source():
    run = pd.DataFrame({"query_id": "q", "doc_id": list("abcd"), "score": [4.0, 3, 2, 1]})
    human = pd.DataFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [1, 0]})
    auto = pd.DataFrame({"query_id": "q", "doc_id": ["b", "d"], "relevance": [1, 1]})
    merged = pdeval.merge_qrels(human, auto, automatic_source="llm")
    per_source = pdeval.leaderboards(run, pdeval.label_sets(merged, by="source"), ["P@2", "Judged@4"])
    values = per_source.set_index(["label_set", "measure"])["value"]
    # human labels alone: a relevant, c not; llm labels alone: b and d relevant
    assert values[("human", "P@2")] == 0.5 and values[("llm", "P@2")] == 0.5
    assert values[("human", "Judged@4")] == 0.5 and values[("llm", "Judged@4")] == 0.5
    with pytest.raises(SchemaError, match="by='source'"):
        pdeval.label_sets(human, by="source")


# ---------------------------------------------------------------------------------------------
# judged by source


def test_judged_by_source_adds_up_to_judged():
    rng = np.random.default_rng(7)
    runs = pd.DataFrame({
        "run": np.repeat(["r1", "r2"], 40),
        "query_id": np.tile(np.repeat(["q1", "q2"], 20), 2),
        "doc_id": [f"d{i}" for i in rng.integers(0, 30, 80)],
        "score": rng.random(80),
    }).drop_duplicates(["run", "query_id", "doc_id"])
    docs = [f"d{i}" for i in range(30)]
    human = pd.DataFrame({"query_id": "q1", "doc_id": docs[:12], "relevance": rng.integers(0, 3, 12)})
    auto = pd.DataFrame({"query_id": np.repeat(["q1", "q2"], 30), "doc_id": docs * 2, "relevance": rng.integers(-1, 3, 60)})
    merged = pdeval.merge_qrels(human, auto, automatic_source="gpt4")
    split = pdeval.judged_by_source(runs, merged, k=[5, 10])
    total = split.groupby(["run", "query_id", "k"])["judged"].sum().rename("total").reset_index()
    judged = pdeval.judged(runs, merged.drop(columns="source"), k=[5, 10])
    both = judged.merge(total, on=["run", "query_id", "k"])
    assert len(both) == len(judged)
    np.testing.assert_allclose(both.total, both.judged, atol=TOL)
    assert set(split.source) == {"human", "gpt4"}
    # q2 has no human labels: the human share there is 0
    assert (split.query("query_id == 'q2' and source == 'human'").judged == 0).all()


def test_judged_by_source_worked_example():
    run = pd.DataFrame({"query_id": "q", "doc_id": list("abcde"), "score": [5.0, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": list("abd"), "relevance": [1, 0, 2],
                          "source": ["human", "llm", "llm"]})
    split = pdeval.judged_by_source(run, qrels, k=[2, 4]).set_index(["k", "source"])["judged"]
    assert split[(2, "human")] == 0.5 and split[(2, "llm")] == 0.5
    assert split[(4, "human")] == 0.25 and split[(4, "llm")] == 0.5
    assert run.ir.judged_by_source(qrels, k=2).judged.sum() == 1.0


# ---------------------------------------------------------------------------------------------
# leaderboards


def _toy_runs(n_runs=6, n_topics=4, depth=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_runs):
        for t in range(n_topics):
            docs = rng.choice(20, depth, replace=False)
            rows += [(f"run{r}", f"q{t}", f"d{d}", float(depth - i)) for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])


def _toy_labels(seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"query_id": np.repeat([f"q{t}" for t in range(4)], 20),
                         "doc_id": [f"d{d}" for d in range(20)] * 4, "relevance": rng.integers(0, 4, 80)})


def test_leaderboards_equal_separate_evaluations_and_rankings_match_scipy():
    from scipy.stats import kendalltau

    runs = _toy_runs()
    sets = {"human": _toy_labels(1), "llm1": _toy_labels(2), "llm2": _toy_labels(3)}
    result = pdeval.leaderboards(runs, sets, ["nDCG@5", "P@5"])
    for name, labels in sets.items():
        alone = pdeval.evaluate(runs, labels, ["nDCG@5", "P@5"])
        part = result[result.label_set == name].drop(columns="label_set").reset_index(drop=True)
        pd.testing.assert_frame_equal(part, alone)
    comparison = pdeval.compare_leaderboards(result, "human", k=[1, 3])
    means = result.groupby(["label_set", "measure", "run"])["value"].mean()
    for name in ("llm1", "llm2"):
        for measure in ("nDCG@5", "P@5"):
            x, y = means[(name, measure)], means[("human", measure)]
            row = comparison.query("label_set == @name and measure == @measure").set_index("method")["value"]
            assert row["tau_b"] == pytest.approx(kendalltau(x, y).statistic, abs=TOL)
            assert row["tau_ap"] == pytest.approx(pdeval.analysis.rankings.correlation.tau_ap(x.to_numpy(), y.to_numpy()), abs=TOL)
            for k in (1, 3):
                top = lambda s: set(sorted(s.index, key=lambda run: (-s[run], run))[:k])  # noqa: E731
                assert row[f"top@{k}"] == len(top(x) & top(y)) / k
    changes = pdeval.leaderboard_changes(result, "human")
    assert set(changes.columns) >= {"run", "rank", "rank_reference", "change"}
    assert (changes.change == changes.rank_reference - changes["rank"]).all()
    assert (changes.groupby(["measure", "label_set"]).change.sum() == 0).all()
    pd.testing.assert_frame_equal(result.ir.compare_leaderboards("human", k=[1, 3]), comparison)


def test_leaderboards_grade_map_folds_one_scale_onto_another():
    runs = _toy_runs()
    dl = _toy_labels(1)
    rag = _toy_labels(2).assign(relevance=lambda f: f.relevance + (f.relevance == 3))  # grades 0, 1, 2, 4
    fold = {0: 0, 1: 1, 2: 2, 3: 3, 4: 3}
    mapped = pdeval.leaderboards(runs, {"dl": dl, "rag": rag}, ["nDCG@5"], grade_map={"rag": fold})
    by_hand = pdeval.evaluate(runs, rag.assign(relevance=rag.relevance.map(fold)), ["nDCG@5"])
    part = mapped[mapped.label_set == "rag"].drop(columns="label_set").reset_index(drop=True)
    pd.testing.assert_frame_equal(part, by_hand)
    unmapped = pdeval.leaderboards(runs, {"rag": rag}, ["nDCG@5"])
    assert not np.allclose(unmapped.value, part.value)  # grade 4 counts more than 3 unless folded


def test_leaderboard_top_k_worked_example():
    result = pd.DataFrame({
        "run": ["a", "b", "c", "d"] * 2,
        "label_set": ["human"] * 4 + ["llm"] * 4,
        "query_id": "q",
        "measure": "nDCG@10",
        "value": [0.9, 0.8, 0.7, 0.1, 0.2, 0.8, 0.9, 0.7],
    })
    out = pdeval.compare_leaderboards(result, "human", k=[1, 2, 3]).set_index("method")["value"]
    # human order a b c d; llm order c b d a
    assert out["top@1"] == 0.0 and out["top@2"] == 0.5 and out["top@3"] == pytest.approx(2 / 3)
    changes = pdeval.leaderboard_changes(result, "human").set_index("run")
    assert changes.loc["a", "change"] == -3 and changes.loc["c", "change"] == 2
    assert changes.index[0] == "a"  # the largest move first
    # a tie at the k-th place is broken by run name: b and c tie under llm, b (first by name) is its top 1
    tied = result.assign(value=[0.1, 0.2, 0.9, 0.0, 0.5, 0.9, 0.9, 0.1])
    top1 = pdeval.compare_leaderboards(tied, "human", k=1).set_index("method")["value"]["top@1"]
    assert top1 == 0.0  # human's top 1 is c; had the tie gone to c, this would be 1
    with pytest.raises(SchemaError, match="reference label set 'nist'"):
        pdeval.compare_leaderboards(result, "nist")


# ---------------------------------------------------------------------------------------------
# filling holes


class CountingJudge:
    """A deterministic judge: grade = (number of characters of query_id + doc_id) mod 4."""

    def __init__(self):
        self.batches: list[int] = []

    def __call__(self, pairs: pd.DataFrame):
        assert list(pairs.columns) == ["query_id", "doc_id"]
        self.batches.append(len(pairs))
        return ((pairs.query_id.str.len() + pairs.doc_id.str.len()) % 4).to_numpy()


def test_fill_holes_batches_cache_and_merge(tmp_path):
    runs = _toy_runs(n_runs=3, depth=6)
    qrels = _toy_labels(5).iloc[::3].reset_index(drop=True)  # a sparse pool
    qrels.loc[0, "relevance"] = -1  # a pooled, unjudged pair is a hole too
    top = pdeval.rank_run(pdeval.frames.canonical.as_run(runs), depth=5)
    pairs = set(zip(top.query_id, top.doc_id))
    labelled = set(zip(qrels.query_id[qrels.relevance >= 0], qrels.doc_id[qrels.relevance >= 0]))
    expected_holes = sorted(pairs - labelled)

    judge = CountingJudge()
    holes = pdeval.fill_holes(runs, qrels, judge, pool_depth=5, batch_size=7, progress=True)
    assert list(zip(holes.query_id, holes.doc_id)) == expected_holes
    assert sum(judge.batches) == len(expected_holes) and max(judge.batches) <= 7
    assert (holes.source == "judge").all()
    assert (holes.relevance == (holes.query_id.str.len() + holes.doc_id.str.len()) % 4).all()
    merged = pdeval.merge_qrels(qrels, holes, "fill", automatic_source="judge")
    assert (pdeval.judged(runs, merged.drop(columns="source"), k=5).judged == 1.0).all()

    # a file cache: the second call asks the judge nothing
    cache = tmp_path / "cache.tsv"
    first = pdeval.fill_holes(runs, qrels, CountingJudge(), pool_depth=5, cache=cache, progress=False)
    again = CountingJudge()
    second = pdeval.fill_holes(runs, qrels, again, pool_depth=5, cache=cache, progress=False)
    assert again.batches == [] and first.equals(second)
    # a dict cache, filled in place
    store: dict = {}
    pdeval.fill_holes(runs, qrels, CountingJudge(), pool_depth=5, cache=store, progress=False)
    assert set(store) == set(expected_holes)
    # only topics of the qrels
    part = pdeval.fill_holes(runs, qrels[qrels.query_id == "q0"], CountingJudge(), pool_depth=5, topics="qrels", progress=False)
    assert set(part.query_id) == {"q0"}


def test_fill_holes_rejects_a_bad_judge():
    runs = _toy_runs(n_runs=1, depth=3)
    qrels = _toy_labels(5).iloc[:1]
    with pytest.raises(SchemaError, match="one grade per row"):
        pdeval.fill_holes(runs, qrels, lambda pairs: [1], progress=False)
    with pytest.raises(SchemaError, match="not integers >= 0"):
        pdeval.fill_holes(runs, qrels, lambda pairs: np.full(len(pairs), 0.5), progress=False)
    with pytest.raises(PdevalError, match="pool_depth"):
        pdeval.fill_holes(runs, qrels, CountingJudge(), pool_depth=0)


def test_accessor_dispatches():
    human = pd.DataFrame({"query_id": "q", "doc_id": list("ab"), "relevance": [1, 0]})
    auto = pd.DataFrame({"query_id": "q", "doc_id": list("bc"), "relevance": [1, 2]})
    assert human.ir.merge_qrels(auto).equals(pdeval.merge_qrels(human, auto))
    a1 = human.ir.agreement({"x": auto}, missing="ignore").statistics
    pd.testing.assert_frame_equal(a1, pdeval.agreement(human, {"x": auto}, missing="ignore").statistics)
    assert human.ir.map_grades({0: 0, 1: 0}).relevance.tolist() == [0, 0]
    with pytest.raises(SchemaError, match="needs a qrels frame"):
        _toy_runs().ir.merge_qrels(auto)


def test_write_qrels_says_it_leaves_out_the_source_column(tmp_path):
    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 2],
                          "source": ["human", "judge", "judge"]})
    with pytest.warns(pdeval.errors.ColumnWarning, match="'source' is not written.*1 'human'"):
        pdeval.write_qrels(qrels, tmp_path / "q.txt")
    pd.testing.assert_frame_equal(pdeval.read_qrels(tmp_path / "q.txt"), qrels.drop(columns="source"))


def test_agreement_threshold_must_be_a_grade():
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(pdeval.errors.PdevalError, match=r"agreement\(\): threshold='2' is not an integer"):
        pdeval.agreement(qrels, {"a": qrels}, threshold="2")
    with pytest.raises(pdeval.errors.PdevalError, match=r"missing='raise' .*'raise' is now called 'error'"):
        pdeval.agreement(qrels, {"a": qrels}, missing="raise")


def test_a_text_target_grade_is_refused_by_name():
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(pdeval.errors.PdevalError, match=r"map_grades\(\): mapping=\{1: 'high'\} is not .*its value 'high'"):
        pdeval.map_grades(qrels, {1: "high"})


def test_a_cached_grade_that_is_not_an_integer_is_refused():
    """A cache mapping with grade 1.5 was stored as 1; now it is refused, naming the pair."""
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(pdeval.errors.PdevalError, match=r"cache= holds 1 grade\(s\) that are not integers >= 0, first 1.5"):
        pdeval.fill_holes(run, qrels, lambda batch: [0] * len(batch), cache={("1", "b"): 1.5})
    holes = pdeval.fill_holes(run, qrels, lambda batch: [0] * len(batch), cache={("1", "b"): 2})
    assert holes["relevance"].tolist() == [2]


def test_label_sets_sharing_no_run_name_the_missing_overlap():
    result = pd.DataFrame({"run": ["a", "b", "c", "d"], "label_set": ["human", "human", "llm", "llm"],
                           "measure": "AP", "value": [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(pdeval.errors.SchemaError, match=r"'llm' \(0 shared\) share fewer than two systems"):
        pdeval.compare_leaderboards(result, "human")
