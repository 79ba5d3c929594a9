"""pdeval.reproducibility against repro-eval 0.5.0 (the authors' package) on real CLEF eHealth
runs, per topic and overall to 1e-9; the ranked-list kernels against slow obvious loops
(scipy's kendalltau on the union positions, Webber et al.'s RBO_ext sum); identities of a
perfect reproduction; and the errors."""

from __future__ import annotations

import gzip
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

import pdeval
from pdeval.analysis.rankings.ranked_lists import kendall_tau_union, rank_biased_overlap
from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from locations import REPO

DATA = REPO.parent / "shared" / "data"
CLEF15 = DATA / "clef2015-chs-task2"
CLEF16 = DATA / "clef2016-chs-task2"
QRELS15 = CLEF15 / "qrels" / "qrels.eng.clef2015.qtest.graded.txt"
#: pdeval's name -> repro-eval's (ir_measures') name
MEASURES = {"AP": "AP", "P@10": "P@10", "nDCG@10": "nDCG@10", "nDCG": "nDCG", "Bpref": "Bpref", "RR": "RR",
            "Rprec": "Rprec", "R@100": "R@100"}
TOL = 1e-9

pytestmark = [
    pytest.mark.filterwarnings("ignore::pdeval.errors.OverlapWarning"),  # CLEF 2015's unjudged topic qtest.62
    pytest.mark.filterwarnings("ignore::DeprecationWarning:repro_eval"),
]


def _need_data():
    if not CLEF15.is_dir():
        pytest.skip("the CLEF eHealth 2015 runs live in ../shared/data beside the repository, which is absent")
    pytest.importorskip("repro_eval", reason="repro-eval 0.5.0 (test extra) is not installed")


def _unpacked(tmp: Path, folder: Path, name: str) -> Path:
    out = tmp / name
    if not out.exists():
        source = next(folder.glob(f"runs/{name}*.gz"))
        out.write_bytes(gzip.open(source).read())
    return out


def _value(out, statistic, original, measure=None, query_id="all"):
    """One value; without ``measure``, the row of a ranked-list statistic (measure 'ranking[@depth]')."""
    same_measure = out.measure.str.startswith("ranking") if measure is None else out.measure == measure
    row = out[(out.statistic == statistic) & (out.original == original) & same_measure & (out.query_id == query_id)]
    assert len(row) == 1, (statistic, original, measure, query_id, len(row))
    return float(row["value"].iloc[0])


def _close(ours, theirs):
    if isinstance(theirs, float) and math.isnan(theirs):
        return math.isnan(ours)
    return abs(ours - theirs) <= TOL


