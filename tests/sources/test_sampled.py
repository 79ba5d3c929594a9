"""Sampled judgments: sample_eval.pl qrels and xinfAP / infNDCG / iP@k / inum_rel(_ret).

The oracle is NIST's ``sample_eval.pl`` itself, run with ``perl`` on the real TREC CDS 2015 and
PM 2017/2018 sampled qrels of the shared data beside the repository (copies in a temporary folder
print 17 significant digits instead of 4); those tests skip when perl or the data are absent. The
small fixture in ``tests/data/sampled`` is checked against values worked out by hand from the
formulas of Yilmaz, Kanoulas & Aslam (SIGIR 2008), and against the script when perl is there.
"""

from __future__ import annotations

import functools
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import MeasureError, ParseError
from pdeval.frames.canonical import variant_keys
from locations import TESTS

HERE = TESTS
FIXTURE = HERE / "data" / "sampled"
SHARED = HERE.parent.parent / "shared" / "data"
CDS = SHARED / "cds2015-sampleval"
PM = SHARED / "trec-pm-sampleval"
COPIES = CDS / "sample_eval_versions"
CLINICAL = "sample_eval.nist-clinical.max100.JULIELab.pl"  # NIST's copy for CDS (maxResultSize 100)
DEEP = "sample_eval.max1000.amillert.pl"  # the same code, maxResultSize 1000
TRECVID = "sample_eval.Improved-ITV.pl"  # TRECVID's code, maxResultSize on the command line

needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed (needed to run sample_eval.pl)")
needs_cds = pytest.mark.skipif(not CDS.is_dir(), reason="the shared data ../shared/data/cds2015-sampleval is absent")
needs_pm = pytest.mark.skipif(not PM.is_dir(), reason="the shared data ../shared/data/trec-pm-sampleval is absent")


# ---- running the script ----------------------------------------------------------------------
def script_copy(tmp_path: Path, name: str, source: Path = COPIES) -> Path:
    """A copy of the script that prints every value with 17 significant digits (made once per test run)."""
    return _script_copy(name, source)


@functools.lru_cache(maxsize=None)
def _script_copy(name: str, source: Path) -> Path:
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="sample_eval_"))
    text = (source / name).read_text(encoding="latin-1").replace("\r\n", "\n")
    text = text.replace("%6.4f", "%.17g").replace("%14.4f", "%.17g")
    target = tmp_path / name
    target.write_text(text, encoding="latin-1")
    return target


def run_script(script: Path, qrels: Path, run: Path, *args: str, per_topic: bool = True) -> pd.DataFrame:
    """The script's output as a frame ``measure, query_id, value`` (each command run once per test run)."""
    return _run_script(str(script), str(qrels), str(run), tuple(args), per_topic).copy()


@functools.lru_cache(maxsize=None)
def _run_script(script: str, qrels: str, run: str, args: tuple, per_topic: bool) -> pd.DataFrame:
    command = ["perl", str(script)] + (["-q"] if per_topic else []) + [str(qrels), str(run), *args]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and ":" not in line:
            rows.append((parts[0], parts[1], float(parts[2])))
    return pd.DataFrame(rows, columns=["measure", "query_id", "value"])


def pdeval_lines(run: pd.DataFrame, qrels: pd.DataFrame, names: dict, **kwargs) -> pd.DataFrame:
    """pdeval's values under the script's names, per topic and 'all' (sums for the counts)."""
    measures = {script: str(pdeval.parse_measure(m)) for script, m in names.items()}
    result = pdeval.evaluate(run, qrels, list(measures.values()), **kwargs)
    parts = []
    for script, measure in measures.items():
        values = result[result["measure"] == measure]
        total = values["value"].sum() if script.startswith("inum") else values["value"].mean()
        if not script.startswith("iprec"):
            parts.append(values.assign(measure=script)[["measure", "query_id", "value"]])
        parts.append(pd.DataFrame({"measure": [script], "query_id": ["all"], "value": [total]}))
    return pd.concat(parts, ignore_index=True)


