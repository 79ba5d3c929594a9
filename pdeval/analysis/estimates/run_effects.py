"""The uncertainty of the prior itself: a random effect of the run on how relevant its unjudged
documents are (``estimate(..., spread=..., shift=...)``).

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

**Model** (a hierarchical prior with a between-run mean ``μ`` and standard deviation ``σ`` on
the log-odds scale): an unjudged document's prior ``b`` has the relevant share
``s = Σ_{g>0} b_g``. ``μ`` (``shift``) moves it to ``s_μ = expit(logit s + μ)``, the relevant grades
keeping their proportions (``b_μ``): the mean log-odds by which documents outside the pool are
less (``μ < 0``) or more often relevant than the prior says (Zobel 1998; Buckley et al. 2007). In
every resample each run then draws one ``z ~ N(0, 1)``, shared by all its topics and all
thresholds, and every cumulative share ``S_g = Σ_{h>=g} b_μ,h`` (``g > 0``) of its unjudged
documents moves by it:

    logit S'_g = logit S_g + c_σ(logit S_g) + σ·z,   q_g = S'_g − S'_{g+1},   q_0 = 1 − S'_1

One shift of every threshold is the proportional-odds model of ordinal responses (McCullagh,
JRSS B 1980) with a random effect (Hedeker & Gibbons, Biometrics 1994): a run whose unjudged
documents are less often relevant than ``b_μ`` says also meets lower grades among its relevant
ones (the top grade's share falls faster than the relevant share), which widens the intervals of
graded measures (nDCG, graded RBP); with one relevant grade it is the binary logit-normal model.
``c_σ`` is the centring that makes each draw mean-preserving, ``E[S'_g] = S_g`` (a logit-normal with
its mean, not its median, there; :func:`centring`, solved by bisection on Gauss–Hermite nodes over
a grid of log-odds and interpolated); ``a + c_σ(a)`` increases with ``a``, so the moved shares stay
ordered. So ``μ`` alone moves the estimate (the expected prior is ``b_μ``) and ``σ`` alone widens
the interval (exactly for measures linear in the labels, P@k and RBP; nearly for the others). No
probability leaves [0, 1] and nothing is clipped; shares of 0 and 1 stay. (An earlier version
moved only ``s`` by ``σ·z`` and kept the relevant grades' proportions in every draw: on the
collection of :data:`UNSEEN` its intervals of nDCG@10 and RBP@10 covered only 0.78 and 0.75 of
the runs.)

``μ`` and ``σ`` cannot be learnt from one run against one pool, so they are learnt on other
collections (empirical Bayes across collections): the leave-one-collection-out study
(``bench/calibration.py``) leaves each team out of the pool of CLEF eHealth 2015, 2016, 2018 and
TREC DL 2021, scores its runs against the pool of the others with the truth known, and for each
held-out collection chooses, on the *other* collections only, first ``μ`` (the smallest worst
error of the run-mean estimates relative to the condensed values') and then the smallest ``σ`` whose 95 %
intervals of run means cover the truth there. :data:`SETTINGS` holds the (``μ``, ``σ``) chosen
on all four collections, the default of ``estimate`` (``spread="auto"``), and :data:`COVERAGE`
what the study measured per held-out collection. ``spread=0, shift=0`` is Fröbe et al.'s
bootstrap unchanged (for ``"run"`` with its one pseudo-document of the pool,
:func:`~pdeval.analysis.estimates.label_priors.shrunk`, without which a ranking judged all
relevant, or all not, would pin its unjudged documents at a share of 1 or 0 that no ``σ`` moves).

Measured (``bench/calibration.md``): the μ with the smallest error differs between collections
and priors, so the study takes, on the other collections, the μ whose *worst* ratio of the
estimate's error to the condensed value's is smallest (the target is per collection and measure).
For the ``"run"`` prior that μ does not bring the error down to the condensed value's on CLEF
2016 and 2015. The ``"condensed"`` prior (the judged documents the condensed list moves into the
cutoff, :func:`~pdeval.analysis.estimates.label_priors.condensed_counts`) is centred where the
condensed value is and learns μ = −0.25 on every held-out collection: :data:`DEFAULT_PRIOR`, the
one ``estimate(prior="auto")`` takes for measures with a cutoff, at (μ, σ) = (−0.25, 3.0). Its 95 %
intervals cover 94–100 % of the runs on every held-out collection and measure (lowest: TREC DL
2021 AP@10, 0.937 of 63 runs) and its run-mean error is below the condensed value's on 15 of the
16 cells (CLEF 2016 P@10: 0.0227 against 0.0218, 0.2 standard errors above). Out of the study,
on CLEF 2018's partial qrels it covers every one of the 24 runs against the snapshot plus each
run's own top 10 judged, with an error below the condensed value's on all four measures. **On a
collection the study never saw** (:data:`UNSEEN`: SynDL's GPT-4 labels of the depth-10 pool of
all TREC DL 2021 runs on the 424 queries NIST did not judge, each team left out of that pool in
turn) it covers 62 of the 63 runs on all four measures, with an error below the condensed
value's on all four. Both checks travel with the result, and the default's ``coverage_reached``
is True: every record reaches 0.90. ``"unique"`` (which needs the pool) also meets both targets;
the ``"run"`` prior's σ chosen without TREC DL 2021 covers only 0.81 there (``COVERAGE``), and
a result carries that too.

With ``prior="unique"`` the unit's factors are drawn first (:mod:`pdeval.analysis.estimates.unique_priors`)
and the run effect acts on the share they give. Vectorised: ``z`` is drawn as (resamples x runs)
normals and broadcast to the rows; the centring is read from a cached table per ``σ``. Each run's
``z`` over the resamples of a chunk is a Latin hypercube sample (:func:`stratified_normal`): with
σ = 3 the run effect dominates the spread of the draws, and independent ``z`` left a Monte Carlo
error in the estimate that 400 draws did not average away (CLEF 2016 P@10 run-mean MAE 0.0239 at
400 draws, 0.0229 at 4,000; stratified: 0.0227 at 400).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Union

import numpy as np
from scipy.special import expit, logit, ndtri

from pdeval.analysis.estimates.label_priors import CalibrationEffect
from pdeval.analysis.estimates.unique_priors import UnitEffect

#: the prior ``estimate(prior="auto")`` takes where every measure has a cutoff: the study's choice
#: among the priors that need no pool information
DEFAULT_PRIOR = "condensed"
#: ``spread="auto"`` (the default): the (shift μ, spread σ) of each prior chosen on all four
#: collections by the leave-one-collection-out study (``bench/calibration.py``; ``bench/calibration.md``)
SETTINGS: dict[str, tuple[float, float]] = {'pool': (0.25, 1.5), 'run': (0.0, 3.0), 'both': (0.25, 2.0), 'condensed': (-0.25, 3.0), 'unique': (-0.25, 1.0)}

#: the coverage of the 95 % intervals of run means with ``spread="auto"`` in that study, per held-out
#: collection (its μ and σ chosen on the three others): (collection, measure, coverage, runs)
COVERAGE: dict[str, list[tuple[str, str, float, int]]] = {
    'pool': [('CLEF 2016', 'P@10', 1.0, 16), ('CLEF 2016', 'nDCG@10', 1.0, 16), ('CLEF 2016', 'AP@10', 1.0, 16), ('CLEF 2016', 'RBP@10', 1.0, 16), ('CLEF 2018', 'P@10', 1.0, 19), ('CLEF 2018', 'nDCG@10', 1.0, 19), ('CLEF 2018', 'AP@10', 1.0, 19), ('CLEF 2018', 'RBP@10', 1.0, 19), ('TREC DL 2021', 'P@10', 0.952, 63), ('TREC DL 2021', 'nDCG@10', 0.952, 63), ('TREC DL 2021', 'AP@10', 0.968, 63), ('TREC DL 2021', 'RBP@10', 0.889, 63), ('CLEF 2015', 'P@10', 1.0, 59), ('CLEF 2015', 'nDCG@10', 0.983, 59), ('CLEF 2015', 'AP@10', 0.983, 59), ('CLEF 2015', 'RBP@10', 0.966, 59)],
    'run': [('CLEF 2016', 'P@10', 1.0, 16), ('CLEF 2016', 'nDCG@10', 1.0, 16), ('CLEF 2016', 'AP@10', 1.0, 16), ('CLEF 2016', 'RBP@10', 1.0, 16), ('CLEF 2018', 'P@10', 1.0, 19), ('CLEF 2018', 'nDCG@10', 1.0, 19), ('CLEF 2018', 'AP@10', 1.0, 19), ('CLEF 2018', 'RBP@10', 1.0, 19), ('TREC DL 2021', 'P@10', 0.825, 63), ('TREC DL 2021', 'nDCG@10', 0.81, 63), ('TREC DL 2021', 'AP@10', 0.81, 63), ('TREC DL 2021', 'RBP@10', 0.825, 63), ('CLEF 2015', 'P@10', 1.0, 59), ('CLEF 2015', 'nDCG@10', 1.0, 59), ('CLEF 2015', 'AP@10', 1.0, 59), ('CLEF 2015', 'RBP@10', 1.0, 59)],
    'both': [('CLEF 2016', 'P@10', 1.0, 16), ('CLEF 2016', 'nDCG@10', 1.0, 16), ('CLEF 2016', 'AP@10', 1.0, 16), ('CLEF 2016', 'RBP@10', 1.0, 16), ('CLEF 2018', 'P@10', 1.0, 19), ('CLEF 2018', 'nDCG@10', 1.0, 19), ('CLEF 2018', 'AP@10', 1.0, 19), ('CLEF 2018', 'RBP@10', 1.0, 19), ('TREC DL 2021', 'P@10', 0.921, 63), ('TREC DL 2021', 'nDCG@10', 0.873, 63), ('TREC DL 2021', 'AP@10', 0.921, 63), ('TREC DL 2021', 'RBP@10', 0.81, 63), ('CLEF 2015', 'P@10', 1.0, 59), ('CLEF 2015', 'nDCG@10', 1.0, 59), ('CLEF 2015', 'AP@10', 1.0, 59), ('CLEF 2015', 'RBP@10', 1.0, 59)],
    'condensed': [('CLEF 2016', 'P@10', 1.0, 16), ('CLEF 2016', 'nDCG@10', 1.0, 16), ('CLEF 2016', 'AP@10', 1.0, 16), ('CLEF 2016', 'RBP@10', 1.0, 16), ('CLEF 2018', 'P@10', 1.0, 19), ('CLEF 2018', 'nDCG@10', 1.0, 19), ('CLEF 2018', 'AP@10', 1.0, 19), ('CLEF 2018', 'RBP@10', 1.0, 19), ('TREC DL 2021', 'P@10', 0.968, 63), ('TREC DL 2021', 'nDCG@10', 0.984, 63), ('TREC DL 2021', 'AP@10', 0.937, 63), ('TREC DL 2021', 'RBP@10', 0.968, 63), ('CLEF 2015', 'P@10', 1.0, 59), ('CLEF 2015', 'nDCG@10', 0.983, 59), ('CLEF 2015', 'AP@10', 0.966, 59), ('CLEF 2015', 'RBP@10', 1.0, 59)],
    'unique': [('CLEF 2016', 'P@10', 1.0, 16), ('CLEF 2016', 'nDCG@10', 1.0, 16), ('CLEF 2016', 'AP@10', 1.0, 16), ('CLEF 2016', 'RBP@10', 1.0, 16), ('CLEF 2018', 'P@10', 1.0, 19), ('CLEF 2018', 'nDCG@10', 1.0, 19), ('CLEF 2018', 'AP@10', 1.0, 19), ('CLEF 2018', 'RBP@10', 1.0, 19), ('TREC DL 2021', 'P@10', 1.0, 63), ('TREC DL 2021', 'nDCG@10', 0.952, 63), ('TREC DL 2021', 'AP@10', 1.0, 63), ('TREC DL 2021', 'RBP@10', 0.952, 63), ('CLEF 2015', 'P@10', 0.966, 59), ('CLEF 2015', 'nDCG@10', 0.966, 59), ('CLEF 2015', 'AP@10', 0.949, 59), ('CLEF 2015', 'RBP@10', 0.966, 59)],
}

#: the coverage of the same 95 % intervals at each prior's ``spread="auto"`` setting on collections the
#: study never used to choose anything (``bench/calibration.py``, :func:`unseen_check` there):
#: (collection, measure, coverage, runs)
UNSEEN: dict[str, list[tuple[str, str, float, int]]] = {
    'pool': [('SynDL DL 2021', 'P@10', 0.984, 63), ('SynDL DL 2021', 'nDCG@10', 0.984, 63), ('SynDL DL 2021', 'AP@10', 0.984, 63), ('SynDL DL 2021', 'RBP@10', 0.984, 63)],
    'run': [('SynDL DL 2021', 'P@10', 0.984, 63), ('SynDL DL 2021', 'nDCG@10', 1.0, 63), ('SynDL DL 2021', 'AP@10', 0.984, 63), ('SynDL DL 2021', 'RBP@10', 1.0, 63)],
    'both': [('SynDL DL 2021', 'P@10', 0.984, 63), ('SynDL DL 2021', 'nDCG@10', 1.0, 63), ('SynDL DL 2021', 'AP@10', 0.984, 63), ('SynDL DL 2021', 'RBP@10', 1.0, 63)],
    'condensed': [('SynDL DL 2021', 'P@10', 0.984, 63), ('SynDL DL 2021', 'nDCG@10', 0.984, 63), ('SynDL DL 2021', 'AP@10', 0.984, 63), ('SynDL DL 2021', 'RBP@10', 0.984, 63)],
    'unique': [('SynDL DL 2021', 'P@10', 1.0, 63), ('SynDL DL 2021', 'nDCG@10', 1.0, 63), ('SynDL DL 2021', 'AP@10', 1.0, 63), ('SynDL DL 2021', 'RBP@10', 1.0, 63)],
}

#: the log-odds grid of the centring table and the Gauss–Hermite nodes of its expectations
#: (non-positive half: the centring is odd, c_σ(−a) = −c_σ(a), as expit(−x) = 1 − expit(x))
_GRID = np.linspace(-40.0, 0.0, 1601)
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(80)


@lru_cache(maxsize=32)
def _centring_table(spread: float) -> np.ndarray:
    """c_σ on :data:`_GRID`: E[expit(a + c + σz)] = expit(a), bisection on the bracket ±(σ²/2 + 1)
    (on a <= 0, where expit keeps its relative precision)."""
    target = expit(_GRID)[:, None]
    low = np.full(len(_GRID), -(spread ** 2) / 2.0 - 1.0)
    high = -low
    offsets = np.sqrt(2.0) * spread * _NODES[None, :]
    for _ in range(64):
        middle = (low + high) / 2.0
        mean = expit(_GRID[:, None] + middle[:, None] + offsets) @ _WEIGHTS / np.sqrt(np.pi)
        above = mean > target[:, 0]
        high, low = np.where(above, middle, high), np.where(above, low, middle)
    return (low + high) / 2.0


def centring(log_odds: np.ndarray, spread: float) -> np.ndarray:
    """The shift ``c_σ(a)`` making ``expit(a + c + σz)`` have the mean ``expit(a)``, ``z ~ N(0, 1)``
    (0 for ``σ = 0``; ±σ²/2 beyond the table, the log-normal limits; any shape, ±inf allowed)."""
    if spread <= 0:
        return np.zeros_like(log_odds, dtype=np.float64)
    clipped = np.clip(log_odds, _GRID[0], -_GRID[0])
    return -np.sign(clipped) * np.interp(-np.abs(clipped), _GRID, _centring_table(float(spread)))


def shifted(probabilities: np.ndarray, shift: float, spread: float, noise) -> np.ndarray:
    """(... x rows x grades) probabilities moved by the run effect of the module docstring: the
    relevant share ``s`` to ``s_μ = expit(logit s + μ)``, the relevant grades keeping their
    proportions; then every cumulative share ``S_g = P(grade >= g)``, ``g > 0``, of that prior to
    ``expit(logit S_g + c_σ(logit S_g) + noise)`` (``noise``: σ·z broadcast to the rows, or 0), one
    shift of all thresholds on the log-odds scale. Shares of 0 and 1 stay."""
    relevant = probabilities[..., 1:]
    share = np.clip(relevant.sum(axis=-1), 0.0, 1.0)
    if shift != 0:
        moved = expit(logit(share) + shift)
        inside = (share > 0) & (share < 1)
        relevant = relevant * np.divide(moved, share, out=np.ones_like(share), where=inside)[..., None]
    tail = np.clip(np.cumsum(relevant[..., ::-1], axis=-1)[..., ::-1], 0.0, 1.0)
    centre = logit(tail)
    noise = np.asarray(noise, dtype=np.float64)
    moved = np.where((tail > 0) & (tail < 1), expit(centre + centring(centre, spread) + noise[..., None]), tail)
    # a + c_σ(a) increases with a, so the moved shares still fall with the grade
    grades = np.maximum(moved - np.concatenate([moved[..., 1:], np.zeros_like(moved[..., :1])], axis=-1), 0.0)
    return np.concatenate([np.maximum(1.0 - moved[..., :1], 0.0), grades], axis=-1)


@dataclass
class LogitEffect:
    """The prior of the unjudged rows with the run effect of the module docstring: ``base``
    (rows x grades, or a :class:`~pdeval.analysis.estimates.unique_priors.UnitEffect` drawn
    first), ``run_of_row`` the run code of each row, one ``z`` per run and resample."""

    base: Union[np.ndarray, UnitEffect]
    run_of_row: np.ndarray
    n_runs: int
    shift: float
    spread: float

    def take(self, keep: np.ndarray) -> "LogitEffect":
        base = self.base.take(keep) if isinstance(self.base, UnitEffect) else self.base[keep]
        return LogitEffect(base, self.run_of_row[keep], self.n_runs, self.shift, self.spread)

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size x rows x grades) probabilities: the base prior's draw, then one ``z`` per run."""
        if isinstance(self.base, UnitEffect):
            base = self.base.draw(size, rng)
        else:
            base = np.broadcast_to(self.base, (size,) + self.base.shape)
        noise = 0.0
        if self.spread > 0:
            noise = self.spread * stratified_normal(size, self.n_runs, rng)[:, self.run_of_row]
        return shifted(base, self.shift, self.spread, noise)