@pytest.fixture(scope="module")
def clef_reproduction(tmp_path_factory):
    """Two FDUSGInfo runs as the original baseline and advanced run, two others as their
    'reproduction' (different systems, so every measure is far from ideal)."""
    _need_data()
    from repro_eval.Evaluator import RpdEvaluator

    tmp = tmp_path_factory.mktemp("rpd")
    names = ["FDUSGInfo_EN_Run.1", "FDUSGInfo_EN_Run.2", "FDUSGInfo_EN_Run.3", "FDUSGInfo_EN_Run.4"]
    b_o, a_o, b_r, a_r = (_unpacked(tmp, CLEF15, n) for n in names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluator = RpdEvaluator(qrels_orig_path=str(QRELS15), run_b_orig_path=str(b_o), run_a_orig_path=str(a_o),
                                 run_b_rep_path=str(b_r), run_a_rep_path=str(a_r))
        evaluator.trim()
        evaluator.evaluate()
        theirs = {
            "KTU": evaluator.ktu(per_topic=True), "RBO": evaluator.rbo(per_topic=True),
            "RBO_p08_d100": evaluator.rbo(per_topic=True, p=0.8, depth=100),
            "RMSE": evaluator.rmse(), "nRMSE": evaluator.nrmse(), "p_value": evaluator.ttest(),
            "ER": evaluator.er(), "DeltaRI": evaluator.dri(),
        }
    read = pdeval.read_run
    original = pd.concat([read(b_o).assign(run="B"), read(a_o).assign(run="A")])
    reproduced = pd.concat([read(b_r).assign(run="B"), read(a_r).assign(run="A")])
    return original, reproduced, pdeval.read_qrels(QRELS15), theirs


SIDES = {"B": "baseline", "A": "advanced"}


def test_ranked_lists_equal_repro_eval_per_topic(clef_reproduction):
    original, reproduced, qrels, theirs = clef_reproduction
    # repro-eval reads 1000 documents per topic and weighs RBO to depth 1000: depth=1000
    out = pdeval.reproducibility(original, reproduced, qrels, "AP", per_topic=True, depth=1000)
    deep = pdeval.reproducibility(original, reproduced, qrels, "AP", per_topic=True, persistence=0.8, depth=100)
    for run, side in SIDES.items():
        for statistic, frame, key in (("KTU", out, "KTU"), ("RBO", out, "RBO"), ("RBO", deep, "RBO_p08_d100")):
            per_topic = theirs[key][side]
            assert len(per_topic) == 67
            worst = max(abs(_value(frame, statistic, run, query_id=q) - v) for q, v in per_topic.items())
            assert worst <= TOL, (statistic, key, run, worst)
            assert _close(_value(frame, statistic, run), float(np.mean(list(per_topic.values()))))


def test_topic_scores_and_effects_equal_repro_eval(clef_reproduction):
    """pytrec_eval (inside repro-eval) orders 32-bit scores: score_precision='float32' follows it."""
    original, reproduced, qrels, theirs = clef_reproduction
    out = pdeval.reproducibility(original, reproduced, qrels, list(MEASURES), baseline="B", score_precision="float32")
    for ours, name in MEASURES.items():
        for run, side in SIDES.items():
            for statistic in ("RMSE", "nRMSE", "p_value"):
                assert _close(_value(out, statistic, run, ours), theirs[statistic][side][name]), (statistic, ours, run)
        for statistic in ("ER", "DeltaRI"):
            assert _close(_value(out, statistic, "A", ours), theirs[statistic][name]), (statistic, ours)
    assert set(out["level"]) == {"ranked_list", "topic_scores", "overall_effect"}


@pytest.fixture(scope="module")
def clef_replication(tmp_path_factory):
    """ECNU's 2015 runs as the originals, the same team's 2016 runs replicated on CLEF 2016."""
    _need_data()
    if not CLEF16.is_dir():
        pytest.skip("../shared/data/clef2016-chs-task2 is absent")
    from repro_eval.Evaluator import RplEvaluator

    tmp = tmp_path_factory.mktemp("rpl")
    qrels16 = CLEF16 / "qrels.txt"
    b_o, a_o = _unpacked(tmp, CLEF15, "ECNU_EN_Run.1"), _unpacked(tmp, CLEF15, "ECNU_EN_Run.2")
    b_r, a_r = _unpacked(tmp, CLEF16, "ecnu_EN_Run1"), _unpacked(tmp, CLEF16, "ecnu_EN_Run2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluator = RplEvaluator(qrels_orig_path=str(QRELS15), qrels_rpl_path=str(qrels16), run_b_orig_path=str(b_o),
                                 run_a_orig_path=str(a_o), run_b_rep_path=str(b_r), run_a_rep_path=str(a_r))
        evaluator.trim()
        evaluator.evaluate()
        theirs = {"p_value": evaluator.ttest(), "ER": evaluator.er(), "DeltaRI": evaluator.dri()}
    read = pdeval.read_run
    original = pd.concat([read(b_o).assign(run="B"), read(a_o).assign(run="A")])
    reproduced = pd.concat([read(b_r).assign(run="B"), read(a_r).assign(run="A")])
    return original, reproduced, pdeval.read_qrels(QRELS15), pdeval.read_qrels(qrels16), theirs


def test_replicability_equals_repro_eval(clef_replication):
    original, reproduced, qrels, qrels16, theirs = clef_replication
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)  # topics of the qrels no run retrieved
        out = pdeval.reproducibility(original, reproduced, qrels, list(MEASURES), baseline="B",
                                     reproduced_qrels=qrels16, score_precision="float32")
    assert set(out["statistic"]) == {"p_value", "ARP_original", "ARP_reproduced", "ER", "DeltaRI"}
    for ours, name in MEASURES.items():
        for run, side in SIDES.items():
            assert _close(_value(out, "p_value", run, ours), theirs["p_value"][side][name]), (ours, run)
        for statistic in ("ER", "DeltaRI"):
            assert _close(_value(out, statistic, "A", ours), theirs[statistic][name]), (statistic, ours)


