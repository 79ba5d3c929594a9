"""The uncertainty of the prior itself: a random effect of the run on how relevant its unjudged
documents are (``estimate(..., spread=...)``).

The priors of :mod:`pdeval.analysis.estimates.label_priors` give every unjudged document of a
run the grade shares of judged documents (the topic's pool, the run's own judged documents or
both; Fröbe, Gienapp, Potthast & Hagen, ECIR 2023) and draw its label independently of every
other unjudged document. What they cannot know is how much more or less often the documents
*nobody judged* are relevant than the judged ones they are modelled on. That rate is not a
property of the topic but of the run meeting the pool: the documents a system outside the
pool brings are less often relevant than the pooled ones, and by how much varies between
systems (Zobel, SIGIR 1998; Buckley, Dimmick, Soboroff & Voorhees, IRJ 2007), between pools and
between collections; Webber & Park (SIGIR 2009) correct it per system and find the correction's
error, not the topics, dominating; Lipani, Lupu & Hanbury (SIGIR 2015) show the bias is a
property of the run. A run's unjudged documents therefore share one error of the prior on all
its topics, and independent draws per document average it away: the interval of a run mean
shrinks with the number of unjudged documents although the prior's error does not.

**Model** (a hierarchical prior, a between-run variance component on the log relevance rate):
in every resample each run draws one factor ``f = exp(σ·z − σ²/2)``, ``z ~ N(0, 1)`` (mean 1: the
spread widens the interval without moving the estimate, up to the clipping below), shared by
all its topics, and its unjudged documents get

    q_g = b_g · f  (g > 0),   scaled to sum 1 if Σ_{g>0} q_g > 1,   p_0 = 1 − Σ_{g>0} q_g

from the prior ``b`` (the same form as the ``"unique"`` prior's unit factors,
:mod:`pdeval.analysis.estimates.unique_priors`, whose smoothing draws the same ``exp(h·z)``).
``σ`` (``spread``) is the between-run standard deviation of the log rate. It cannot be learnt
from one run against one pool, so it is learnt on other collections (empirical Bayes across
collections): the leave-one-collection-out calibration study (``bench/calibration.py``)
leaves each team out of the pool of CLEF eHealth 2015, 2016, 2018 and TREC DL 2021, scores its
runs against the pool of the others with the truth known, and chooses for each prior the
smallest ``σ`` whose 95 % intervals of run means cover the truth on the *other* collections;
:data:`SPREADS` holds the value chosen on all four and :data:`COVERAGE` the coverage the study
measured for it on each held-out collection. The interval then carries the topics' draws and
the uncertainty of the prior; ``spread=0`` is Fröbe et al.'s bootstrap unchanged.

Vectorised: the factors are drawn as (resamples x runs) normals and broadcast to the rows.
"""

from __future__ import annotations

from typing import Union

import numpy as np

from pdeval.analysis.estimates.label_priors import CalibrationEffect
from pdeval.analysis.estimates.unique_priors import UnitEffect

#: ``spread="auto"``: the σ of each prior chosen on all four collections by the leave-one-collection-out
#: study (``bench/calibration.py``, 400 resamples, target 95 %; tables in ``bench/calibration.md``)
SPREADS = {"pool": 1.0, "run": 1.0, "both": 1.0, "unique": 0.75}