def assert_same(ours: pd.DataFrame, theirs: pd.DataFrame, tolerance: float = 1e-9) -> int:
    """Every line the script printed for a measure pdeval computes is equal; returns how many."""
    merged = theirs.merge(ours, on=["measure", "query_id"], suffixes=("_perl", "_pdeval"))
    compared = theirs[theirs["measure"].isin(ours["measure"])]
    assert len(merged) == len(compared), "pdeval lacks lines the script printed"
    diff = (merged["value_perl"] - merged["value_pdeval"]).abs()
    worst = merged.loc[diff.idxmax()] if len(diff) else None
    assert diff.max() <= tolerance, f"largest difference {diff.max()} at {worst.to_dict()}"
    return len(merged)


def names_for(max_results: int, cutoffs, variant: str = "clinical", rel: int = 1) -> dict:
    names = {
        "infAP": f"xinfAP(variant={variant},max_results={max_results},rel={rel})",
        "infNDCG": f"infNDCG(variant={variant},max_results={max_results})",
        "inum_rel_ret": f"inum_rel_ret(max_results={max_results},rel={rel})",
        "inum_rel": f"inum_rel(rel={rel})",
    }
    for k in cutoffs:
        names[f"iP{k}"] = f"iP(max_results={max_results},rel={rel})@{k}"
    for level in range(11):  # printed for 'all' only
        names[f"iprec@rec{level / 10:.2f}"] = f"iprec_at_recall(recall={level / 10},max_results={max_results},rel={rel})"
    return names


# ---- reading ------------------------------------------------------------------------------------
def test_read_sample_eval_qrels_by_detection():
    qrels = pdeval.read_qrels(FIXTURE / "qrels.sample_eval.txt")
    assert list(qrels.columns) == ["query_id", "doc_id", "stratum", "relevance"]
    assert variant_keys(qrels) == []  # the stratum is sampling information, not a variant
    assert qrels["relevance"].tolist()[:4] == [1, 0, 1, -1]
    assert qrels["stratum"].tolist()[:3] == ["A", "A", "B"]
    same = pdeval.read_qrels(FIXTURE / "qrels.sample_eval.txt", format="sample_eval")
    pd.testing.assert_frame_equal(qrels, same)


def test_sample_eval_reading_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 0 d1 A 1\n1 0 d2 A x\n")
    with pytest.raises(ParseError, match="line 2"):
        pdeval.read_qrels(bad, format="sample_eval")
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("1 0 d1 A 1\n1 0 d2 0\n")
    with pytest.raises(ParseError, match="fields"):
        pdeval.read_qrels(mixed)
    with pytest.raises(pdeval.errors.DuplicateError):
        twice = tmp_path / "twice.txt"
        twice.write_text("1 0 d1 A 1\n1 0 d1 B 0\n")
        pdeval.read_qrels(twice)


def test_plain_trec_qrels_still_read_as_before():
    qrels = pdeval.read_qrels(HERE / "data" / "trec_eval" / "qrels.test")
    assert list(qrels.columns) == ["query_id", "doc_id", "relevance"]


# ---- hand-computed values on the fixture --------------------------------------------------------
@pytest.fixture(scope="module")
def fixture():
    return pdeval.read_run(FIXTURE / "run.txt"), pdeval.read_qrels(FIXTURE / "qrels.sample_eval.txt")


def values(run, qrels, measure, **kwargs) -> pd.Series:
    result = pdeval.evaluate(run, qrels, [measure], **kwargs)
    return result.set_index("query_id")["value"]


def test_xinfap_by_hand(fixture):
    run, qrels = fixture
    got = values(run, qrels, "xinfAP", undefined="nan")
    # topic 1: R = 1*2/2 (stratum A) + 1*4/2 (B) = 3. d1 (A) at rank 1: prec 1. d3 (B) at rank 4,
    # above it d1 (A: 1 pooled, 1 judged, 1 relevant), x (not pooled), d4 (B: 1 pooled, 0 judged):
    p3 = 1 / 4 + (2 / 4) * (0.5 * (1 + 1e-5) / (1 + 3e-5) + 0.5 * 1e-5 / 3e-5)
    assert got["1"] == pytest.approx(1 / 3 * 1 + 2 / 3 * p3, abs=1e-15)
    # topic 2: stratum C has nothing judged (it counts with precision 1/3 above e1); R = 1
    assert got["2"] == pytest.approx(1 / 2 + (1 / 2) * (1e-5 / 3e-5), abs=1e-15)
    assert math.isnan(got["3"])  # no relevant document: undefined (the script prints 0)
    assert got["4"] == pytest.approx(1 / 5, abs=1e-15)  # fully judged: AP over R = 5
    assert values(run, qrels, "xinfAP")["3"] == 0.0


