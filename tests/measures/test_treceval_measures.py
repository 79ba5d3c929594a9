"""trec_eval 10's measures beyond the classic ones, against slow, obviously correct loops.

Each reference below walks one ranked list rank by rank, as the measure's definition reads
(trec_eval 10.0's ``m_*.c`` describe the same); Hypothesis draws lists with every kind of
document (relevant at several grades, judged nonrelevant, pooled ``-1``, absent) and
unretrieved judgments. The byte-for-byte comparison with the trec_eval binary is in
tests/test_conformance.py; here the kernels' vectorised forms meet their definitions, plus a
few worked examples by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.measures.trec_sets import relstring

ABSENT, POOLED = -2, -1


# ---- references: one list, rank by rank -----------------------------------------------------------
def hits(codes, k, rel):
    return sum(1 for c in codes[:k] if c >= rel)


def gain(code):
    return float(max(code, 0))


def ideal_list(levels):
    return sorted((float(v) for v in levels if v > 0), reverse=True)


def dcg_prefix(gains, k):
    return sum(g / math.log2(r + 1) for r, g in enumerate(gains[:k], start=1) if g)


def iprec(codes, levels, x, rel):
    R = sum(1 for v in levels if v >= rel)
    relevant = [r for r, c in enumerate(codes, start=1) if c >= rel]
    cut = math.floor(x * R + 0.5)
    if not codes and cut == 0:
        return math.nan
    if max(cut, 1) > len(relevant):
        return 0.0
    start = relevant[max(cut, 1) - 1]
    return max(hits(codes, i, rel) / i for i in range(start, len(codes) + 1))


def r_ndcg(codes, levels, rel):
    if sum(1 for v in levels if v >= rel) == 0:
        return 0.0
    ideal, run = ideal_list(levels), [gain(c) for c in codes]
    points = []
    for i in range(1, len(ideal) + 1):
        following = ideal[i] if i < len(ideal) else 0.0
        if following != ideal[i - 1]:
            points.append(dcg_prefix(run, min(i, len(run))) / dcg_prefix(ideal, i))
    if len(run) > len(ideal) + 1 and ideal:
        points.append(dcg_prefix(run, len(run)) / dcg_prefix(ideal, len(ideal)))
    return sum(points) / len(points) if points else math.nan


def g_measure(codes, levels):
    ideal, total_cost, total_gain, value = ideal_list(levels), 0.0, 0.0, 0.0
    for r, code in enumerate(codes, start=1):
        total_cost += max(ideal[r - 1] if r <= len(ideal) else 0.0, 1.0)
        total_gain += gain(code)
        if gain(code):
            value += gain(code) / math.log2(2 + total_cost - total_gain)
    return value / sum(ideal) if sum(ideal) > 0 else 0.0


def ndcg_rel(codes, levels):
    ideal, run = ideal_list(levels), [gain(c) for c in codes]
    total = sum(dcg_prefix(run, r) / dcg_prefix(ideal, min(r, len(ideal))) for r, g in enumerate(run, start=1) if g > 0)
    if ideal:
        total += (len(ideal) - sum(1 for g in run if g > 0)) * dcg_prefix(run, len(run)) / dcg_prefix(ideal, len(ideal))
    return total / len(ideal) if total > 0 else 0.0


def rbp_trec(codes, levels, p=0.9):
    top = max([v for v in levels if v >= 0], default=0)
    scale = top if top > 1 else 1
    return (1 - p) * sum(gain(c) / scale * p ** (r - 1) for r, c in enumerate(codes, start=1))


def rbp_resid(codes, p=0.9):
    unjudged = [r for r, c in enumerate(codes, start=1) if c < 0]
    return p ** len(codes) + (1 - p) * sum(p ** (r - 1) for r in unjudged) if unjudged else 0.0


def ndcg_p(codes, levels, rel):
    def discount(r):
        return 1.0 if r == 1 else 1 / math.log2(r)

    if not any(c >= rel for c in codes):
        return 0.0
    ideal = ideal_list(levels)
    return sum(gain(c) * discount(r) for r, c in enumerate(codes, start=1)) / sum(g * discount(q) for q, g in enumerate(ideal, 1))


def reference(codes, levels, rel=1) -> dict:
    """Every measure of this file for one list: codes of the retrieved documents in rank order,
    levels of every judged document of the topic (retrieved or not)."""
    n, R = len(codes), sum(1 for v in levels if v >= rel)
    found = hits(codes, n, rel)
    relevant = [(r, m) for m, r in enumerate([r for r, c in enumerate(codes, start=1) if c >= rel], start=1)]
    ap = sum(m / r for r, m in relevant) / R if R else 0.0
    precision, recall = (found / n if n else 0.0), (found / R if R else 0.0)
    values = {
        "SetP": precision,
        "SetRecall": recall,
        "SetRelP": found / min(n, R) if n and R else 0.0,
        "SetAP": found * found / (n * R) if n and R else 0.0,
        "SetF": 2 * precision * recall / (precision + recall) if found else 0.0,
        "Utility": found - (n - found),
        "NumNonrelJudgedRet": sum(1 for c in codes if 0 <= c < rel),
        "GMAP": ap,
        "IPrecAvg": sum(iprec(codes, levels, i / 10, rel) for i in range(11)) / 11,
        "RprecMult(m=0.5)": (lambda c: hits(codes, c, rel) / c if c else 0.0)(math.floor(0.5 * R + 0.9)),
        "RprecMult(m=2.0)": (lambda c: hits(codes, c, rel) / c if c else 0.0)(math.floor(2.0 * R + 0.9)),
        "BinG": sum(1 / math.log2(2 + r - m) for r, m in relevant) / R if R else 0.0,
        "YAAP": math.log((1 + ap * R) / (1 + R - ap * R)),
        "RBPtrec": rbp_trec(codes, levels),
        "RBPresid": rbp_resid(codes),
        "DCG": dcg_prefix([gain(c) for c in codes], n),
        "IdealDCG": dcg_prefix(ideal_list(levels), len(ideal_list(levels))),
        "G": g_measure(codes, levels),
        "nDCGRel": ndcg_rel(codes, levels),
        "RnDCG": r_ndcg(codes, levels, rel),
        "nDCGp": ndcg_p(codes, levels, rel),
    }
    for x in (0.0, 0.1, 0.5, 1.0):
        values[f"IPrec(recall={x!r})"] = iprec(codes, levels, x, rel)
    for k in (1, 3, 10):
        values[f"Success@{k}"] = float(hits(codes, k, rel) > 0)
        values[f"RelP@{k}"] = hits(codes, k, rel) / min(k, R) if R else 0.0
        values[f"Unj@{k}"] = sum(1 for c in codes[:k] if c < 0) / k
        values[f"RelAt@{k}"] = float(codes[k - 1]) if k <= n else -3.0
    return values


# ---- the frames of one list ------------------------------------------------------------------------
def frames(codes, unretrieved):
    run = pd.DataFrame({"query_id": "q", "doc_id": [f"d{i}" for i in range(len(codes))],
                        "score": np.arange(len(codes), 0, -1, dtype=float), "run": "r"})
    judged = [(f"d{i}", c) for i, c in enumerate(codes) if c != ABSENT]
    judged += [(f"u{i}", v) for i, v in enumerate(unretrieved)]
    qrels = pd.DataFrame({"query_id": "q", "doc_id": [d for d, _ in judged], "relevance": [v for _, v in judged]})
    return run, qrels


def pdeval_values(codes, unretrieved, names, rel=1) -> dict:
    run, qrels = frames(codes, unretrieved)
    result = pdeval.evaluate(run, qrels, names, rel=rel, undefined="nan")
    back = {str(pdeval.parse_measure(name, rel=rel)): name for name in names}
    return {back[m]: v for m, v in zip(result["measure"], result["value"])}


codes_strategy = st.lists(st.sampled_from([ABSENT, POOLED, 0, 0, 1, 2, 3]), min_size=1, max_size=25)
unretrieved_strategy = st.lists(st.sampled_from([POOLED, 0, 1, 2, 3]), max_size=8).map(lambda v: [0] + v)  # never empty


@pytest.mark.filterwarnings("ignore::pdeval.errors.PdevalWarning")
@settings(max_examples=80, deadline=None)
@given(codes=codes_strategy, unretrieved=unretrieved_strategy, rel=st.sampled_from([1, 2]))
def test_kernels_equal_the_reference_loops(codes, unretrieved, rel):
    levels = [c for c in codes if c >= 0] + [v for v in unretrieved if v >= 0]
    expected = reference(codes, levels, rel)
    ours = pdeval_values(codes, unretrieved, list(expected), rel=rel)
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, rel=1e-12, abs=1e-12, nan_ok=True), name


# ---- worked examples by hand ------------------------------------------------------------------------
def test_worked_example():
    # ranks: R N R - (absent) N ; two relevant documents unretrieved; R = 4
    codes, unretrieved = [1, 0, 1, ABSENT, 0], [1, 1]
    ours = pdeval_values(codes, unretrieved, ["SetP", "SetRecall", "SetAP", "SetF", "Success@1", "RelP@5", "Unj@5",
                                              "RprecMult(m=0.5)", "BinG", "IPrec(recall=0.5)", "NumNonrelJudgedRet"])
    assert ours["SetP"] == pytest.approx(2 / 5) and ours["SetRecall"] == pytest.approx(2 / 4)
    assert ours["SetAP"] == pytest.approx(4 / 20)
    assert ours["SetF"] == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    assert ours["Success@1"] == 1 and ours["RelP@5"] == pytest.approx(2 / 4) and ours["Unj@5"] == pytest.approx(1 / 5)
    assert ours["RprecMult(m=0.5)"] == pytest.approx(1 / 2)  # (int)(0.5·4 + 0.9) = 2: one relevant in the first 2
    assert ours["BinG"] == pytest.approx((1 / math.log2(2) + 1 / math.log2(3)) / 4)
    assert ours["IPrec(recall=0.5)"] == pytest.approx(2 / 3)  # the 2nd relevant document at rank 3
    assert ours["NumNonrelJudgedRet"] == 2


def test_relstring_characters():
    assert relstring(np.array([0, 1, 12, -2, -1, 3, -3, 1])) == "01>-.3"
    assert relstring(np.array([-3.0])) == ""


def test_geometric_summary_and_its_floor():
    from pdeval.integrations.trec_eval import output

    result = pd.DataFrame({"run": "r", "query_id": ["1", "2", "3"], "measure": "GMAP", "value": [0.5, 0.2, 0.0]})
    text = output.write_trec_eval(result)
    expected = math.exp((math.log(0.5) + math.log(0.2) + math.log(1e-5)) / 3)
    assert text.splitlines()[-1] == f"gm_map                \tall\t{expected:.4f}"
    assert "gm_map                \t1\t" not in text  # trec_eval prints gm_map as a summary only


def test_measures_are_refused_with_reasons():
    with pytest.raises(pdeval.errors.MeasureError, match="recall"):
        pdeval.parse_measure("IPrec")
    with pytest.raises(pdeval.errors.MeasureError, match=r"\[0, 1\]"):
        pdeval.parse_measure("IPrec(recall=1.5)")
    with pytest.raises(pdeval.errors.MeasureError, match="persistence"):
        pdeval.parse_measure("RBPtrec(p=1.0)")
