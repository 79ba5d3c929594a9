"""statAP prels and the statAP family (statAP, statAP_var, statRprec, statP@k, statnDCG@k).

The oracle is ``statAP_MQ_eval_v3.pl`` (and the v4 copy) run with ``perl`` on the TREC Million
Query 2007–2009 and Web 2009 prels of the shared data beside the repository, with runs generated
from the prels' documents (documents outside the prels, short lists, tied scores only between
documents that are both nonrelevant, so Perl's hash order of ties cannot change a value). The
copies in a temporary folder print 17 significant digits and drop the unused ``use LWP::Simple``.
Tests skip when perl or the data are absent; the fixture in ``tests/data/sampled`` is checked by hand.
"""

from __future__ import annotations

import functools
import math
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import MeasureError, ParseError, PdevalWarning
from pdeval.frames.canonical import variant_keys
from pdeval.sources.sampled import prels_qrels
from locations import TESTS

HERE = TESTS
FIXTURE = HERE / "data" / "sampled"
STATAP = HERE.parent.parent / "shared" / "data" / "statap-mq-web09"
PRELS = [
    "prels.1-10000",
    "prels.10001-20000",
    "prels.20001-60000",
    "prels.web.1-50.catA.iorixxx.txt",
    "prels.web.1-50.catB.lintool.txt",
]
V3 = "statAP_MQ_eval_v3.pl"
V4 = "statAP_MQ_eval_v4.modified-ndcg20.iorixxx.pl"

needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed (needed for statAP_MQ_eval)")
needs_data = pytest.mark.skipif(not STATAP.is_dir(), reason="the shared data ../shared/data/statap-mq-web09 is absent")

V3_MEASURES = {
    "statAP": "statAP",
    "Rprec": "statRprec",
    "P30": "statP@30",
    "nDCG": "statnDCG@30",
    "var": "statAP_var",
}
V4_MEASURES = {
    "statAP": "statAP",
    "Rprec": "statRprec",
    "P10": "statP(version=v4)@10",
    "P20": "statP(version=v4)@20",
    "P50": "statP(version=v4)@50",
    "P100": "statP(version=v4)@100",
    "N10": "statnDCG(version=v4)@10",
    "N20": "statnDCG(version=v4)@20",
    "N50": "statnDCG(version=v4)@50",
    "N100": "statnDCG(version=v4)@100",
    "var": "statAP_var(version=v4)",
}


def read_prels(path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        return pdeval.read_qrels(path)


# ---- reading ------------------------------------------------------------------------------------
def test_read_prels_applies_the_scripts_rules():
    with pytest.warns(PdevalWarning, match="relevance -999") as caught:
        qrels = pdeval.read_qrels(FIXTURE / "prels.txt")
    message = str(caught[0].message)
    assert "NA" in message and "1 topic(s) with no NEU-judged row" in message
    assert list(qrels.columns) == ["query_id", "doc_id", "relevance", "inclusion_prob"]
    assert variant_keys(qrels) == []  # inclusion_prob is sampling information
    assert "1 topic(s) without a sampled relevant document" in message  # topic 3
    # e (-999), f (NA), topic 2 (UMass only), topic 3 (nothing relevant: not valid) dropped
    assert qrels["doc_id"].tolist() == ["a", "b", "c", "d"]
    assert qrels["inclusion_prob"].tolist() == [0.5, 0.5, 0.25, 1.0]  # method 0: probability 1
    with pytest.warns(PdevalWarning):
        kept = pdeval.sources.sampled.read_prels(FIXTURE / "prels.txt", valid_only=False)
    assert kept["doc_id"].tolist() == ["a", "b", "c", "d", "h"]


def test_prels_options_and_ir_datasets_records():
    raw = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "2", "2"],
            "doc_id": ["a", "b", "c", "d", "e"],
            "relevance": [1, 0, 1, 1, 0],
            "method": [1, 0, 2, 1, 4],
            "iprob": [0.5, 0.9, 0.3, 0.2, 0.4],  # ir_datasets' TrecPrel field name
        }
    )
    run = pd.DataFrame({"query_id": "1", "doc_id": ["a", "c"], "score": [2.0, 1.0]})
    with pytest.raises(pdeval.errors.SchemaError, match="prels_qrels"):
        pdeval.evaluate(run, raw, ["statAP"])  # raw records: 'method' is not a variant key
    mixed = prels_qrels(raw)
    assert mixed["inclusion_prob"].tolist() == [0.5, 1.0, 1.0, 0.2, 0.4]
    with pytest.warns(PdevalWarning, match="method 0"):
        neu_only = prels_qrels(raw, mixed=False)  # the script's -f
    assert neu_only["doc_id"].tolist() == ["a", "c", "d", "e"] and neu_only["inclusion_prob"].tolist()[1] == 0.3
    with pytest.warns(PdevalWarning):
        assert set(prels_qrels(raw, topics="neu")["query_id"]) == {"2"}  # -n
    with pytest.warns(PdevalWarning):
        assert set(prels_qrels(raw, topics="mixed")["query_id"]) == {"1"}  # -m


