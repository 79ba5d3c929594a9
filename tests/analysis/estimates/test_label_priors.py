"""The ``"run"`` prior with one pseudo-document of the pool (label_priors.shrunk).

Oracles: the Dirichlet posterior mean worked by hand, and the consequence a user sees: a ranking
whose judged documents are all relevant still has an interval that opens over its unjudged ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import pdeval
from pdeval.analysis.estimates import label_priors


def test_shrunk_is_the_dirichlet_posterior_mean_by_hand():
    counts = np.array([[0.0, 3.0, 1.0], [0.0, 0.0, 0.0], [5.0, 0.0, 0.0]])
    pool = np.array([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2], [0.7, 0.2, 0.1]])
    got = label_priors.shrunk(counts, pool)
    np.testing.assert_allclose(got[0], [0.5 / 5, 3.3 / 5, 1.2 / 5])
    np.testing.assert_allclose(got[1], pool[1])  # no judged document in reach: the pool prior
    np.testing.assert_allclose(got[2], [5.7 / 6, 0.2 / 6, 0.1 / 6])
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_a_ranking_judged_all_relevant_does_not_make_its_unjudged_documents_certain():
    run = pd.DataFrame({"run": ["b"] * 3, "query_id": "1", "doc_id": ["d1", "d4", "d5"], "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d4"], "relevance": [1, 0, 1]})
    got = pdeval.estimate(run, qrels, "P@3", prior="run", n_resamples=400, seed=1, per="run", progress=False).iloc[0]
    # the run's counts (2 relevant of 2) plus one pool document (2/3 relevant): 8/9 relevant, not 1
    assert got["estimate"] < 1.0 and got["low"] <= 2 / 3 < got["high"]
    fixed = pdeval.estimate(run, qrels, "P@3", prior="run", spread=0.0, shift=0.0, n_resamples=4000, seed=1,
                            per="run", progress=False).iloc[0]
    se = np.sqrt((8 / 9) * (1 / 9) / 4000) / 3
    assert abs(fixed["estimate"] - (2 + 8 / 9) / 3) < 4 * se
