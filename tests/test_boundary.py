"""The boundary: every awkward or bad input to the API is read right, or refused with a precise
message, or read under a documented policy with a counted warning — never a silent wrong number.

The catalogue below is one case per input. Each case either

* ``raises``: asserts the pdeval error type and that the message names the column, rows, keys
  or parameter at fault; or
* ``returns``: asserts the per-topic AP values against the hand-computed ones of the clean
  frames (``HAND``, worked out below) and that exactly the expected warnings (type and
  count in the message) were issued, and no other pdeval warning.

The worked example: topic 1 ranks a (relevant), b (nonrelevant), c (relevant, level 2): R = 2,
AP = (1/1 + 2/3) / 2 = 5/6; topic 2 ranks e (nonrelevant), d (relevant): AP = (1/2) / 1 = 1/2.
"""

from __future__ import annotations

import re
import warnings
from typing import Callable, Optional

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import (
    ColumnWarning,
    DuplicateError,
    IdWarning,
    MeasureError,
    OverlapError,
    OverlapWarning,
    PdevalError,
    PdevalWarning,
    SchemaError,
)

QRELS = pd.DataFrame(
    {"query_id": ["1", "1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "x", "d", "e"],
     "relevance": [1, 0, 2, -1, 1, 0]}
)
RUN = pd.DataFrame(
    {"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "e", "d"], "score": [3.0, 2.0, 1.0, 2.0, 1.0]}
)
HAND = {"1": 5 / 6, "2": 1 / 2}


def ap(result: pd.DataFrame, **keys) -> dict:
    """Per-topic AP of a result frame (rows matching ``keys``)."""
    rows = result[result["measure"] == "AP"]
    for key, wanted in keys.items():
        rows = rows[rows[key] == wanted]
    return {str(q): v for q, v in zip(rows["query_id"], rows["value"])}


def evaluate(run=RUN, qrels=QRELS, measures="AP", **options):
    return pdeval.evaluate(run, qrels, measures, **options)


def _with(frame: pd.DataFrame, **columns) -> pd.DataFrame:
    return frame.assign(**columns)


# ---- cases ------------------------------------------------------------------------------------
class Case:
    """One input: ``call`` runs it; either ``error`` (type, regex) or ``expected`` (a check of
    the returned value) with ``warns`` (type, regex) pairs that must all be issued."""

    def __init__(self, call: Callable, *, error=None, expected: Optional[Callable] = None, warns=()):
        self.call, self.error, self.expected, self.warns = call, error, expected, list(warns)


def equals_hand(result) -> bool:
    return ap(result) == pytest.approx(HAND, abs=1e-12)


CASES = {}


def case(name: str, *args, **kwargs) -> None:
    assert name not in CASES
    CASES[name] = Case(*args, **kwargs)


# column names and aliases: precedence, never column order
PYTERRIER = RUN.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(
    docid=[17, 4, 99, 5, 17], rank=[0, 1, 2, 0, 1], query=["text"] * 5
)[["qid", "docid", "docno", "rank", "score", "query"]]
case("pyterrier transform frame uses docno, not Terrier's docid",
     lambda: evaluate(PYTERRIER), expected=equals_hand)
case("pyterrier columns in another order give the same",
     lambda: evaluate(PYTERRIER[["score", "docid", "query", "rank", "docno", "qid"]]), expected=equals_hand)
case("docno beats docid whatever comes first",
     lambda: evaluate(PYTERRIER.assign(docid=["c", "b", "a", "d", "e"])[["docid", "docno", "qid", "score"]]),
     expected=equals_hand)
case("docid alone is the document id",
     lambda: evaluate(RUN.rename(columns={"doc_id": "docid"})), expected=equals_hand)
case("qid beats topic",
     lambda: evaluate(RUN.rename(columns={"query_id": "qid"}).assign(topic="9")), expected=equals_hand)
case("ranx q_id is query_id",
     lambda: evaluate(RUN.rename(columns={"query_id": "q_id"})), expected=equals_hand)
case("query_id beats q_id",
     lambda: evaluate(RUN.assign(q_id="9")), expected=equals_hand)
case("relevance beats label",
     lambda: evaluate(qrels=QRELS.assign(label=5)), expected=equals_hand)
case("rel beats label (PyTerrier qrels with a stray rel)",
     lambda: evaluate(qrels=QRELS.rename(columns={"relevance": "rel"}).assign(label=0)), expected=equals_hand)
case("system beats tag",
     lambda: evaluate(RUN.assign(system="s", tag=["t1", "t2", "t3", "t4", "t5"])),
     expected=lambda r: equals_hand(r) and set(r["run"]) == {"s"})
case("a repeated alias column cannot be settled",
     lambda: evaluate(pd.concat([RUN.rename(columns={"query_id": "qid"}), RUN[["query_id"]].rename(columns={"query_id": "qid"})], axis=1)),
     error=(SchemaError, r"several columns named \['qid'\]"))
case("no document column",
     lambda: evaluate(RUN.drop(columns="doc_id")), error=(SchemaError, r"lacks column\(s\) \['doc_id'\]"))
case("PyTerrier query text is not a topic id",
     lambda: evaluate(RUN.drop(columns="query_id").assign(query="text")),
     error=(SchemaError, r"lacks column\(s\) \['query_id'\]"))
case("a dict is not a frame",
     lambda: evaluate(RUN.to_dict()), error=(SchemaError, r"evaluate\(\): run=.* is not a run frame .*: it is a dict"))
case("ranx qrels call the relevance score",
     lambda: evaluate(qrels=QRELS.rename(columns={"query_id": "q_id", "relevance": "score"})),
     error=(SchemaError, r"score column but no relevance column.*rename it to 'relevance'"))
case("a run passed as the qrels",
     lambda: evaluate(qrels=RUN), error=(SchemaError, r"is it a run\?"))
case("no relevance column",
     lambda: evaluate(qrels=QRELS.drop(columns="relevance")), error=(SchemaError, r"lacks column\(s\) \['relevance'\]"))

# ids
case("integral float topic ids match string ones",
     lambda: evaluate(RUN.assign(query_id=RUN["query_id"].astype(float))), expected=equals_hand)
case("integer ids on both sides",
     lambda: evaluate(RUN.assign(query_id=RUN["query_id"].astype(int)), QRELS.assign(query_id=QRELS["query_id"].astype(int))),
     expected=equals_hand)
case("mixed object ids (int, str, float)",
     lambda: evaluate(RUN.assign(query_id=pd.Series([1, "1", 1.0, 2, 2.0], dtype=object))), expected=equals_hand)
case("categorical float ids",
     lambda: evaluate(RUN.assign(query_id=RUN["query_id"].astype(float).astype("category"))), expected=equals_hand)
case("categorical string ids",
     lambda: evaluate(RUN.assign(doc_id=RUN["doc_id"].astype("category"))), expected=equals_hand)
case("float ids with NaN name the rows",
     lambda: evaluate(RUN.assign(query_id=[1.0, 1.0, np.nan, 2.0, 2.0])),
     error=(SchemaError, r"missing query_id values in 1 row\(s\), index 2"))
case("None doc id in an object column names the rows",
     lambda: evaluate(RUN.assign(doc_id=pd.Series(["a", None, "c", "e", None], dtype=object))),
     error=(SchemaError, r"run frame has missing doc_id values in 2 row\(s\), index 1, 4"))
case("NA in an Arrow string id column",
     lambda: evaluate(qrels=QRELS.assign(doc_id=pd.array(["a", "b", None, "x", "d", "e"], dtype="str"))),
     error=(SchemaError, r"qrels frame has missing doc_id values in 1 row\(s\), index 2"))
case("missing run name",
     lambda: evaluate(RUN.assign(run=["r", "r", None, "r", "r"])),
     error=(SchemaError, r"missing run values in 1 row\(s\), index 2"))
case("empty doc id",
     lambda: evaluate(RUN.assign(doc_id=["a", "", "c", "e", "d"])),
     error=(SchemaError, r"empty doc_id values in 1 row\(s\), index 1"))
case("whitespace-only doc id",
     lambda: evaluate(RUN.assign(doc_id=["a", "  ", "c", "e", "d"])),
     error=(SchemaError, r"empty doc_id values in 1 row\(s\), index 1"))
case("padded doc ids are stripped with a count",
     lambda: evaluate(RUN.assign(doc_id=[" a", "b", "c\t", "e", "d "])),
     expected=equals_hand, warns=[(IdWarning, r"doc_id ids have whitespace around them in 3 row\(s\), index 0, 2, 4")])
case("padded qrels topics are stripped with a count",
     lambda: evaluate(qrels=QRELS.assign(query_id=["1 ", "1", "1", "1", " 2", "2"])),
     expected=equals_hand, warns=[(IdWarning, r"qrels frame's query_id ids have whitespace around them in 2 row\(s\)")])
case("padded categorical ids",
     lambda: evaluate(RUN.assign(doc_id=pd.Categorical([" a", "b", "c", "e", "d"]))),
     expected=equals_hand, warns=[(IdWarning, r"1 row\(s\), index 0")])
case("'051' vs '51': leading zeros diagnosed",
     lambda: evaluate(RUN.assign(query_id=["01", "01", "01", "02", "02"])),
     error=(OverlapError, r"share no topic.*Run topics: '01', '02'; qrels topics: '1', '2'.*leading zeros"))
case("'1.0' strings vs '1': number formatting diagnosed",
     lambda: evaluate(RUN.assign(query_id=["1.0", "1.0", "1.0", "2.0", "2.0"])),
     error=(OverlapError, r"'1.0', '2.0'.*number formatting"))
case("letter case diagnosed",
     lambda: evaluate(RUN.assign(query_id=["Q1"] * 3 + ["Q2"] * 2), QRELS.assign(query_id=["q1"] * 4 + ["q2"] * 2)),
     error=(OverlapError, r"letter case"))
case("prefix diagnosed",
     lambda: evaluate(RUN.assign(query_id=["q1"] * 3 + ["q2"] * 2)),
     error=(OverlapError, r"'q1', 'q2'.*prefix or suffix"))
case("qrels of another collection",
     lambda: evaluate(RUN.assign(query_id=["x"] * 3 + ["y"] * 2)),
     error=(OverlapError, r"another collection"))

# topic overlap
case("a run-only topic is counted",
     lambda: evaluate(pd.concat([RUN, RUN.iloc[[0]].assign(query_id="7")])),
     expected=equals_hand, warns=[(OverlapWarning, r"1 run topic\(s\) are not in the qrels.*'7'")])
case("a qrels-only topic is counted",
     lambda: evaluate(qrels=pd.concat([QRELS, QRELS.iloc[[0]].assign(query_id="8")])),
     expected=equals_hand, warns=[(OverlapWarning, r"1 qrels topic\(s\) are in no run and are not evaluated \('8'\)")])
case("complete=True scores the qrels-only topic 0 and says so",
     lambda: evaluate(qrels=pd.concat([QRELS, QRELS.iloc[[0]].assign(query_id="8")]), complete=True),
     expected=lambda r: ap(r) == pytest.approx({**HAND, "8": 0.0}),
     warns=[(OverlapWarning, r"1 qrels topic\(s\).*evaluated as empty rankings \(complete=True\)")])
case("a run lacking a topic another run has",
     lambda: evaluate(pd.concat([RUN.assign(run="full"), RUN.iloc[:3].assign(run="half")])),
     expected=lambda r: ap(r, run="full") == pytest.approx(HAND) and ap(r, run="half") == pytest.approx({"1": 5 / 6}),
     warns=[(OverlapWarning, r"1 of 2 run\(s\) lack some of the 2 evaluated topics")])
case("a run with no judged document",
     lambda: evaluate(pd.concat([RUN.assign(run="good"), RUN.assign(run="bad", doc_id=["u1", "u2", "u3", "u4", "u5"])])),
     expected=lambda r: ap(r, run="bad") == {"1": 0.0, "2": 0.0} and ap(r, run="good") == pytest.approx(HAND),
     warns=[(OverlapWarning, r"1 run\(s\) have no judged document in its rankings \('bad'\)")])
case("no judged document in the top depth",
     lambda: evaluate(RUN.assign(score=[1.0, 2.0, 0.5, 3.0, 0.0], doc_id=["a", "u", "c", "v", "d"]), depth=1),
     expected=lambda r: ap(r) == {"1": 0.0, "2": 0.0},
     warns=[(OverlapWarning, r"have no judged document in its top 1")])

# extra qrels columns
case("an undeclared qrels column is ignored with a warning naming it",
     lambda: evaluate(qrels=QRELS.assign(assessor=[1, 2, 1, 2, 1, 2])),
     expected=lambda r: equals_hand(r) and "assessor" not in r.columns,
     warns=[(ColumnWarning, r"\['assessor'\] are ignored.*variants=\['assessor'\]")])
case("two undeclared columns are named",
     lambda: evaluate(qrels=QRELS.assign(unused=0, note="x")),
     expected=equals_hand, warns=[(ColumnWarning, r"\['unused', 'note'\]")])
case("variants= makes a column a variant key",
     lambda: evaluate(qrels=pd.concat([QRELS.assign(assessor="A"), QRELS.assign(assessor="B", relevance=0)]),
                      variants=["assessor"]),
     expected=lambda r: ap(r, assessor="A") == pytest.approx(HAND) and ap(r, assessor="B") == {"1": 0.0, "2": 0.0})
case("variants= as a string",
     lambda: evaluate(qrels=QRELS.assign(assessor="A"), variants="assessor"),
     expected=lambda r: ap(r, assessor="A") == pytest.approx(HAND))
case("variants= naming an absent column",
     lambda: evaluate(variants=["assessor"]), error=(SchemaError, r"variants=\['assessor'\] names column\(s\) \['assessor'\]"))
case("variants= naming a required column",
     lambda: evaluate(variants=["relevance"]), error=(SchemaError, r"'relevance' cannot be a variant key"))
case("variants= naming a reserved column",
     lambda: evaluate(qrels=QRELS.assign(source="nist"), variants=["source"]),
     error=(SchemaError, r"'source' cannot be a variant key.*reserved"))
case("reserved information columns are kept silently and split nothing",
     lambda: evaluate(qrels=QRELS.assign(iteration="0", stratum=1, inclusion_prob=0.5, source="nist")),
     expected=lambda r: equals_hand(r) and list(r.columns) == ["run", "query_id", "measure", "value"])
case("level and sample are variant keys pdeval produces",
     lambda: evaluate(qrels=pd.concat([QRELS.assign(level=100, sample=0), QRELS.assign(level=50, sample=0, relevance=0)])),
     expected=lambda r: ap(r, level=100) == pytest.approx(HAND) and ap(r, level=50) == {"1": 0.0, "2": 0.0})
case("depth is a variant key pdeval produces",
     lambda: evaluate(qrels=QRELS.assign(depth=10)),
     expected=lambda r: ap(r, depth=10) == pytest.approx(HAND))

# values out of range
case("relevance 2**31 does not wrap",
     lambda: evaluate(qrels=QRELS.assign(relevance=[2**31, 0, 2**31, -1, 2**31, 0]), measures=["AP", "NumRel"]),
     expected=equals_hand)
case("relevance 2**40 is a level like any other",
     lambda: evaluate(qrels=QRELS.assign(relevance=[1, 0, 2**40, -1, 1, 0]), measures=["AP", "nDCG(gains={1:1})"]),
     expected=equals_hand)
case("relevance beyond int64 (uint64)",
     lambda: evaluate(qrels=QRELS.assign(relevance=np.array([2**64 - 1, 0, 1, 0, 1, 0], dtype=np.uint64))),
     error=(SchemaError, r"not integers below 2\*\*53.*doc_id='a'"))
case("relevance inf",
     lambda: evaluate(qrels=QRELS.assign(relevance=[1.0, np.inf, 1.0, -1.0, 1.0, 0.0])),
     error=(SchemaError, r"1 NaN or infinite relevance value\(s\).*doc_id='b'.*index 1"))
case("relevance NaN",
     lambda: evaluate(qrels=QRELS.assign(relevance=[1.0, np.nan, 1.0, -1.0, 1.0, 0.0])),
     error=(SchemaError, r"NaN or infinite relevance.*query_id='1', doc_id='b'"))
case("relevance 1.5",
     lambda: evaluate(qrels=QRELS.assign(relevance=[1.5, 0, 1, -1, 1, 0])),
     error=(SchemaError, r"not integers.*doc_id='a', relevance=1.5"))
case("relevance text",
     lambda: evaluate(qrels=QRELS.assign(relevance=["1", "high", "1", "-1", "1", "0"])),
     error=(SchemaError, r"non-numeric value\(s\) in 'relevance'.*'high'"))
case("relevance as numeric strings is read",
     lambda: evaluate(qrels=QRELS.assign(relevance=QRELS["relevance"].astype(str))), expected=equals_hand)
case("NaN score",
     lambda: evaluate(RUN.assign(score=[3.0, np.nan, 1.0, 2.0, 1.0])),
     error=(SchemaError, r"1 NaN score value\(s\).*doc_id='b'.*index 1"))
case("text score",
     lambda: evaluate(RUN.assign(score=["3", "2", "high", "2", "1"])),
     error=(SchemaError, r"non-numeric value\(s\) in 'score'.*doc_id='c'"))
case("infinite scores are ordered as trec_eval orders them",
     lambda: evaluate(RUN.assign(score=[np.inf, 2.0, -np.inf, np.inf, -np.inf])), expected=equals_hand)
case("duplicate documents name the keys",
     lambda: evaluate(pd.concat([RUN, RUN.iloc[[1]]])), error=(DuplicateError, r"doc_id='b'"))
case("empty run",
     lambda: evaluate(RUN.iloc[:0]), error=(SchemaError, r"the run frame is empty"))
case("empty qrels",
     lambda: evaluate(qrels=QRELS.iloc[:0]), error=(SchemaError, r"the qrels frame is empty"))
case("empty qrels with variant columns",
     lambda: evaluate(qrels=QRELS.iloc[:0].assign(level=pd.Series(dtype=int), sample=pd.Series(dtype=int))),
     error=(SchemaError, r"the qrels frame is empty.*'level', 'sample'"))

# options of evaluate
case("depth=2.5", lambda: evaluate(depth=2.5), error=(PdevalError, r"evaluate\(\): depth=2\.5 is not None or an integer >= 1"))
case("depth=0", lambda: evaluate(depth=0), error=(PdevalError, r"depth=0 is not None or an integer >= 1"))
case("depth=True", lambda: evaluate(depth=True), error=(PdevalError, r"depth=True is not None or an integer >= 1"))
case("depth as a numpy integer", lambda: evaluate(depth=np.int64(2)), expected=lambda r: ap(r) == pytest.approx({"1": 0.5, "2": 0.5}))
case("score_precision='float16'", lambda: evaluate(score_precision="float16"),
     error=(PdevalError, r"score_precision='float16' is not one of 'float64', 'float32'"))
case("undefined='skip'", lambda: evaluate(undefined="skip"), error=(PdevalError, r"undefined='skip' is not one of 'zero', 'nan'"))
case("duplicates='raise' names the new word", lambda: evaluate(duplicates="raise"),
     error=(PdevalError, r"duplicates='raise' .*'raise' is now called 'error'"))
case("duplicates='last'", lambda: evaluate(duplicates="last"), error=(PdevalError, r"duplicates='last' is not one of 'error', 'first', 'max'"))
case("complete='yes'", lambda: evaluate(complete="yes"), error=(PdevalError, r"complete='yes' is not True or False"))
case("chunk_rows=0", lambda: evaluate(chunk_rows=0), error=(PdevalError, r"chunk_rows=0 is not an integer >= 1"))
case("by= a missing column", lambda: evaluate(by="b"), error=(SchemaError, r"lacks column\(s\) \['b'\]"))
case("rel=2.5", lambda: evaluate(rel=2.5), error=(PdevalError, r"rel=2\.5 is not None or an integer >= 0"))
case("rel=True", lambda: evaluate(rel=True), error=(PdevalError, r"rel=True is not None or an integer >= 0"))
case("gains with a text gain", lambda: evaluate(measures="nDCG", gains={1: "x"}),
     error=(PdevalError, r"gains=\{1: 'x'\} is not None or a mapping of an integer to a finite number: its value 'x' is not a finite number"))

# measure parameters, checked when the string is parsed
for text, pattern in [
    ("infAP(c=abc)", r"'infAP\(c=abc\)': c must be a finite number, got 'abc'"),
    ("infAP(c=)", r"c must be a finite number, got '' \(empty\)"),
    ("infAP(eps=abc)", r"eps must be a finite number, got 'abc'"),
    ("infAP(c=inf)", r"c must be a finite number, got 'inf'"),
    ("infAP(c=0)", r"c and eps must be > 0"),
    ("infAP(pool_aware=maybe)", r"pool_aware must be true or false"),
    ("infAP(k=2)", r"unknown parameter 'k' of infAP; it takes \['c', 'depth', 'eps', 'pool_aware', 'rel'\]"),
    ("infAP(c=1,c=2)", r"parameter 'c' is given twice"),
    ("nDCG(base=1)", r"base=1.0 applies to dcg=sakai only"),
    ("nDCG(l=10)", r"l=10 applies to dcg=sakai only"),
    ("nDCG(dcg=sakai,base=1)", r"base must be > 1"),
    ("nDCG(dcg=sakai,l=2.5)", r"l must be an integer, got '2.5'"),
    ("nDCG(dcg=foo)", r"dcg must be one of 'trec', 'sakai', got 'foo'"),
    ("npref(n=2.5)", r"n must be an integer, got '2.5'"),
    ("AP(rel=-1)", r"rel must be an integer >= 0"),
    ("AP(depth=0)", r"depth must be a positive integer, got '0'"),
    ("AP(depth=abc)", r"depth must be a positive integer, got 'abc'"),
    ("subAP(p=abc)", r"p must be a number in \(0, 1\] or 'auto'"),
    ("Q(beta=-1)", r"beta must be a number >= 0"),
    ("nDCG(gains={1:x})", r"gains must be a mapping of relevance level to gain"),
    ("P@0", r"cutoff must be a positive integer"),
    ("Bperf", r"unknown measure 'Bperf'.*Did you mean: 'Bpref'"),
]:
    case(f"measure {text}", (lambda t: lambda: pdeval.parse_measure(t))(text), error=(MeasureError, pattern))
case("nDCG(base=2) with dcg=trec is the default, not a change",
     lambda: pdeval.parse_measure("nDCG(base=2)"), expected=lambda m: str(m) == "nDCG")


# bad arguments of the functions that follow evaluate
def _result():
    runs = pd.concat([RUN.assign(run=f"r{i}", score=RUN["score"] * (i + 1) + np.arange(5) * i) for i in range(3)])
    return evaluate(runs)


for name, call, pattern in [
    ("discriminative_power seed='x'", lambda: pdeval.discriminative_power(_result(), n_resamples=10, seed="x", progress=False), r"discriminative_power\(\): seed='x' is not None or an integer >= 0"),
    ("discriminative_power n_resamples='x'", lambda: pdeval.discriminative_power(_result(), n_resamples="x", progress=False), r"discriminative_power\(\): n_resamples='x' is not an integer >= 1"),
    ("discriminative_power alpha=2", lambda: pdeval.discriminative_power(_result(), n_resamples=10, alpha=2, progress=False), r"discriminative_power\(\): alpha=2 is not a finite number > 0 and < 1"),
    ("compare seed=-1", lambda: pdeval.compare(_result(), test="permutation", seed=-1), r"compare\(\): seed=-1 is not None or an integer >= 0"),
    ("compare n_resamples=1.5", lambda: pdeval.compare(_result(), test="permutation", n_resamples=1.5), r"compare\(\): n_resamples=1.5 is not None or an integer >= 1"),
    ("compare alpha='x'", lambda: pdeval.compare(_result(), alpha="x"), r"compare\(\): alpha='x' is not a finite number > 0 and < 1"),
    ("swap_rates n_resamples=2.5", lambda: pdeval.swap_rates(_result(), measures="AP", c=1, n_resamples=2.5, progress=False), r"swap_rates\(\): n_resamples=2.5 is not an integer >= 1 or one of 'all'"),
    ("swap_rates seed='x'", lambda: pdeval.swap_rates(_result(), measures="AP", c=1, n_resamples=5, seed="x", progress=False), r"swap_rates\(\): seed='x' is not None or an integer >= 0"),
    ("reduce seed='x'", lambda: pdeval.reduce(QRELS, [50], seed="x"), r"reduce\(\): seed='x' is not None or an integer >= 0"),
    ("reduce samples=2.5", lambda: pdeval.reduce(QRELS, [50], samples=2.5), r"reduce\(\): samples=2.5 is not an integer >= 1"),
    ("reduce level 0", lambda: pdeval.reduce(QRELS, [0]), r"reduce\(\): levels=\[0\] is not .*item 0 \(0\) is not a finite number > 0 and <= 100"),
    ("pool pool_depth=2.5", lambda: pdeval.pool(RUN, pool_depth=2.5, qrels=QRELS), r"pool\(\): pool_depth=2.5 is not None or an integer >= 1"),
    ("pool positional depth", lambda: pdeval.pool(RUN, 2, qrels=QRELS), r"pool\(\): too many positional arguments; pool_depth, pool_depths"),
    ("mixed_pool seed='x'", lambda: pdeval.mixed_pool(RUN, QRELS, pool_depths=[1], seed="x"), r"mixed_pool\(\): seed='x' is not None or an integer >= 0"),
]:
    case(name, call, error=(PdevalError, pattern))


# ---- the test ---------------------------------------------------------------------------------
def test_the_catalogue_is_large_enough():
    assert len(CASES) >= 55


@pytest.mark.parametrize("name", list(CASES))
def test_boundary_case(name):
    item = CASES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if item.error is not None:
            kind, pattern = item.error
            with pytest.raises(kind) as raised:
                item.call()
            assert re.search(pattern, str(raised.value), re.S), f"message {str(raised.value)!r} lacks {pattern!r}"
            return
        result = item.call()
    assert item.expected(result), f"wrong result:\n{result}"
    issued = [w for w in caught if issubclass(w.category, PdevalWarning)]
    for kind, pattern in item.warns:
        found = [w for w in issued if issubclass(w.category, kind) and re.search(pattern, str(w.message), re.S)]
        assert len(found) == 1, f"expected one {kind.__name__} matching {pattern!r}, got {[str(w.message) for w in issued]}"
    assert len(issued) == len(item.warns), f"unexpected warnings: {[str(w.message) for w in issued]}"


def test_warnings_are_silenced_by_their_class():
    """The documented way: a warnings filter on the class (or on PdevalWarning for all)."""
    messy = pd.concat([RUN, RUN.iloc[[0]].assign(query_id="7")]).assign(doc_id=lambda f: f["doc_id"] + " ")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", OverlapWarning)
        warnings.simplefilter("ignore", IdWarning)
        assert ap(evaluate(messy)) == pytest.approx(HAND)
    assert not [w for w in caught if issubclass(w.category, PdevalWarning)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PdevalWarning)
        with pytest.raises(IdWarning):
            evaluate(messy)


def test_a_warning_points_at_the_callers_line():
    with pytest.warns(OverlapWarning) as record:
        evaluate(pd.concat([RUN, RUN.iloc[[0]].assign(query_id="7")]))
    assert record[0].filename == __file__


def test_a_warning_is_shown_once_per_line_in_a_loop(capsys):
    """Under Python's default filters, a loop over evaluate does not flood the output."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import pandas as pd, pdeval\n"
        "run = pd.DataFrame({'query_id': ['1', '9'], 'doc_id': ['a', 'a'], 'score': [1.0, 1.0]})\n"
        "qrels = pd.DataFrame({'query_id': ['1'], 'doc_id': ['a'], 'relevance': [1], 'note': ['x']})\n"
        "for _ in range(50):\n"
        "    pdeval.evaluate(run, qrels, 'AP')\n"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         env={"PYTHONPATH": str(root), "PATH": ""})
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("OverlapWarning") == 1 and out.stderr.count("ColumnWarning") == 1, out.stderr


def test_dask_frames_get_the_same_qrels_columns_and_variants():
    dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
    qrels = pd.concat([QRELS.assign(assessor="A"), QRELS.assign(assessor="B", relevance=0)])
    run = dd.from_pandas(RUN, npartitions=2)
    with pytest.warns(ColumnWarning, match=r"\['assessor'\] are ignored"):
        ignored = pdeval.evaluate(run, QRELS.assign(assessor="A"), "AP").compute(scheduler="sync")
    assert ap(ignored) == pytest.approx(HAND)
    split = pdeval.evaluate(run, qrels, "AP", variants=["assessor"]).compute(scheduler="sync")
    assert ap(split, assessor="A") == pytest.approx(HAND) and ap(split, assessor="B") == {"1": 0.0, "2": 0.0}
    with pytest.raises(SchemaError, match="missing doc_id values"):
        pdeval.evaluate(run, QRELS.assign(doc_id=[None, "b", "c", "x", "d", "e"]), "AP")


def test_partial_overlap_names_the_likely_cause():
    qrels = pd.concat([QRELS, QRELS.assign(query_id=QRELS["query_id"] + "1")])  # topics 1, 2, 11, 21
    run = pd.concat([RUN, RUN.assign(query_id="0" + RUN["query_id"] + "1")])  # topics 1, 2, 011, 021
    with pytest.warns(OverlapWarning, match=r"2 run topic\(s\).*2 qrels topic\(s\).*differ only by leading zeros"):
        result = evaluate(run, qrels)
    assert ap(result) == pytest.approx(HAND)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=" \t\n\x01abé", max_size=4), min_size=1, max_size=30),
       st.lists(st.text(alphabet=" \tab", max_size=3), max_size=5), st.integers(0, 3))
def test_padding_check_on_arrow_buffers_matches_python(values, more, cut):
    """The buffer-level whitespace check (sliced and multi-chunk Arrow columns too) flags
    exactly the ids that Python's strip changes or that are empty."""
    from pdeval.frames.canonical import WHITESPACE, _padding

    series = pd.concat([pd.Series(values, dtype="str").iloc[cut:], pd.Series(more, dtype="str")], ignore_index=True)
    expected = np.array([v == "" or v != v.strip(WHITESPACE) for v in list(values[cut:]) + list(more)], dtype=bool)
    found = _padding(series)
    assert (np.zeros(len(series), dtype=bool) if found is None else found).tolist() == expected.tolist()
    assert _padding(series.astype(object)) is None if not expected.any() else _padding(series.astype(object)).tolist() == expected.tolist()


@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from(["1", "2", "10"]),
                          st.one_of(st.none(), st.integers(0, 3))), max_size=30))
@settings(max_examples=200, deadline=None)
def test_repeated_keys_are_the_rows_pandas_marks_duplicated(rows):
    """The duplicate check on combined integer codes marks exactly the rows ``DataFrame.duplicated``
    marks (missing values equal to each other), and says None when no row repeats."""
    from pdeval.frames.canonical import _repeated_keys

    frame = pd.DataFrame(rows, columns=["run", "query_id", "doc"])
    want = frame.duplicated(["run", "query_id", "doc"], keep="first").to_numpy()
    got = _repeated_keys(frame, ["run", "query_id", "doc"])
    if want.any():
        np.testing.assert_array_equal(got, want)
    else:
        assert got is None