def stratified_normal(size: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """(size x columns) standard normal draws, each column a Latin hypercube sample (McKay,
    Beckman & Conover, *Technometrics* 1979): ``z_b = Φ⁻¹((π(b) + U_b) / size)`` with ``π`` a random
    permutation of the ``size`` equiprobable strata and ``U_b`` uniform. Every draw is N(0, 1), and
    the column holds one draw from each stratum, so its mean and quantiles vary far less than those
    of independent draws: the run effect's part of the estimate's Monte Carlo error nearly vanishes."""
    strata = rng.permuted(np.broadcast_to(np.arange(size, dtype=np.float64), (columns, size)), axis=1).T
    uniform = (strata + rng.random((size, columns))) / size
    return ndtri(np.clip(uniform, np.finfo(np.float64).tiny, 1.0 - np.finfo(np.float64).epsneg))


def setting_of(spread: Union[str, float], shift: Optional[float], prior: str, method: str) -> tuple[float, float]:
    """(μ, σ) for ``spread=`` and ``shift=``: ``spread="auto"`` takes :data:`SETTINGS` of the prior
    (its μ unless ``shift`` is given); a number ``σ`` takes ``shift`` or 0. ``method="labels"``: (0, 0),
    its calibration is resampled already."""
    if method != "bootstrap":
        return 0.0, 0.0
    if spread == "auto":
        mu, sigma = SETTINGS.get(prior, (0.0, 0.0))
        return (mu if shift is None else float(shift)), sigma
    return (0.0 if shift is None else float(shift)), float(spread)


def with_spread(probabilities, run_of_row: np.ndarray, spread: float, shift: float = 0.0):
    """The prior with the run effect of the module docstring (unchanged for ``μ = σ = 0`` and for a
    calibrated prior); without ``σ`` and a unit to draw, the shifted probabilities themselves."""
    if (spread <= 0 and shift == 0) or isinstance(probabilities, CalibrationEffect):
        return probabilities
    if spread <= 0 and not isinstance(probabilities, UnitEffect):
        return shifted(np.asarray(probabilities, dtype=np.float64), shift, 0.0, 0.0)
    n_runs = int(np.max(run_of_row, initial=-1)) + 1
    base = probabilities if isinstance(probabilities, UnitEffect) else np.asarray(probabilities, dtype=np.float64)
    return LogitEffect(base, np.asarray(run_of_row), n_runs, float(shift), float(spread))


def documented(frame, method: str, prior: str, shift: float, spread: float, confidence: float):
    """``frame`` with the bootstrap's setting and, for the default one, its measured coverage in
    its ``attrs``: one record per collection and measure, ``check`` "held out" (the study's
    :data:`COVERAGE`) or "never seen" (:data:`UNSEEN`); ``coverage_reached`` only if every record
    reaches 0.90 (the other methods' frames unchanged)."""
    if method != "bootstrap":
        return frame
    mu, sigma = SETTINGS.get(prior, (np.nan, np.nan))
    default = np.isclose(spread, sigma) and np.isclose(shift, mu) and np.isclose(confidence, 0.95)
    checks = (("held out", COVERAGE.get(prior, [])), ("never seen", UNSEEN.get(prior, []))) if default else ()
    coverage = [dict(zip(("collection", "measure", "coverage", "runs"), row), check=check)
                for check, rows in checks for row in rows]
    reached = bool(coverage) and all(record["coverage"] >= 0.90 for record in coverage)
    frame.attrs.update(prior=prior, shift=float(shift), spread=float(spread), coverage=coverage,
                       coverage_reached=reached)
    return frame


__all__ = ["COVERAGE", "DEFAULT_PRIOR", "SETTINGS", "UNSEEN", "LogitEffect", "centring", "documented", "setting_of", "shifted",
           "stratified_normal", "with_spread"]