# ---- synthetic runs ---------------------------------------------------------------------------

def _run(name: str, lists: dict) -> pd.DataFrame:
    rows = [(name, q, d, float(len(docs) - i)) for q, docs in lists.items() for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])


LISTS_B = {"1": ["a", "b", "c", "d", "e"], "2": ["f", "g", "h", "i"], "3": ["a", "c", "e", "g"]}
LISTS_A = {"1": ["b", "a", "c", "e", "x"], "2": ["g", "f", "i", "h"], "3": ["c", "a", "g", "z"]}
QRELS = pd.DataFrame([(q, d, r) for q in "123" for d, r in zip("abcdefghi", [1, 0, 2, 1, 0, 1, 1, 0, 2])],
                     columns=["query_id", "doc_id", "relevance"])


def _pairs():
    original = pd.concat([_run("B", LISTS_B), _run("A", LISTS_A)])
    return original, original.copy()


def test_a_perfect_reproduction_scores_ideal_values():
    original, reproduced = _pairs()
    out = pdeval.reproducibility(original, reproduced, QRELS, ["AP", "P@5"], baseline="B", rbo="ext")
    values = out.set_index(["original", "statistic", "measure"])["value"]
    assert values.xs("KTU", level=1).eq(1).all() and values.xs("RBO", level=1).sub(1).abs().max() < 1e-12
    assert values.xs("RMSE", level=1).eq(0).all() and values.xs("p_value", level=1).eq(1).all()
    assert values[("A", "ER", "AP")] == 1 and values[("A", "DeltaRI", "AP")] == 0
    nan_p = pdeval.reproducibility(original, reproduced, QRELS, "AP", identical_p=None)
    assert nan_p.loc[nan_p.statistic == "p_value", "value"].isna().all()


def test_an_identical_copy_has_rbo_one_and_a_named_measure():
    """Issue class 6: the default cut of 1000 weighed RBO to depth 1000 on shorter runs, so an
    identical copy got 0.99912; KTU and RBO rows had measure '' (a blank pivot header)."""
    clef = pdeval.datasets.load("clef2018")
    run = clef.runs[clef.runs["run"] == clef.runs["run"].iloc[0]]  # 100 documents per topic
    out = pdeval.reproducibility(run, run.copy(), clef.qrels, "AP", per_topic=True)
    rbo = out[out.statistic == "RBO"]
    assert (rbo["value"] == 1.0).all() and set(out.loc[out.level == "ranked_list", "measure"]) == {"ranking"}
    assert "" not in set(out["measure"])
    table = out[out.query_id == "all"].pivot_table(index="statistic", columns="measure", values="value")
    assert table.loc["RBO", "ranking"] == 1.0 and table.loc["KTU", "ranking"] == 1.0
    cut = pdeval.reproducibility(run, run.copy(), clef.qrels, "AP", depth=1000)  # repro-eval's weights
    assert _value(cut, "RBO", run["run"].iloc[0]) == pytest.approx(0.99912, abs=1e-5)
    assert set(cut.loc[cut.level == "ranked_list", "measure"]) == {"ranking@1000"}


@pytest.mark.parametrize("options, message", [
    ({"identical_p": 1.5}, "identical_p=1.5 is not None or a finite number >= 0 and <= 1"),
    ({"identical_p": "1"}, "identical_p='1' is not"),
    ({"cutoff": 100}, "the parameter 'cutoff' is now called 'depth'"),
    ({"unpaired": "raise"}, "'raise' is now called 'error'"),
    ({"depth": 2.5}, "depth=2.5 is not"),
])
def test_options_outside_their_domain_are_refused(options, message):
    """Issue class 1: identical_p=1.5 was printed as a p-value."""
    original, reproduced = _pairs()
    with pytest.raises(PdevalError, match=re.escape(message)):
        pdeval.reproducibility(original, reproduced, QRELS, "AP", **options)


def test_several_reproductions_each_against_their_own_baseline():
    original, _ = _pairs()
    one = pd.concat([_run("B1", LISTS_B), _run("A1", LISTS_B)])  # the advanced run reproduces no improvement
    two = pd.concat([_run("B2", LISTS_B), _run("A2", LISTS_A)])
    reproduced = pd.concat([one, two])
    pairs = {"first": {"B": "B1", "A": "A1"}, "second": {"B": "B2", "A": "A2"}}
    out = pdeval.reproducibility(original, reproduced, QRELS, "AP", baseline="B", pairs=pairs)
    er = out[out.statistic == "ER"].set_index("reproduction")["value"]
    assert er["first"] == 0 and er["second"] == pytest.approx(1)
    alone = pdeval.reproducibility(original, two, QRELS, "AP", baseline="B", pairs={"B": "B2", "A": "A2"})
    pd.testing.assert_frame_equal(out[out.reproduction == "second"].drop(columns="reproduction").reset_index(drop=True),
                                  alone)