def test_prels_reading_errors(tmp_path):
    bad = tmp_path / "bad.prels"
    bad.write_text("1 a 1 1 0.5\n1 b 1 1 high\n")
    with pytest.raises(ParseError, match="line 2"):
        pdeval.read_qrels(bad, format="prels")
    negative = tmp_path / "negative.prels"
    negative.write_text("1 a -1 1 0.5\n")
    with pytest.raises(ParseError, match="-999"):
        pdeval.read_qrels(negative, format="prels")


def test_statap_refuses_primes_and_bad_probabilities():
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1], "inclusion_prob": [0.0]})
    with pytest.raises(pdeval.errors.SchemaError, match="inclusion probabilities outside"):
        pdeval.evaluate(run, qrels, ["statAP"])
    with pytest.raises(MeasureError, match="no prime"):
        pdeval.parse_measure("statAP'")


# ---- hand-computed values -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture():
    """The fixture prels with topic 3 (no relevant document) kept, to see the rule for it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        qrels = pdeval.sources.sampled.read_prels(FIXTURE / "prels.txt", valid_only=False)
    return pdeval.read_run(FIXTURE / "run.prels.txt"), qrels


def by_topic(run, qrels, measure):
    return pdeval.evaluate(run, qrels, [measure], undefined="nan").set_index("query_id")["value"]


def test_statap_family_by_hand(fixture):
    run, qrels = fixture
    # topic 1: a (rel, π .5) at 1, x (not sampled) at 2, c (rel 2, π .25) at 3, b (nonrel) at 4;
    # d (rel, method 0: π 1) unretrieved. R = 2 + 4 + 1 = 7; precisions (1+0)/1 and (1+2)/3
    assert by_topic(run, qrels, "statAP")["1"] == pytest.approx((1 / 0.5 + 1 / 0.25) / 7, abs=1e-15)
    assert by_topic(run, qrels, "statP@2")["1"] == pytest.approx(2 / 2, abs=1e-15)
    assert by_topic(run, qrels, "statP@30")["1"] == pytest.approx(6 / 30, abs=1e-15)
    assert by_topic(run, qrels, "statP(version=v4)@30")["1"] == 0.0  # v4: list shorter than k
    assert by_topic(run, qrels, "statRprec")["1"] == pytest.approx(6 / 7, abs=1e-15)  # list shorter than 7
    # nDCG@30: DCG = 1/log2(2) + 3/log2(4); v3 ideal: gain 3 at rank 1, then gain 1 at ranks 2..(3-1)
    assert by_topic(run, qrels, "statnDCG@30")["1"] == pytest.approx(2.5 / (3 + 1 / math.log2(3)), abs=1e-15)
    v4 = by_topic(run, qrels, "statnDCG(version=v4)@30")["1"]
    assert v4 == pytest.approx(2.5 / (3 + 1 / math.log2(3) + 1 / math.log2(4)), abs=1e-15)
    # topic 3: no sampled relevant document, not a valid topic
    assert math.isnan(by_topic(run, qrels, "statAP")["3"])
    assert "2" not in by_topic(run, qrels, "statAP").index  # UMass-only topic dropped when read


def test_statap_variance_by_hand(fixture):
    run, qrels = fixture
    statap = 6 / 7
    y = [(1 - statap) / 0.5, (1 - statap) / 0.25, -statap / 1.0]  # a, c retrieved; d missed
    prob = [0.5, 0.25, 1.0]
    s1 = sum((1 - p) * v * v for p, v in zip(prob, y))
    s2 = sum(y) ** 2 - sum(v * v for v in y)
    s3_v3 = (0.5 / 0.25) / 1**2 + (0.5 / 0.25 + 0.75 / 0.0625) / 3**2
    n = 4  # sampled documents of topic 1
    expected = (s1 - s2 / (n - 1) + s3_v3) / 49
    assert by_topic(run, qrels, "statAP_var")["1"] == pytest.approx(expected, abs=1e-15)
    s3_v4 = ((1 / 3) / 0.25) ** 2 * (1 - 0.5) / 0.25  # a: Σ 1/(k π) of the relevant below it (c)
    in_list = 3  # a, c, b are sampled
    expected_v4 = min(1.0, (s1 - s2 / (n - 1) + s3_v4) / 49 / (in_list + 0.1) * n)
    assert by_topic(run, qrels, "statAP_var(version=v4)")["1"] == pytest.approx(expected_v4, abs=1e-15)


def test_identity_with_complete_judgments(fixture):
    """With every inclusion probability 1 (or plain qrels: a census), statAP is AP and statP@k is P@k."""
    run, _ = fixture
    plain = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 2, 1]})
    for qrels in (plain.assign(inclusion_prob=1.0), plain):
        ours = pdeval.evaluate(run, qrels, ["statAP", "AP", "statP@3", "P@3"]).set_index("measure")["value"]
        assert ours["statAP"] == pytest.approx(ours["AP"], abs=1e-15)
        assert ours["statP@3"] == pytest.approx(ours["P@3"], abs=1e-15)


def test_depth_and_several_runs(fixture):
    run, qrels = fixture
    run = run.assign(run="original")
    both = pd.concat([run, run.assign(run="reversed", score=-run["score"])], ignore_index=True)
    result = pdeval.evaluate(both, qrels, ["statAP"], depth=2)
    # depth 2: only a is read; its precision is 1 -> statAP = 2/7
    assert result.set_index(["run", "query_id"]).loc[("original", "1"), "value"] == pytest.approx(2 / 7, abs=1e-15)
    assert set(result["run"]) == {"original", "reversed"}


# ---- against the scripts ------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def script_copy(name: str) -> Path:
    text = (STATAP / name).read_text(encoding="latin-1")
    text = text.replace("use LWP::Simple;", "")  # unused by the scripts, often not installed
    text = text.replace('sprintf("%3f",$x)', 'sprintf("%.17g",$x)').replace('sprintf("%.3f",$x)', 'sprintf("%.17g",$x)')
    target = Path(tempfile.mkdtemp(prefix="statap_")) / name
    target.write_text(text, encoding="latin-1")
    return target


def run_script(script: Path, prels: Path, run: Path, columns: list, options: tuple = ()) -> pd.DataFrame:
    """Per-topic values of ``-q [options] -t`` output: only valid topics (statAP not -999)."""
    out = subprocess.run(
        ["perl", str(script), "-q", *options, "-t", str(prels), str(run)], capture_output=True, text=True, check=True
    ).stdout
    rows = []
    for line in out.splitlines():
        if not line.strip() or line.startswith(" "):  # blank lines and v4's summary line
            continue
        fields = line.split()
        if fields[1] == "UMASS":
            continue
        if fields[1] in ("NEU", "MIXED"):
            fields = [fields[0]] + fields[2:]
        if len(fields) < len(columns) + 1:  # a topic the options leave out (its type only)
            continue
        rows.append(fields[: len(columns) + 1])
    frame = pd.DataFrame(rows, columns=["query_id", *columns]).set_index("query_id")
    return frame[frame["statAP"] != "-999"].astype(float)


def generated_run(qrels: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One run over the prels' documents: a random share of each topic's documents plus documents
    outside the prels, in random order; ties only between neighbours that are both nonrelevant."""
    rng = np.random.default_rng(seed)
    parts = []
    for topic, group in qrels.groupby("query_id"):
        docs = group["doc_id"].to_numpy()
        relevant = set(group.loc[group["relevance"] > 0, "doc_id"])
        picked = list(rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False))
        picked += [f"outside-{topic}-{i}" for i in range(int(rng.integers(0, 30)))]
        ids = [picked[i] for i in rng.permutation(len(picked))]
        score = np.arange(len(ids), 0, -1, dtype=np.float64)
        tie = rng.random(len(ids)) < 0.3
        for i in range(1, len(ids)):
            if tie[i] and ids[i] not in relevant and ids[i - 1] not in relevant:
                score[i] = score[i - 1]
        parts.append(pd.DataFrame({"query_id": topic, "doc_id": ids, "score": score}))
    return pd.concat(parts, ignore_index=True).assign(run="generated")


