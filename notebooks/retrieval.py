"""PL2 retrieval over a sparse term-document matrix, and linear fusion of two runs (notebook support,
not part of the pdeval package).

pdeval evaluates runs; it does not make them. The training-sensitivity notebook needs a second
retrieval model with a free parameter beside BM25 (which the ``bm25s`` library provides), and no
PL2 implementation is installable without a JVM, so PL2 is written out here, vectorised with
``scipy.sparse`` and checked against a hand-computed example in ``tests/test_notebook_retrieval.py``.

**PL2** (Amati & van Rijsbergen, *Probabilistic models of information retrieval based on measuring
the divergence from randomness*, ACM TOIS 20(4), 2002; the form of Terrier's ``PL2`` weighting
model): Poisson randomness model P, Laplace after-effect L, term frequency normalisation 2.
For a query term t with query frequency qtf, in a document d of length dl (indexed tokens) in a
collection of N documents of mean length avgdl, where t occurs tf times in d and F times in the
collection::

    tfn    = tf * log2(1 + c * avgdl / dl)                      (normalisation 2, parameter c > 0)
    lambda = F / N                                              (Poisson mean of t)
    w(t,d) = qtf / (tfn + 1) * ( tfn * log2(tfn / lambda)
                                 + (lambda - tfn) * log2(e)
                                 + 0.5 * log2(2 * pi * tfn) )

and the score of d is the sum of w(t, d) over the query terms that d contains. A document that
contains no query term is not retrieved (it has no score); a matching document is retrieved even
when its score is not positive (the weight of a very frequent term in a long document can be
negative), as Terrier does.

**Linear fusion** (:func:`interpolate`; the weighted combination of normalised scores studied by
Vogt & Cottrell, *Fusion via a linear combination of scores*, Information Retrieval 1(3), 1999):
each run's scores are min-max normalised per topic, ``s' = (s - min) / (max - min)`` (1 when a
topic's scores are all equal), a document missing from a run gets 0 there, and
``score_w(d) = w * s'_1(d) + (1 - w) * s'_2(d)`` over the union of the two runs' documents.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["term_matrix", "pl2_weights", "pl2_scores", "top_k", "interpolate"]

LOG2_E = 1.0 / math.log(2.0)


def term_matrix(token_lists: Sequence[Sequence[str]], vocabulary: pd.Index | None = None) -> tuple[sp.csr_matrix, pd.Index]:
    """Count matrix (one row per token list, one column per term) and its vocabulary.

    Without ``vocabulary`` the terms are those of ``token_lists`` in first-seen order; with it,
    tokens outside it are dropped (e.g. query terms that occur in no document).
    """
    lengths = np.fromiter((len(tokens) for tokens in token_lists), dtype=np.int64, count=len(token_lists))
    flat = pd.Index(list(itertools.chain.from_iterable(token_lists)), dtype=object)
    if vocabulary is None:
        codes, vocabulary = pd.factorize(flat)
        vocabulary = pd.Index(vocabulary, dtype=object)
    else:
        codes = vocabulary.get_indexer(flat)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    keep = codes >= 0
    counts = sp.csr_matrix(
        (np.ones(int(keep.sum())), (rows[keep], codes[keep])), shape=(len(lengths), len(vocabulary))
    )
    counts.sum_duplicates()
    return counts, vocabulary


def pl2_weights(counts: sp.spmatrix, c: float) -> sp.csr_matrix:
    """PL2 weight w(t, d) (with qtf = 1) of every (document, term) entry of the count matrix ``counts``.

    ``counts``: documents x terms, term frequencies. Document lengths, N, avgdl and the collection
    frequencies F are taken from it (see the module docstring for the formula).
    """
    if not c > 0:
        raise ValueError(f"PL2's c must be positive, got {c!r}")
    counts = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    counts.sum_duplicates()
    counts.eliminate_zeros()
    n_docs = counts.shape[0]
    doc_len = np.asarray(counts.sum(axis=1)).ravel()
    avg_len = doc_len.sum() / n_docs
    freq = np.asarray(counts.sum(axis=0)).ravel()
    rows = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
    tf = counts.data
    tfn = tf * np.log2(1.0 + c * avg_len / doc_len[rows])
    lam = freq[counts.indices] / n_docs
    weight = (tfn * np.log2(tfn / lam) + (lam - tfn) * LOG2_E + 0.5 * np.log2(2.0 * np.pi * tfn)) / (tfn + 1.0)
    return sp.csr_matrix((weight, counts.indices.copy(), counts.indptr.copy()), shape=counts.shape)


def pl2_scores(doc_counts: sp.spmatrix, query_counts: sp.spmatrix, c: float) -> tuple[np.ndarray, np.ndarray]:
    """PL2 scores of every document for every query: ``(scores, matched)``, both queries x documents.

    ``doc_counts``: documents x terms; ``query_counts``: queries x terms (qtf), same vocabulary.
    ``matched`` tells the documents that contain at least one query term (the retrieved ones);
    elsewhere the score is 0 and means nothing.
    """
    weights = pl2_weights(doc_counts, c)
    query_counts = sp.csr_matrix(query_counts, dtype=np.float64)
    scores = (query_counts @ weights.T).toarray()
    present = (sp.csr_matrix(doc_counts) != 0).astype(np.float64)
    matched = ((query_counts != 0).astype(np.float64) @ present.T).toarray() > 0
    return scores, matched


def top_k(scores: np.ndarray, matched: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` highest-scoring matched documents of each query (row), best first.

    Returns flat arrays ``(query_index, doc_index, score)``; ties keep document order.
    """
    masked = np.where(matched, scores, -np.inf)
    order = np.argsort(-masked, axis=1, kind="stable")[:, :k]
    best = np.take_along_axis(masked, order, axis=1)
    keep = np.isfinite(best)
    query = np.broadcast_to(np.arange(scores.shape[0])[:, None], order.shape)
    return query[keep], order[keep], best[keep]


def interpolate(runs: pd.DataFrame, first: str, second: str, weights: Sequence[float], *, param: str = "w") -> pd.DataFrame:
    """Linear fusion of the runs named ``first`` and ``second`` of the run frame ``runs`` for every
    weight w of ``weights`` (see the module docstring): a run frame ``run`` (``"fusion"``),
    ``param`` (w), ``query_id``, ``doc_id``, ``score``, the weight of ``first`` being w.
    """
    missing = {first, second} - set(runs["run"])
    if missing:
        raise ValueError(f"runs {sorted(missing)} are not in the run frame (it has {sorted(set(runs['run']))[:5]}...)")
    part = runs[runs["run"].isin([first, second])]
    groups = part.groupby(["run", "query_id"], sort=False)["score"]
    low, span = groups.transform("min"), groups.transform("max") - groups.transform("min")
    norm = np.where(span > 0, (part["score"] - low) / span.where(span > 0, 1.0), 1.0)
    wide = part.assign(norm=norm).pivot_table(index=["query_id", "doc_id"], columns="run", values="norm", aggfunc="first")
    one, two = wide[first].fillna(0.0).to_numpy(), wide[second].fillna(0.0).to_numpy()
    weights = np.asarray(weights, dtype=np.float64)
    scores = np.outer(one, weights) + np.outer(two, 1.0 - weights)  # (query, doc) x weights
    keys = wide.index.to_frame(index=False)
    return pd.DataFrame({
        "run": "fusion",
        param: np.tile(weights, len(keys)),
        "query_id": np.repeat(keys["query_id"].to_numpy(), len(weights)),
        "doc_id": np.repeat(keys["doc_id"].to_numpy(), len(weights)),
        "score": scores.ravel(),
    })