def test_the_accessor_calls_the_function():
    original, reproduced = _pairs()
    pd.testing.assert_frame_equal(original.ir.reproducibility(reproduced, QRELS, "AP"),
                                  pdeval.reproducibility(original, reproduced, QRELS, "AP"))


def test_unpaired_topics_are_named_or_dropped():
    original, reproduced = _pairs()
    reproduced = reproduced[reproduced.query_id != "2"]
    with pytest.raises(SchemaError, match="topic '2' only in the original run"):
        pdeval.reproducibility(original, reproduced, QRELS, "AP")
    with pytest.warns(PdevalWarning, match="unpaired='drop'"):
        out = pdeval.reproducibility(original, reproduced, QRELS, "AP", unpaired="drop", per_topic=True)
    assert "2" not in set(out["query_id"])


@pytest.mark.parametrize("kwargs, message", [
    ({"baseline": "nope"}, "baseline='nope' must be the original run of exactly one pair"),
    ({"pairs": {"B": "missing"}}, "reproduced run\\(s\\) \\['missing'\\]"),
    ({"persistence": 1.0}, r"reproducibility\(\): persistence=1.0 is not a finite number > 0 and < 1"),
    ({"depth": 0}, r"reproducibility\(\): depth=0 is not None or an integer >= 1"),
    ({"rbo": "min"}, r"reproducibility\(\): rbo='min' is not one of"),
    ({"pairs": [("B",)]}, "pairs must hold \\(original, reproduced\\) tuples"),
])
def test_bad_options_are_named(kwargs, message):
    original, reproduced = _pairs()
    with pytest.raises(PdevalError, match=message):
        pdeval.reproducibility(original, reproduced, QRELS, "AP", **kwargs)


# ---- the kernels against slow obvious loops -----------------------------------------------------

def _stack(lists):
    rows = [(g, i + 1, d) for g, docs in enumerate(lists) for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["group", "rank", "doc"]).astype(np.int64)


def _rbo_ext_loop(s, l, p):
    if len(s) > len(l):
        s, l = l, s
    k_s, k_l = len(s), len(l)
    overlap = [len(set(s[:d]) & set(l[:d])) for d in range(1, k_l + 1)]
    total = sum(overlap[d - 1] / d * p**d for d in range(1, k_l + 1))
    total += sum(overlap[k_s - 1] * (d - k_s) / (k_s * d) * p**d for d in range(k_s + 1, k_l + 1))
    return (1 - p) / p * total + ((overlap[-1] - overlap[k_s - 1]) / k_l + overlap[k_s - 1] / k_s) * p**k_l


def _rbo_normalized_loop(a, b, p, depth):
    score = norm = 0.0
    for d in range(1, depth + 1):
        weight = p ** (d - 1)
        score += weight * len(set(a[:d]) & set(b[:d])) / d
        norm += weight
    return score / norm


ranking = st.lists(st.integers(0, 30), unique=True, max_size=25)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ranking, ranking), min_size=1, max_size=8), st.floats(0.05, 0.99), st.integers(1, 30))
def test_kernels_equal_slow_loops(pairs, p, depth):
    a, b = _stack([x for x, _ in pairs]), _stack([y for _, y in pairs])
    tau, n = kendall_tau_union(a, b, len(pairs))
    normalized = rank_biased_overlap(a, b, len(pairs), persistence=p, depth=depth)
    ext = rank_biased_overlap(a, b, len(pairs), persistence=p, depth=100, variant="ext")
    for g, (x, y) in enumerate(pairs):
        k = min(len(x), len(y))
        if k >= 2:
            union = sorted(set(x[:k]) | set(y[:k]))
            expected = kendalltau([union.index(d) for d in x[:k]], [union.index(d) for d in y[:k]]).correlation
            assert tau[g] == pytest.approx(expected, abs=1e-12)
        else:
            assert math.isnan(tau[g])
        assert normalized[g] == pytest.approx(_rbo_normalized_loop(x, y, p, depth), abs=1e-12)
        if min(len(x), len(y)) == 0:
            assert math.isnan(ext[g])
        else:
            assert ext[g] == pytest.approx(_rbo_ext_loop(x, y, p), abs=1e-12)