@needs_perl
def test_fixture_equals_the_script(fixture):
    if not STATAP.is_dir():
        pytest.skip("the shared data ../shared/data/statap-mq-web09 is absent (the script lives there)")
    run, qrels = fixture
    theirs = run_script(script_copy(V3), FIXTURE / "prels.txt", FIXTURE / "run.prels.txt", ["statAP", "RQ", "Rprec", "P30", "nDCG", "var", "inlist", "relinlist"])
    ours = pdeval.evaluate(run, qrels, list(V3_MEASURES.values()), undefined="nan")
    ours = ours.pivot_table(index="query_id", columns="measure", values="value")
    assert list(theirs.index) == ["1"]
    for column, measure in V3_MEASURES.items():
        assert ours.loc["1", str(pdeval.parse_measure(measure))] == pytest.approx(theirs.loc["1", column], abs=1e-12)


@needs_perl
@needs_data
@pytest.mark.parametrize("name", PRELS)
def test_prels_with_generated_runs_equal_statap_mq_eval(tmp_path, name):
    prels = STATAP / name
    qrels = read_prels(prels)
    run = generated_run(qrels, seed=len(name))
    path = pdeval.write_run(run, tmp_path / "generated.txt")[0]
    for script, measures in ((V3, V3_MEASURES), (V4, V4_MEASURES)):
        columns = ["statAP", "RQ", "Rprec", *[c for c in measures if c not in ("statAP", "Rprec", "var")], "var"]
        theirs = run_script(script_copy(script), prels, path, columns)
        result = pdeval.evaluate(run, qrels, list(measures.values()), undefined="nan")
        ours = result.pivot_table(index="query_id", columns="measure", values="value", dropna=False)
        # the script's valid topics are exactly those the prels keep (and pdeval defines)
        assert set(ours.index[ours["statAP"].notna()]) == set(theirs.index) == set(ours.index)
        for column, measure in measures.items():
            mine = ours[str(pdeval.parse_measure(measure))].reindex(theirs.index)
            difference = (mine - theirs[column]).abs().max()
            assert difference <= 1e-9, f"{script} {column}: {difference}"
        # the means are the script's statMAP etc., with the default undefined="zero" too
        summary = pdeval.summarize(pdeval.evaluate(run, qrels, ["statAP"]))
        assert summary["value"].iloc[0] == pytest.approx(theirs["statAP"].mean(), abs=1e-12)