#: the coverage of the 95 % intervals of run means with ``spread="auto"`` in that study, per held-out
#: collection (its σ chosen on the three others): (collection, measure, coverage, runs)
COVERAGE: dict[str, list[tuple[str, str, float, int]]] = {
    "pool": [
        ("CLEF 2016", "P@10", 1.0, 16), ("CLEF 2016", "nDCG@10", 1.0, 16), ("CLEF 2016", "AP@10", 1.0, 16), ("CLEF 2016", "RBP@10", 1.0, 16),
        ("CLEF 2018", "P@10", 1.0, 19), ("CLEF 2018", "nDCG@10", 1.0, 19), ("CLEF 2018", "AP@10", 1.0, 19), ("CLEF 2018", "RBP@10", 1.0, 19),
        ("TREC DL 2021", "P@10", 1.0, 63), ("TREC DL 2021", "nDCG@10", 0.952, 63), ("TREC DL 2021", "AP@10", 0.952, 63), ("TREC DL 2021", "RBP@10", 0.952, 63),
        ("CLEF 2015", "P@10", 1.0, 59), ("CLEF 2015", "nDCG@10", 0.966, 59), ("CLEF 2015", "AP@10", 0.966, 59), ("CLEF 2015", "RBP@10", 0.966, 59),
    ],
    "run": [
        ("CLEF 2016", "P@10", 1.0, 16), ("CLEF 2016", "nDCG@10", 1.0, 16), ("CLEF 2016", "AP@10", 1.0, 16), ("CLEF 2016", "RBP@10", 1.0, 16),
        ("CLEF 2018", "P@10", 1.0, 19), ("CLEF 2018", "nDCG@10", 1.0, 19), ("CLEF 2018", "AP@10", 1.0, 19), ("CLEF 2018", "RBP@10", 1.0, 19),
        ("TREC DL 2021", "P@10", 0.984, 63), ("TREC DL 2021", "nDCG@10", 0.937, 63), ("TREC DL 2021", "AP@10", 0.984, 63), ("TREC DL 2021", "RBP@10", 0.937, 63),
        ("CLEF 2015", "P@10", 1.0, 59), ("CLEF 2015", "nDCG@10", 1.0, 59), ("CLEF 2015", "AP@10", 1.0, 59), ("CLEF 2015", "RBP@10", 0.983, 59),
    ],
    "both": [
        ("CLEF 2016", "P@10", 1.0, 16), ("CLEF 2016", "nDCG@10", 1.0, 16), ("CLEF 2016", "AP@10", 1.0, 16), ("CLEF 2016", "RBP@10", 1.0, 16),
        ("CLEF 2018", "P@10", 1.0, 19), ("CLEF 2018", "nDCG@10", 1.0, 19), ("CLEF 2018", "AP@10", 1.0, 19), ("CLEF 2018", "RBP@10", 1.0, 19),
        ("TREC DL 2021", "P@10", 0.984, 63), ("TREC DL 2021", "nDCG@10", 0.937, 63), ("TREC DL 2021", "AP@10", 1.0, 63), ("TREC DL 2021", "RBP@10", 0.937, 63),
        ("CLEF 2015", "P@10", 1.0, 59), ("CLEF 2015", "nDCG@10", 1.0, 59), ("CLEF 2015", "AP@10", 0.966, 59), ("CLEF 2015", "RBP@10", 0.983, 59),
    ],
    "unique": [
        ("CLEF 2016", "P@10", 1.0, 16), ("CLEF 2016", "nDCG@10", 1.0, 16), ("CLEF 2016", "AP@10", 1.0, 16), ("CLEF 2016", "RBP@10", 1.0, 16),
        ("CLEF 2018", "P@10", 1.0, 19), ("CLEF 2018", "nDCG@10", 1.0, 19), ("CLEF 2018", "AP@10", 1.0, 19), ("CLEF 2018", "RBP@10", 1.0, 19),
        ("TREC DL 2021", "P@10", 0.984, 63), ("TREC DL 2021", "nDCG@10", 0.937, 63), ("TREC DL 2021", "AP@10", 1.0, 63), ("TREC DL 2021", "RBP@10", 0.952, 63),
        ("CLEF 2015", "P@10", 1.0, 59), ("CLEF 2015", "nDCG@10", 0.966, 59), ("CLEF 2015", "AP@10", 0.966, 59), ("CLEF 2015", "RBP@10", 0.966, 59),
    ],
}


def spread_of(spread: Union[str, float], prior: str, method: str) -> float:
    """σ for ``spread=`` (``"auto"``: :data:`SPREADS` of the prior; 0 for ``method="labels"``,
    whose calibration is resampled already)."""
    if spread == "auto":
        return SPREADS.get(prior, 0.0) if method == "bootstrap" else 0.0
    return float(spread)


def with_spread(probabilities, run_of_row: np.ndarray, spread: float):
    """The prior with the run effect of the module docstring: a
    :class:`~pdeval.analysis.estimates.unique_priors.UnitEffect` drawing one factor per run and
    resample (a ``"unique"`` prior's own smoothing widens to ``hypot(h, σ)``)."""
    if spread <= 0 or isinstance(probabilities, CalibrationEffect):
        return probabilities
    centre = np.exp(-spread ** 2 / 2.0)  # E[exp(σz)] = exp(σ²/2): the factor's mean stays 1
    if isinstance(probabilities, UnitEffect):
        bandwidth = float(np.hypot(probabilities.bandwidth, spread))
        centre = np.exp((probabilities.bandwidth ** 2 - bandwidth ** 2) / 2.0)
        return UnitEffect(probabilities.pool, probabilities.run_of_row, probabilities.n_runs,
                          probabilities.factors * centre, bandwidth)
    factors = np.full((1, probabilities.shape[1]), centre)
    n_runs = int(run_of_row.max(initial=-1)) + 1
    return UnitEffect(np.asarray(probabilities, dtype=np.float64), run_of_row, n_runs, factors, float(spread))


def documented(frame, method: str, prior: str, spread: float, confidence: float):
    """``frame`` with the bootstrap's setting and, for the default one, its measured coverage in
    its ``attrs`` (the other methods' frames unchanged)."""
    if method != "bootstrap":
        return frame
    default = np.isclose(spread, SPREADS.get(prior, -1.0)) and np.isclose(confidence, 0.95)
    rows = COVERAGE.get(prior, []) if default else []
    coverage = [dict(zip(("collection", "measure", "coverage", "runs"), row)) for row in rows]
    reached = bool(rows) and all(row[2] >= 0.90 for row in rows)
    frame.attrs.update(prior=prior, spread=float(spread), coverage=coverage, coverage_reached=reached)
    return frame


__all__ = ["COVERAGE", "SPREADS", "documented", "spread_of", "with_spread"]
