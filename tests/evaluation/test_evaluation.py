"""The engine: topic semantics, variants in one pass, options, frames from other tools."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import DuplicateError, MeasureError, PdevalWarning, SchemaError
from pdeval.measures import REGISTRY

# Example A of MEASURES.md 0.8 (topic q1) and Example C (topic q3)
QRELS = pd.DataFrame(
    [("q1", f"d{i}", level) for i, level in enumerate([1, 0, 1, 0, 1, 0, -1, 0, 1, 0], start=1)]
    + [("q3", "r1", 1), ("q3", "r2", 1), ("q3", "n1", 0), ("q3", "p1", -1), ("q3", "p2", -1)],
    columns=["query_id", "doc_id", "relevance"],
)
RUN = pd.DataFrame(
    [("q1", d, s) for d, s in [("d2", 9), ("d1", 8), ("u1", 7), ("d7", 6), ("d3", 5), ("d4", 5),
                                ("d5", 4), ("u2", 3), ("d6", 2), ("d8", 1)]]
    + [("q3", d, s) for d, s in [("p1", 6), ("u1", 5), ("r1", 4), ("n1", 3), ("r2", 2), ("p2", 1)]],
    columns=["query_id", "doc_id", "score"],
)


def value(result, measure, query="q1", **keys):
    rows = result[(result["measure"] == measure) & (result["query_id"] == query)]
    for key, wanted in keys.items():
        rows = rows[rows[key] == wanted]
    assert len(rows) == 1, rows
    return rows["value"].iloc[0]


def test_result_is_tidy_with_canonical_measure_names():
    result = pdeval.evaluate(RUN, QRELS, ["ap", "p@5", "NDCG'@10", "infap(c=1.5)"])
    assert list(result.columns) == ["run", "query_id", "measure", "value"]
    assert set(result["measure"]) == {"AP", "P@5", "nDCG'@10", "infAP(c=1.5)"}
    assert value(result, "AP") == pytest.approx(53 / 168, abs=1e-12)
    assert value(result, "AP", "q3") == pytest.approx(11 / 30, abs=1e-12)
    assert value(result, "P@5") == pytest.approx(1 / 5)
    # the same canonical string round-trips through the parser
    assert str(pdeval.parse_measure("nDCG'@10")) == "nDCG'@10"


def test_rank_column_is_ignored_and_ties_break_by_doc_id_descending():
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["doc10", "doc2", "doc9"], "relevance": [1, 0, 0]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["doc10", "doc2", "doc9"], "score": 1.0, "rank": [1, 2, 3]})
    # byte order: doc9 > doc2 > doc10, so doc10 is last: AP = 1/3 (MEASURES.md 0.3)
    assert value(pdeval.evaluate(run, qrels, "AP"), "AP", "q") == pytest.approx(1 / 3)


def test_float32_precision_changes_the_order_of_nearly_equal_scores():
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 0]})
    # equal as float32, different as float64: float64 puts a first, float32 ties them and b > a
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0 + 1e-12, 1.0]})
    assert value(pdeval.evaluate(run, qrels, "RR"), "RR", "q") == 1.0
    assert value(pdeval.evaluate(run, qrels, "RR", score_precision="float32"), "RR", "q") == 0.5


def test_depth_judged_only_and_prime_mean_the_same_everywhere():
    cut = pdeval.evaluate(RUN, QRELS, "AP", depth=5)
    # top 5 of Example A: d2 d1 u1 d7 d4 -> only d1 relevant at rank 2: (1/2)/4
    assert value(cut, "AP") == pytest.approx(1 / 8)
    primed = pdeval.evaluate(RUN, QRELS, ["AP'", "P'@5", "nDCG'"])
    flagged = pdeval.evaluate(RUN, QRELS, ["AP", "P@5", "nDCG"], judged_only=True)
    assert primed.equals(flagged)
    assert value(primed, "AP'") == pytest.approx(2 / 5)


def test_topics_in_both_by_default_and_every_qrels_topic_with_complete():
    run = RUN[RUN["query_id"] == "q1"]
    extra = pd.concat([run, pd.DataFrame({"query_id": ["zz"], "doc_id": ["x"], "score": [1.0]})])
    plain = pdeval.evaluate(extra, QRELS, ["AP", "NumRet"])
    assert set(plain["query_id"]) == {"q1"}  # zz is not in the qrels; q3 not in the run
    complete = pdeval.evaluate(extra, QRELS, ["AP", "NumRet"], complete=True)
    assert set(complete["query_id"]) == {"q1", "q3"}
    assert value(complete, "AP", "q3") == 0 and value(complete, "NumRet", "q3") == 0


def test_undefined_values_are_zero_or_nan():
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["e1", "e2"], "relevance": [0, 0]})  # R = 0 (D1)
    run = pd.DataFrame({"query_id": "q", "doc_id": ["e1", "u"], "score": [2.0, 1.0]})
    assert value(pdeval.evaluate(run, qrels, "AP"), "AP", "q") == 0.0
    result = pdeval.evaluate(run, qrels, ["AP", "P@1"], undefined="nan")
    assert np.isnan(value(result, "AP", "q")) and value(result, "P@1", "q") == 0.0
    with pytest.warns(PdevalWarning, match="1 undefined"):
        summary = pdeval.summarize(result)
    assert summary.set_index("measure").loc["AP", "undefined"] == 1


def test_runs_and_by_keys_are_kept_apart():
    both = pd.concat([RUN.assign(run="a", b=0.5), RUN.assign(run="a", b=0.75), RUN.assign(run="c", b=0.5)])
    result = pdeval.evaluate(both, QRELS, "AP", by="b")
    assert list(result.columns) == ["run", "b", "query_id", "measure", "value"]
    assert len(result) == 3 * 2
    with pytest.raises(DuplicateError):  # without by, run "a" repeats every document
        pdeval.evaluate(both, QRELS, "AP")


def test_every_qrels_variant_in_one_call_equals_one_call_per_variant():
    rng = np.random.default_rng(7)
    base = QRELS.copy()
    variants = []
    for level in (50, 100):
        for sample in range(3):
            keep = rng.random(len(base)) < level / 100
            variants.append(base.assign(relevance=np.where(keep, base["relevance"], -1), level=level, sample=sample))
    # a variant without topic q3 at all
    variants.append(base[base["query_id"] == "q1"].assign(level=10, sample=0))
    qrels = pd.concat(variants, ignore_index=True)
    measures = registry_examples()
    run = pd.concat([RUN.assign(run="x"), RUN.assign(run="y", score=-RUN["score"])])
    together = pdeval.evaluate(run, qrels, measures, chunk_rows=40)  # several chunks
    assert list(together.columns[:3]) == ["run", "level", "sample"]
    for (level, sample), variant in qrels.groupby(["level", "sample"]):
        alone = pdeval.evaluate(run, variant.drop(columns=["level", "sample"]), measures)
        part = together[(together["level"] == level) & (together["sample"] == sample)]
        merged = alone.merge(part, on=["run", "query_id", "measure"], suffixes=("", "_together"))
        assert len(merged) == len(alone) == len(part)
        np.testing.assert_allclose(merged["value_together"], merged["value"], rtol=0, atol=1e-12)


def registry_examples() -> list:
    """One measure string per registered measure (a cutoff where required, 0.5 for required
    parameters: subAP's p, iprec_at_recall's recall)."""
    examples = []
    for spec in REGISTRY.values():
        if spec.judgments != "relevance":  # prefs_* read a preference frame (test_preference_frames)
            continue
        text = spec.name
        if spec.required:
            text += "(" + ",".join(f"{key}=0.5" for key in spec.required) + ")"
        if spec.cutoff == "required":
            text += "@5"
        examples.append(text)
    return examples


def test_unknown_measures_and_parameters_say_what_is_known():
    with pytest.raises(MeasureError, match="Did you mean.*'Bpref'"):
        pdeval.evaluate(RUN, QRELS, "bperf")
    with pytest.raises(MeasureError, match="unknown parameter 'cc' of infAP"):
        pdeval.parse_measure("infAP(cc=2)")
    with pytest.raises(MeasureError, match="needs a cutoff"):
        pdeval.parse_measure("P")
    assert str(pdeval.parse_measure("P_10")) == "P@10"  # trec_eval names are aliases
    assert str(pdeval.parse_measure("ndcg_cut.20")) == "nDCG@20"
    assert str(pdeval.parse_measure("old_bpref")) == "Bpref(variant=legacy)"


def test_frames_from_pyterrier_ir_measures_and_ranx_are_accepted():
    expected = pdeval.evaluate(RUN, QRELS, "AP")
    pyterrier_run = RUN.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(
        query="text", rank=range(len(RUN)))
    pyterrier_qrels = QRELS.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    result = pdeval.evaluate(pyterrier_run, pyterrier_qrels, "AP")
    assert result["value"].tolist() == expected["value"].tolist()
    ir_measures_qrels = QRELS.assign(iteration="0")  # ir_measures keeps the iteration column
    assert pdeval.evaluate(RUN, ir_measures_qrels, "AP")["value"].tolist() == expected["value"].tolist()
    ranx_run = RUN.rename(columns={"query_id": "q_id"})  # ranx's to_dataframe() names
    assert pdeval.evaluate(ranx_run, QRELS, "AP")["value"].tolist() == expected["value"].tolist()
    no_topic = pd.DataFrame({"query": ["text"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(SchemaError, match="lacks column"):
        pdeval.evaluate(no_topic, QRELS, "AP")


def test_bad_frames_raise_with_the_offending_keys():
    with pytest.raises(SchemaError, match="NaN score.*doc_id='d1'"):
        pdeval.evaluate(RUN.assign(score=np.where(RUN["doc_id"] == "d1", np.nan, RUN["score"])), QRELS, "AP")
    with pytest.raises(SchemaError, match="non-numeric"):
        pdeval.evaluate(RUN.assign(score=RUN["score"].astype(str).where(RUN["doc_id"] != "d2", "high")), QRELS, "AP")
    with pytest.raises(SchemaError, match="not integers"):
        pdeval.evaluate(RUN, QRELS.assign(relevance=QRELS["relevance"] + 0.5), "AP")
    conflicting = pd.concat([QRELS, QRELS.iloc[[0]].assign(relevance=0)])
    with pytest.raises(DuplicateError, match="query_id='q1', doc_id='d1'"):
        pdeval.evaluate(RUN, conflicting, "AP")
    repeated = pd.concat([RUN, RUN.iloc[[1]].assign(score=0.5)])
    with pytest.raises(DuplicateError, match="doc_id='d1'"):
        pdeval.evaluate(repeated, QRELS, "AP")


def test_duplicate_policies_warn_with_the_count():
    repeated = pd.concat([RUN, RUN.iloc[[1]].assign(score=100.0)], ignore_index=True)
    with pytest.warns(PdevalWarning, match="1 duplicate run row"):
        first = pdeval.evaluate(repeated, QRELS, "AP", duplicates="first")
    with pytest.warns(PdevalWarning, match="1 duplicate run row"):
        highest = pdeval.evaluate(repeated, QRELS, "AP", duplicates="max")
    assert value(first, "AP") == pytest.approx(53 / 168)
    # with its score raised to 100, d1 ranks first: (1 + 2/6 + 3/7) / 4
    assert value(highest, "AP") == pytest.approx((1 + 2 / 6 + 3 / 7) / 4)


def test_summarize_long_and_wide():
    both = pd.concat([RUN.assign(run="a"), RUN.assign(run="b", score=-RUN["score"])])
    result = pdeval.evaluate(both, QRELS, ["AP", "P@5"])
    summary = pdeval.summarize(result)
    assert list(summary.columns) == ["run", "measure", "value", "topics", "undefined"]
    expected = result.groupby(["run", "measure"])["value"].mean()
    assert np.allclose(summary.set_index(["run", "measure"])["value"].sort_index(), expected.sort_index())
    wide = result.ir.summarize(wide=True)
    assert list(wide.columns) == ["run", "AP", "P@5"]


def test_accessor_dispatches_and_names_the_wrong_frame_kind():
    result = RUN.ir.evaluate(QRELS, "AP")
    assert result.equals(pdeval.evaluate(RUN, QRELS, "AP"))
    assert RUN.ir.kind == "run" and QRELS.ir.kind == "qrels" and result.ir.kind == "result"
    with pytest.raises(SchemaError, match="needs a run frame.*this is a qrels frame"):
        QRELS.ir.evaluate(QRELS, "AP")
    with pytest.raises(SchemaError, match="needs a result frame.*this is a run frame"):
        RUN.ir.summarize()
    ranked = RUN.ir.rank_run()
    assert ranked.loc[ranked["query_id"] == "q1", "doc_id"].tolist()[4:6] == ["d4", "d3"]


def test_empty_frames_are_refused_and_an_empty_result_summarizes():
    with pytest.raises(SchemaError, match="the run frame is empty"):
        pdeval.evaluate(RUN.iloc[:0], QRELS, "AP")
    with pytest.raises(SchemaError, match="the qrels frame is empty"):
        pdeval.evaluate(RUN, QRELS.iloc[:0], "AP")
    result = pd.DataFrame({"run": [], "query_id": [], "measure": [], "value": []})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pdeval.summarize(result).empty


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_judged_rows_only_layout_gives_the_values_of_whole_lists(seed):
    """The engine leaves rows no qrels variant holds out for the measures declared sparse;
    every measure (plain, primed, cut with depth=) must give what whole lists give."""
    rng = np.random.default_rng(seed)
    topics, docs = [f"t{i}" for i in range(6)], [f"d{i:03d}" for i in range(120)]
    run = pd.DataFrame(
        [(f"r{r}", t, d, float(rng.integers(0, 15))) for r in range(3) for t in topics
         for d in rng.choice(docs, size=int(rng.integers(1, 60)), replace=False)],
        columns=["run", "query_id", "doc_id", "score"],
    )
    judged = [(t, d) for t in topics[:-1] for d in rng.choice(docs, size=40, replace=False)]
    base = pd.DataFrame(judged, columns=["query_id", "doc_id"]).assign(
        relevance=rng.choice([-1, 0, 0, 1, 2], size=len(judged)))
    qrels = pd.concat(
        [base.assign(level=level, sample=0, relevance=np.where(rng.random(len(base)) < level / 100, base["relevance"], -1))
         for level in (30, 100)] + [base.sample(frac=0.5, random_state=seed).assign(level=50, sample=0),
                                    base.assign(relevance=base["relevance"].clip(lower=0), level=70, sample=0)],
        ignore_index=True,
    )
    measures = registry_examples()
    measures += [
        m + "'" if "@" not in m and "(" not in m else m
        for m in measures
        if m != "NumRet" and not pdeval.parse_measure(m).spec.no_prime  # measures that refuse primes
    ]
    measures += ["AP(depth=7)", "Bpref(depth=5)", "P'@5", "Q(beta=2)", "nDCG(dcg=sakai,l=5)", "infAP(pool_aware=false)"]
    for complete, chunk_rows in ((False, 8_000_000), (True, 8_000_000), (False, 1)):  # 1: a variant per chunk
        options = dict(complete=complete, undefined="nan", chunk_rows=chunk_rows)
        sparse = pdeval.evaluate(run, qrels, measures, **options)
        whole = pdeval.evaluate(run, qrels, measures, sparse=False, **options)
        pd.testing.assert_frame_equal(sparse, whole, check_exact=False, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_run_ranked_in_parallel_parts_gives_the_values_of_one_piece(seed, monkeypatch):
    """Large runs are ranked in parts of whole systems, one thread each: the parts must give
    exactly what one piece gives — with topics absent from the qrels, tied scores, duplicates
    under every policy, by= keys, depth= and tie-averaging measures — and systems split
    over several blocks of rows must be ranked in one piece."""
    import pdeval.engine.ranked as engine
    import pdeval.engine.ranking
    import pdeval.common.threads

    rng = np.random.default_rng(seed)
    topics, docs = [f"t{i}" for i in range(7)], [f"doc-{i:04d}-{'x' * (i % 30)}" for i in range(300)]
    rows = []
    for r in range(7):
        for t in topics:
            chosen = rng.choice(docs, size=int(rng.integers(1, 80)), replace=False)
            chosen = np.concatenate([chosen, rng.choice(chosen, size=int(rng.integers(0, 3)))])  # duplicates
            rows += [(f"r{(3 * r) % 7}", t, d, float(rng.integers(0, 8)), r % 2) for d in chosen]  # not in name order
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score", "half"])
    run = run.astype({"run": "str", "query_id": "str", "doc_id": "str"})
    judged = [(t, d) for t in topics[:-2] for d in rng.choice(docs, size=60, replace=False)]  # two topics unjudged
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id"]).assign(
        relevance=rng.choice([-1, 0, 1, 2], size=len(judged)))
    measures = ["AP", "P@10", "nDCG", "Bpref", "infAP", "RBP(p=0.8,ties=mean)", "AP(depth=5)", "NumRet", "judged@10"]

    def evaluate(threads, part_rows=len(run) // 3 + 1, **options):  # three parts by default
        monkeypatch.setattr(pdeval.common.threads, "THREADS", threads)
        monkeypatch.setattr(engine, "_PART_ROWS", part_rows)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = pdeval.evaluate(run, qrels, measures, **options)
        return result, sorted(str(w.message) for w in caught)

    for options in (dict(duplicates="first"), dict(duplicates="max"), dict(duplicates="first", by=["half"]),
                    dict(duplicates="max", depth=20)):
        whole, whole_warnings = evaluate(1, part_rows=len(run), **options)  # one piece
        parts, parts_warnings = evaluate(3, **options)
        pd.testing.assert_frame_equal(parts, whole)
        assert parts_warnings == whole_warnings  # one warning with the count of all parts
    with pytest.raises(DuplicateError) as one_piece:
        evaluate(1, part_rows=len(run))
    with pytest.raises(DuplicateError) as in_parts:
        evaluate(3)
    assert str(in_parts.value) == str(one_piece.value)
    # more parts than threads (a few at a time), and lists split over blocks: one piece
    many, _ = evaluate(2, part_rows=100, duplicates="first")
    pd.testing.assert_frame_equal(many, evaluate(1, part_rows=len(run), duplicates="first")[0])
    shuffled = run.sample(frac=1, random_state=seed).reset_index(drop=True)
    assert pdeval.engine.ranking.row_blocks(engine.encode(shuffled["query_id"])[0], 3) == [(0, len(shuffled))]
    assert len(pdeval.engine.ranking.row_blocks(engine.encode(run["run"])[0], 3)) == 3
    expected, _ = evaluate(1, part_rows=len(run), duplicates="max")  # ("max": the result is that of any row order)
    monkeypatch.setattr(engine, "_PART_ROWS", 100)
    pd.testing.assert_frame_equal(pdeval.evaluate(shuffled, qrels, measures, duplicates="max"), expected)
