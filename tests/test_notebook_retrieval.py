"""PL2 of the notebooks' retrieval support (``notebooks/retrieval.py``) against hand-computed values.

No PL2 oracle is installable here (Terrier needs a JVM download), so the expected numbers come
from the formula worked by hand on a three-document collection, and from a plain scalar
transcription of Amati & van Rijsbergen's formula (one document and term at a time) for a second c.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sp = pytest.importorskip("scipy.sparse")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "notebooks"))
from retrieval import interpolate, pl2_scores, pl2_weights, term_matrix, top_k  # noqa: E402

# d1 = "a a b", d2 = "b c", d3 = "a c c c": N = 3, avgdl = 9/3 = 3; F(a) = 3, F(b) = 2, F(c) = 4
DOCS = [["a", "a", "b"], ["b", "c"], ["a", "c", "c", "c"]]


def scalar_pl2(tf, dl, F, N, avgdl, c):
    tfn = tf * math.log2(1 + c * avgdl / dl)
    lam = F / N
    return (tfn * math.log2(tfn / lam) + (lam - tfn) * math.log2(math.e) + 0.5 * math.log2(2 * math.pi * tfn)) / (tfn + 1)


def test_term_matrix_counts_and_drops_unknown_terms():
    counts, vocab = term_matrix(DOCS)
    assert list(vocab) == ["a", "b", "c"]
    assert counts.toarray().tolist() == [[2, 1, 0], [0, 1, 1], [1, 0, 3]]
    query, _ = term_matrix([["c", "zz", "a", "a"]], vocab)
    assert query.toarray().tolist() == [[2, 0, 1]]


def test_pl2_worked_example():
    # term a in d1, c = 1: tfn = 2 * log2(1 + 1 * 3/3) = 2, lambda = 3/3 = 1,
    # w = (2 * log2(2/1) + (1 - 2) * log2(e) + 0.5 * log2(2 * pi * 2)) / (2 + 1)
    #   = (2 - 1.4426950 + 0.5 * 3.6514961) / 3 = 0.7943510
    # term a in d3: tfn = log2(1 + 3/4) = 0.8073549 -> w = 0.6639885
    # term c in d2: tfn = log2(1 + 3/2) = 1.3219281, lambda = 4/3 -> w = 0.6577036
    # term c in d3: tfn = 3 * log2(1.75) = 2.4220648, lambda = 4/3 -> w = 0.7244285
    counts, vocab = term_matrix(DOCS)
    query, _ = term_matrix([["a", "a", "c"]], vocab)  # qtf(a) = 2, qtf(c) = 1
    scores, matched = pl2_scores(counts, query, 1.0)
    expected = [2 * 0.7943510, 0.6577036, 2 * 0.6639885 + 0.7244285]
    assert scores[0] == pytest.approx(expected, abs=1e-6)
    assert matched.tolist() == [[True, True, True]]
    weights = pl2_weights(counts, 1.0).toarray()
    assert weights[0, 0] == pytest.approx(0.7943510, abs=1e-7)
    assert weights[1, 0] == 0.0  # d2 has no a


@pytest.mark.parametrize("c", [0.3, 7.0])
def test_pl2_weights_equal_the_scalar_formula(c):
    counts, _ = term_matrix(DOCS)
    dense = counts.toarray()
    dl, F = dense.sum(axis=1), dense.sum(axis=0)
    weights = pl2_weights(counts, c).toarray()
    for d in range(3):
        for t in range(3):
            want = scalar_pl2(dense[d, t], dl[d], F[t], 3, dl.mean(), c) if dense[d, t] else 0.0
            assert weights[d, t] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_inputs_are_left_alone_so_parameter_values_do_not_interfere():
    counts, vocab = term_matrix(DOCS)
    query, _ = term_matrix([["b", "c"]], vocab)
    before = counts.toarray().copy()
    first, _ = pl2_scores(counts, query, 2.0)
    pl2_scores(counts, query, 0.5)
    again, _ = pl2_scores(counts, query, 2.0)
    assert np.array_equal(counts.toarray(), before)
    assert np.array_equal(first, again)


def test_unmatched_documents_are_not_retrieved_matched_ones_are_even_below_zero():
    scores = np.array([[0.5, 0.0, -0.2, 0.9], [0.0, 0.0, 0.0, 0.0]])
    matched = np.array([[True, False, True, True], [False, False, False, False]])
    query, doc, score = top_k(scores, matched, 10)
    assert query.tolist() == [0, 0, 0]
    assert doc.tolist() == [3, 0, 2]
    assert score.tolist() == [0.9, 0.5, -0.2]
    query, doc, _ = top_k(scores, matched, 2)
    assert doc.tolist() == [3, 0]


def test_c_must_be_positive():
    counts, _ = term_matrix(DOCS)
    with pytest.raises(ValueError, match="positive"):
        pl2_weights(counts, 0.0)


def test_linear_fusion_of_min_max_normalised_scores():
    runs = pd.DataFrame({
        "run": ["x", "x", "x", "y", "y", "x", "y", "y"],
        "query_id": ["1", "1", "1", "1", "1", "2", "2", "2"],
        "doc_id": ["a", "b", "c", "b", "d", "a", "a", "b"],
        "score": [10.0, 6.0, 2.0, 0.5, 0.1, 3.0, 7.0, 7.0],
    })
    fused = interpolate(runs, "x", "y", [0.0, 0.25, 1.0]).set_index(["query_id", "doc_id", "w"])["score"]
    # topic 1: x -> a 1, b 0.5, c 0 (min 2, max 10); y -> b 1, d 0 (min 0.1, max 0.5); absent = 0
    assert fused["1", "a", 0.25] == pytest.approx(0.25)
    assert fused["1", "b", 0.25] == pytest.approx(0.25 * 0.5 + 0.75 * 1.0)
    assert fused["1", "c", 1.0] == pytest.approx(0.0)
    assert fused["1", "d", 0.0] == pytest.approx(0.0)
    assert fused["1", "b", 0.0] == pytest.approx(1.0)
    # topic 2: x has one document (score range 0: normalised 1), y ties a and b (both 1)
    assert fused["2", "a", 0.25] == pytest.approx(1.0)
    assert fused["2", "b", 0.25] == pytest.approx(0.75)
    assert len(fused) == 6 * 3
    with pytest.raises(ValueError, match="not in the run frame"):
        interpolate(runs, "x", "z", [0.5])