def test_infndcg_by_hand(fixture):
    run, qrels = fixture
    got = values(run, qrels, "infNDCG")
    # topic 1: A holds 1 of the 4 pooled retrieved (1 judged), B 3 (2 judged); ideal: R_1 = 3
    expected = (1 + 1.5 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert got["1"] == pytest.approx(expected, abs=1e-15)
    assert got["2"] == pytest.approx((2 / math.log2(3)) / 2, abs=1e-15)
    # the cap of the ideal list: at max_results=2 the two grade-2 documents fill ranks 1-2 and
    # the grade-1 documents still add one term at rank 3 (sample_eval.pl's loop)
    capped = values(run, qrels, "infNDCG(max_results=2)")["4"]
    assert capped == pytest.approx(2 / (2 + 2 / math.log2(3) + 1 / math.log2(4)), abs=1e-15)


def test_precision_and_counts_by_hand(fixture):
    run, qrels = fixture
    assert values(run, qrels, "iP@2")["1"] == pytest.approx((1 + 1e-5) / (1 + 3e-5) / 2, abs=1e-15)
    assert values(run, qrels, "inum_rel")[["1", "2", "3", "4"]].tolist() == [3.0, 1.0, 0.0, 5.0]
    # no relevant document: only the smoothing, 1 pooled judged document (g1): 1e-5 / (1 + 3e-5)
    assert values(run, qrels, "inum_rel_ret")["3"] == pytest.approx(1e-5 / (1 + 3e-5), abs=1e-18)


def test_max_results_and_depth_cut_the_ranking(fixture):
    run, qrels = fixture
    assert values(run, qrels, "xinfAP(max_results=3)")["1"] == pytest.approx(1 / 3, abs=1e-15)
    assert values(run, qrels, "xinfAP", depth=3)["1"] == pytest.approx(1 / 3, abs=1e-15)


def test_one_stratum_when_the_qrels_have_none(fixture):
    run, qrels = fixture
    one = qrels.assign(stratum="same")
    plain = qrels.drop(columns="stratum")
    for measure in ("xinfAP", "infNDCG", "iP@5", "inum_rel"):
        a, b = values(run, one, measure), values(run, plain, measure)
        pd.testing.assert_series_equal(a, b)


def test_primes_are_refused():
    with pytest.raises(MeasureError, match="no prime"):
        pdeval.parse_measure("xinfAP'")
    with pytest.raises(MeasureError, match="no prime"):
        pdeval.parse_measure("infNDCG", judged_only=True)
    with pytest.raises(MeasureError, match="variant"):
        pdeval.parse_measure("xinfAP(variant=other)")
    with pytest.raises(MeasureError, match="max_results"):
        pdeval.parse_measure("iP(max_results=0)@10")
    with pytest.raises(MeasureError, match="recall must be one of"):
        pdeval.parse_measure("iprec_at_recall(recall=0.15)")
    with pytest.raises(MeasureError, match="needs recall"):
        pdeval.parse_measure("iprec_at_recall")


def test_several_runs_and_qrels_variants_in_one_call(fixture):
    run, qrels = fixture
    other = run.assign(run="other", score=-run["score"])
    both = pd.concat([run, other], ignore_index=True)
    variants = pd.concat([qrels.assign(level=100), qrels.assign(level=50, stratum="one")], ignore_index=True)
    measures = ["xinfAP", "infNDCG", "iP@3"]
    together = pdeval.evaluate(both, variants, measures)
    assert set(together["level"]) == {100, 50}
    for level, frame in ((100, qrels), (50, qrels.assign(stratum="one"))):
        for name, part in (("run", run), ("other", other)):
            alone = pdeval.evaluate(part, frame, measures)
            mine = together[(together["level"] == level) & (together["run"] == name)]
            np.testing.assert_allclose(
                mine.sort_values(["query_id", "measure"])["value"].to_numpy(),
                alone.sort_values(["query_id", "measure"])["value"].to_numpy(),
                rtol=0,
                atol=0,
            )


def test_cli_reads_sampled_qrels(capsys):
    from pdeval.cli.commands import main

    main(["eval", str(FIXTURE / "qrels.sample_eval.txt"), str(FIXTURE / "run.txt"), "-m", "xinfAP", "-q"])
    lines = [line.split("\t") for line in capsys.readouterr().out.strip().splitlines()]
    by_topic = {fields[1]: float(fields[2]) for fields in lines}
    assert by_topic["2"] == pytest.approx(0.6667, abs=1e-4)


def test_cli_all_line_of_estimated_counts_is_a_sum_as_the_script_prints_it(capsys):
    from pdeval.cli.commands import main

    main(["eval", str(FIXTURE / "qrels.sample_eval.txt"), str(FIXTURE / "run.txt"),
          "-m", "inum_rel", "-m", "inum_rel_ret", "-m", "xinfAP", "-q"])
    lines = [line.split("\t") for line in capsys.readouterr().out.strip().splitlines()]
    for name in ("inum_rel", "inum_rel_ret", "xinfAP"):
        topics = [float(f[2]) for f in lines if f[0].strip() == name and f[1] != "all"]
        (total,) = [float(f[2]) for f in lines if f[0].strip() == name and f[1] == "all"]
        expected = sum(topics) if name != "xinfAP" else sum(topics) / len(topics)  # counts sum, measures average
        assert total == pytest.approx(expected, abs=1e-3 * len(topics))


@needs_perl
@pytest.mark.skipif(not COPIES.is_dir(), reason="the shared copies of sample_eval.pl are absent")
def test_fixture_equals_the_script(tmp_path, fixture):
    run, qrels = fixture
    script = script_copy(tmp_path, CLINICAL)
    theirs = run_script(script, FIXTURE / "qrels.sample_eval.txt", FIXTURE / "run.txt")
    ours = pdeval_lines(run, qrels, names_for(100, (10, 50, 100)))
    assert assert_same(ours, theirs) == 7 * 5 + 11


# ---- the real CDS 2015 runs and PM qrels against the script -------------------------------------
@pytest.fixture(scope="module")
def cds():
    if not CDS.is_dir():
        pytest.skip("the shared data ../shared/data/cds2015-sampleval is absent")
    runs = {path.name: path for path in sorted((CDS / "runs").iterdir())}
    return CDS / "qrels-sampleval-2015.txt", runs


@needs_perl
@needs_cds
@pytest.mark.parametrize(
    "copy, max_results, variant, cutoffs, args, lines",
    [
        (CLINICAL, 100, "clinical", (10, 50, 100), (), 7 * 31 + 11),
        (DEEP, 1000, "clinical", (10, 50, 1000), (), 7 * 31 + 11),
        # TRECVID's copy prints iP at 10, 100, 1000 and maxResultSize (one of them twice)
        (TRECVID, 100, "trecvid", (10, 100, 1000), ("100",), 8 * 31 + 11),
        (TRECVID, 1000, "trecvid", (10, 100, 1000), ("1000",), 8 * 31 + 11),
    ],
    ids=["clinical-100", "clinical-1000", "trecvid-100", "trecvid-1000"],
)
def test_cds2015_runs_equal_sample_eval(tmp_path, cds, copy, max_results, variant, cutoffs, args, lines):
    qrels_path, runs = cds
    qrels = pdeval.read_qrels(qrels_path)
    script = script_copy(tmp_path, copy)
    chosen = runs if variant == "clinical" else {k: runs[k] for k in ("TUW1", "TUW4")}
    compared = 0
    for name, path in chosen.items():
        theirs = run_script(script, qrels_path, path, *args)
        ours = pdeval_lines(pdeval.read_run(path), qrels, names_for(max_results, cutoffs, variant))
        compared += assert_same(ours, theirs)
    assert compared == len(chosen) * lines


@needs_perl
@needs_cds
def test_cds2015_official_numbers(tmp_path, cds):
    """The official TREC CDS 2015 means of the six runs (NIST's clinical copy at depth 100), all
    runs evaluated in one call."""
    qrels_path, runs = cds
    qrels = pdeval.read_qrels(qrels_path)
    script = script_copy(tmp_path, CLINICAL)
    run = pdeval.read_run(list(runs.values()))
    summary = pdeval.summarize(pdeval.evaluate(run, qrels, ["xinfAP(max_results=100)", "infNDCG(max_results=100)"]))
    for name, path in runs.items():
        theirs = run_script(script, qrels_path, path)
        theirs = theirs[theirs["query_id"] == "all"].set_index("measure")["value"]
        mine = summary[summary["run"] == name].set_index("measure")["value"]
        assert mine["xinfAP(max_results=100)"] == pytest.approx(theirs["infAP"], abs=1e-12)
        assert mine["infNDCG(max_results=100)"] == pytest.approx(theirs["infNDCG"], abs=1e-12)


@needs_perl
@needs_cds
@pytest.mark.parametrize(
    "mapping, gains, rel",
    [(("1=1", "2=3"), {1: 1, 2: 3}, 1), (("1=0", "2=1"), {1: 0, 2: 1}, 2)],
    ids=["gains-1-3", "grade-1-not-relevant"],
)
def test_graded_option_G(tmp_path, cds, mapping, gains, rel):
    """``-G lvl=gain`` maps levels before anything else (and turns -q off: 'all' lines only);
    a level mapped to 0 is not relevant, which is xinfAP(rel=...)."""
    qrels_path, runs = cds
    qrels = pdeval.read_qrels(qrels_path)
    script = script_copy(tmp_path, CLINICAL)
    for name in ("TUW2",):
        theirs = run_script(script, qrels_path, runs[name], "-G", *mapping, per_topic=False)
        names = names_for(100, (10, 50, 100), rel=rel)
        names["infNDCG"] = f"infNDCG(max_results=100,gains={{{','.join(f'{k}:{v}' for k, v in gains.items())}}})"
        ours = pdeval_lines(pdeval.read_run(runs[name]), qrels, names)
        assert assert_same(ours, theirs) == 7 + 11


def generated_runs(qrels: pd.DataFrame, seed: int, n_runs: int = 3) -> pd.DataFrame:
    """Runs over the qrels' documents and documents outside them, of random length, with tied
    scores (both tools break ties by doc id descending)."""
    rng = np.random.default_rng(seed)
    parts = []
    for number in range(n_runs):
        for topic, docs in qrels.groupby("query_id")["doc_id"]:
            docs = docs.to_numpy()
            picked = rng.choice(docs, size=min(len(docs), int(rng.integers(5, 300))), replace=False)
            outside = np.array([f"zz{topic}x{i}" for i in range(int(rng.integers(0, 40)))], dtype=object)
            ids = np.concatenate([picked, outside])
            score = np.round(rng.random(len(ids)) * 20) / 2  # many ties
            parts.append(pd.DataFrame({"run": f"gen{number}", "query_id": topic, "doc_id": ids, "score": score}))
    return pd.concat(parts, ignore_index=True)


@needs_perl
@needs_pm
@pytest.mark.parametrize(
    "name", ["sample-qrels-final-abstracts.2017.txt", "qrels-sample-abstracts.2018.txt", "qrels-sample-ct.2018.txt"]
)
def test_pm_qrels_with_generated_runs_equal_sample_eval(tmp_path, name):
    qrels_path = PM / name
    qrels = pdeval.read_qrels(qrels_path)
    script = script_copy(tmp_path, "sample_eval.nist-clinical.pl", source=PM)
    runs = generated_runs(qrels, seed=len(name))
    for run_name, run in runs.groupby("run"):
        path = pdeval.write_run(run, tmp_path / f"{run_name}.txt")
        path = path[0] if isinstance(path, list) else path
        theirs = run_script(script, qrels_path, path)
        ours = pdeval_lines(run, qrels, names_for(100, (10, 50, 100)))
        assert assert_same(ours, theirs) > 100


# ---- properties ---------------------------------------------------------------------------------


@st.composite
def sampled_case(draw):
    """A topic's pool in up to 3 strata with random levels, a sample of it, and a run over
    pooled and unpooled documents."""
    n = draw(st.integers(1, 25))
    levels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    strata = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    sampled = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    docs = [f"d{i:02d}" for i in range(n)]
    retrieved = draw(st.lists(st.sampled_from(docs + ["x1", "x2", "x3"]), min_size=1, max_size=n + 3, unique=True))
    scores = draw(st.lists(st.integers(0, 5), min_size=len(retrieved), max_size=len(retrieved)))
    qrels = pd.DataFrame({"query_id": "1", "doc_id": docs, "stratum": strata, "relevance": levels})
    run = pd.DataFrame({"query_id": "1", "doc_id": retrieved, "score": np.asarray(scores, dtype=float)})
    return run, qrels, np.asarray(sampled)


SAMPLED = ["xinfAP", "infNDCG", "iP@5", "inum_rel", "inum_rel_ret", "iprec_at_recall(recall=0.3)"]


@settings(max_examples=60, deadline=None)
@given(sampled_case())
def test_complete_samples_estimate_exactly_and_strata_names_do_not_matter(case):
    run, qrels, sampled = case
    complete = pdeval.evaluate(run, qrels, SAMPLED + ["AP", "NumRel", "statAP"], undefined="nan")
    got = complete.set_index("measure")["value"]
    assert got["inum_rel"] == got["NumRel"]  # every stratum judged: R̂ = R
    if got["NumRel"] > 0:
        assert abs(got["xinfAP"] - got["AP"]) <= 1e-4  # only the script's smoothing differs
        assert abs(got["statAP"] - got["AP"]) <= 1e-12  # plain qrels: a census
    sample = qrels.assign(relevance=np.where(sampled, qrels["relevance"], -1))
    renamed = sample.assign(stratum=sample["stratum"].map({"a": "z", "b": "a", "c": "m"}))
    one = pdeval.evaluate(run, sample, SAMPLED, undefined="nan").set_index("measure")["value"]
    two = pdeval.evaluate(run, renamed, SAMPLED, undefined="nan").set_index("measure")["value"]
    if half_integer_count(sample):  # the script's sum order (sorted names) rounds an exact x.5 (test below)
        one, two = one.drop("infNDCG"), two.drop("infNDCG")
    np.testing.assert_allclose(one.to_numpy(), two.reindex(one.index).to_numpy(), rtol=1e-12, atol=1e-15)


def half_integer_count(sample: pd.DataFrame) -> bool:
    """Whether the estimated number of documents of some grade, Σ_c r_cg · n_c / s_c, is exactly a
    half-integer (in exact arithmetic), where the clinical variant's int(n + 0.5) meets a float sum."""
    total = {}
    for _, part in sample.groupby("stratum"):
        judged = part[part["relevance"] >= 0]
        for grade, count in judged.loc[judged["relevance"] > 0, "relevance"].value_counts().items():
            total[grade] = total.get(grade, Fraction(0)) + Fraction(int(count) * len(part), len(judged))
    return any(value.denominator == 2 for value in total.values())


def half_integer_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hypothesis's example: 6.5 documents of grade 2 expected (4/3 + 11/6 · 2 + 6/4), a float sum
    that falls below 6.5 in one order of the strata and not in another."""
    strata = list("aacabbbbbcabbbbbbcccc")
    levels = [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 2]
    judged = [0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1]
    qrels = pd.DataFrame({"query_id": "1", "doc_id": [f"d{i:02d}" for i in range(21)], "stratum": strata,
                          "relevance": np.where(np.array(judged) == 1, levels, -1)})
    return pd.DataFrame({"query_id": "1", "doc_id": ["d03"], "score": [0.0]}), qrels


def test_a_half_integer_count_rounds_in_the_scripts_order_of_the_strata():
    run, qrels = half_integer_case()
    assert half_integer_count(qrels)
    renamed = qrels.assign(stratum=qrels["stratum"].map({"a": "z", "b": "a", "c": "m"}))
    one, two = (pdeval.evaluate(run, q, "infNDCG")["value"].item() for q in (qrels, renamed))
    assert one != two  # 6.4999... rounds to 6 in one order, 6.5 to 7 in the other


@needs_perl
@pytest.mark.skipif(not COPIES.is_dir(), reason="the shared copies of sample_eval.pl are absent")
def test_the_script_rounds_a_half_integer_count_as_pdeval_does(tmp_path):
    run, qrels = half_integer_case()
    script = script_copy(tmp_path, CLINICAL)
    (tmp_path / "run.txt").write_text("1 Q0 d03 1 0.0 r\n")
    for mapping in (None, {"a": "z", "b": "a", "c": "m"}):
        sample = qrels if mapping is None else qrels.assign(stratum=qrels["stratum"].map(mapping))
        path = tmp_path / f"qrels{mapping is None}.txt"
        path.write_text("".join(f"1 0 {d} {s} {r}\n" for d, s, r in zip(sample.doc_id, sample.stratum, sample.relevance)))
        theirs = run_script(script, path, tmp_path / "run.txt")
        ours = pdeval_lines(run.assign(run="r"), sample, {"infNDCG": "infNDCG(variant=clinical,max_results=100)"})
        assert assert_same(ours, theirs) == 2