def test_rbo_ext_of_identical_lists_is_one_and_of_disjoint_lists_zero():
    same = _stack([[1, 2, 3, 4], [5, 6]])
    assert rank_biased_overlap(same, same, 2, persistence=0.9, variant="ext") == pytest.approx([1, 1])
    other = _stack([[7, 8, 9, 10], [11, 12]])
    assert rank_biased_overlap(same, other, 2, persistence=0.9, variant="ext") == pytest.approx([0, 0])


# ---- figures ------------------------------------------------------------------------------------

def test_figures_draw_the_pairs_and_the_effect_plane():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from pdeval.report.reproducibility import effect_plane, reproduced_scores

    original, reproduced = _pairs()
    scores = pdeval.evaluate(original, QRELS, ["AP"])
    fig = reproduced_scores(scores, scores, "AP")
    assert isinstance(fig, Figure) and len([ax for ax in fig.axes if ax.get_visible()]) == 2
    plt.close(fig)
    out = pdeval.reproducibility(original, reproduced, QRELS, ["AP", "P@5"], baseline="B")
    fig = effect_plane(out)
    assert isinstance(fig, Figure)
    plt.close(fig)
    with pytest.raises(SchemaError, match="baseline="):
        effect_plane(out[out.level != "overall_effect"])
    with pytest.raises(SchemaError, match="no 'P@5' values"):
        reproduced_scores(scores, scores, "P@5")


def test_one_frame_can_hold_both_sides():
    original, _ = _pairs()
    both = pd.concat([original, _run("B2", LISTS_A), _run("A2", LISTS_B)])
    pairs = {"B": "B2", "A": "A2"}
    one = pdeval.reproducibility(both, both, QRELS, "AP", pairs=pairs, baseline="B")
    two = pdeval.reproducibility(original, both, QRELS, "AP", pairs=pairs, baseline="B")
    pd.testing.assert_frame_equal(one, two)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_list_order_rows_follows_repro_eval_on_unsorted_runs_with_ties(data):
    """repro-eval compares the file's order (a stretch of equal scores reversed by doc id);
    list_order='rows' gives its KTU and RBO per topic on runs that are not sorted by score."""
    pytest.importorskip("repro_eval", reason="repro-eval 0.5.0 (test extra) is not installed")
    from repro_eval.measure.document_order import KTU, RBO

    def run_dict(name, topics):
        return {q: dict(rows) for q, rows in topics.items()}, pd.DataFrame(
            [(name, q, d, s) for q, rows in topics.items() for d, s in rows], columns=["run", "query_id", "doc_id", "score"])

    topics_o, topics_r = {}, {}
    for q in ("q1", "q2", "q3"):
        n = data.draw(st.integers(2, 12))
        for topics in (topics_o, topics_r):
            docs = data.draw(st.lists(st.sampled_from([f"d{i:02d}" for i in range(20)]), min_size=n, max_size=n,
                                      unique=True))
            topics[q] = [(d, float(data.draw(st.integers(0, 3)))) for d in docs]
    dict_o, frame_o = run_dict("B", topics_o)
    dict_r, frame_r = run_dict("B", topics_r)
    qrels = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": "d00", "relevance": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ktu = KTU({q: dict(v) for q, v in dict_o.items()}, {q: dict(v) for q, v in dict_r.items()}, per_topic=True)
        rbo = RBO({q: dict(v) for q, v in dict_o.items()}, {q: dict(v) for q, v in dict_r.items()}, p=0.9, depth=15,
                  pbar=False, per_topic=True)
        out = pdeval.reproducibility(frame_o, frame_r, qrels, "P@5", list_order="rows", per_topic=True,
                                     persistence=0.9, depth=15)
    for q in ("q1", "q2", "q3"):
        assert _close(_value(out, "KTU", "B", query_id=q), ktu[q]) or (math.isnan(ktu[q]) and
                                                                       math.isnan(_value(out, "KTU", "B", query_id=q)))
        assert _close(_value(out, "RBO", "B", query_id=q), rbo[q])