@needs_perl
@needs_data
@pytest.mark.parametrize(
    "options, kwargs",
    [(("-n",), {"topics": "neu"}), (("-m",), {"topics": "mixed"}), (("-f",), {"mixed": False}), (("-n", "-f"), {"topics": "neu", "mixed": False})],
    ids=["n", "m", "f", "n-f"],
)
def test_script_options_are_reading_options(tmp_path, options, kwargs):
    """-n (NEU-only topics), -m (topics judged by both methods), -f (no UMass documents)."""
    from pdeval.sources.sampled import read_prels

    prels = STATAP / "prels.1-10000"  # methods 0, 1, 2 and 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        qrels = read_prels(prels, **kwargs)
    run = generated_run(read_prels_default(prels), seed=3)
    path = pdeval.write_run(run, tmp_path / "generated.txt")[0]
    columns = ["statAP", "RQ", "Rprec", "P30", "nDCG", "var"]
    theirs = run_script(script_copy(V3), prels, path, columns, options)
    result = pdeval.evaluate(run, qrels, list(V3_MEASURES.values()), undefined="nan")
    ours = result.pivot_table(index="query_id", columns="measure", values="value", dropna=False)
    assert set(ours.index[ours["statAP"].notna()]) == set(theirs.index)
    for column, measure in V3_MEASURES.items():
        difference = (ours[str(pdeval.parse_measure(measure))].reindex(theirs.index) - theirs[column]).abs().max()
        assert difference <= 1e-9, f"{options} {column}: {difference}"


@functools.lru_cache(maxsize=None)
def read_prels_default(path: Path) -> pd.DataFrame:
    return read_prels(path)


def test_cli_reads_prels(capsys):
    """``pdeval eval prels run -m statAP``: the all line is the mean over the script's valid topics."""
    from pdeval.cli.commands import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        main(["eval", str(FIXTURE / "prels.txt"), str(FIXTURE / "run.prels.txt"), "-m", "statAP", "-q"])
    lines = [line.split("\t") for line in capsys.readouterr().out.strip().splitlines()]
    values = {fields[1]: float(fields[2]) for fields in lines}
    assert set(values) == {"1", "all"}  # topic 2 (UMass only) and 3 (nothing relevant) are not valid
    assert values["all"] == pytest.approx(6 / 7, abs=1e-4)
