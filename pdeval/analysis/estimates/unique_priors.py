"""The ``"unique"`` prior of the bootstrap: learnt from the pool's own leave-one-out behaviour.

A run outside the pool meets unjudged documents that no pooled run put in its top
``pool_depth``. The judged documents most like them are the pool's *unique* documents: those
that exactly one pooled unit (a run, or a group of runs such as a team, ``group=``) brought
into the depth-``pool_depth`` pool — had that unit not been pooled, they would be unjudged
documents of its runs (Zobel, SIGIR 1998; Buckley, Dimmick, Soboroff & Voorhees, IRJ 2007).
They are less often relevant than the pool's average, and by how much varies from unit to unit.

**Base prior.** A row of ranking ``r`` (a run's list for topic ``t``) has the base prior
``b_{r,g} = ½ π_{t,g} + ½ ρ_{r,g}``: Fröbe et al.'s (ECIR 2023) mean of the pool prior
``π_t`` (the share of grade ``g`` among the topic's judged documents) and the run prior ``ρ_r``
(the share among the judged documents of the ranking's top ``pool_depth``; ``b = π`` when there
are none). Topic difficulty and the run's quality stay in the base prior.

**Factors (leave-one-unit-out).** For a pooled unit ``u``, take every row of its runs' top
``pool_depth`` whose document is unique to ``u`` and judged, and compute its base prior as if
``u`` had been left out: ``π^{-u}_t`` from the topic's judged documents without the unique
documents of ``u``, ``ρ^{-u}_r`` from the ranking's judged rows without them. With ``[g_i = g]``
the row's judged grade::

    O_{u,g} = Σ_i [g_i = g]        E_{u,g} = Σ_i b^{-u}_{i,g}        f_{u,g} = O_{u,g} / E_{u,g}

(``f_{u,g} = 1`` when ``E_{u,g} = 0``: nothing to learn). The factor carries only how much
less (or more) often than its base prior a document of a unit's own is relevant, per grade. An
unjudged document drawn with factors ``f`` gets

    q_g = b_g · f_g  (g > 0),   scaled to sum 1 if Σ_{g>0} q_g > 1,   p_0 = 1 - Σ_{g>0} q_g.

**Random effect.** In every resample each run draws ONE unit (uniformly among the units whose
relevant unique documents are expected at all) and uses its factors on all its topics: the
unjudged documents of one run are correlated across topics, as they are in reality, so the
interval of a run's mean expresses the spread between units and does not shrink with the number
of topics. The estimate (the mean over resamples) is the base prior scaled by the average unit.

**Smoothed draws.** With ``n`` pooled units a new unit falls beyond all of them with
probability ``2 / (n + 1)``, so the observed units alone would cover too rarely when ``n`` is
small. The drawn unit's factors are therefore multiplied by ``exp(h · z)``, ``z ~ N(0, 1)``
(one ``z`` per run and resample, all grades alike): the smoothed bootstrap (Silverman & Young,
Biometrika 1987) of the units' combined relevant factors ``F_u = Σ_{g>0} O_{u,g} / Σ_{g>0}
E_{u,g}`` on the log scale, with the normal-reference bandwidth ``h = 1.06 · sd(log F_u) ·
n^(-1/5)`` (Silverman, *Density Estimation*, 1986; units with ``F_u = 0`` are left out of the
sd; ``h = 0`` with fewer than three). A run whose unit lies far beyond every pooled unit (a
team much better than the others at finding what nobody else found) is still not covered.

**No leakage.** The factors come from the qrels and the pooled runs only; a run outside the
pool has no unique documents in them. Leaving a team out of the pool (its unique documents
removed from the qrels and its runs outside ``pooled``) learns its factor from the others only.

No loop over runs, topics or resamples: counts by ``bincount`` over (group, grade) codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Union

import numpy as np
import pandas as pd

from pdeval.analysis.estimates.label_priors import both_priors, grade_counts, shares
from pdeval.common.contract import contract
from pdeval.common.options import check_int
from pdeval.engine.ranking import rank_run
from pdeval.errors import PdevalError, SchemaError
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import GROUP, POOL_DEPTH, POOLED
from pdeval.judgments.pooling import check_pooled, run_groups

GroupLike = Union[None, Mapping[str, str], Callable[[str], str]]


@dataclass
class UnitFactors:
    """The factors of the pooled units: ``factors`` (units x grades, column 0 unused),
    ``observed`` and ``expected`` (units x grades), ``unique`` (judged unique documents per unit)
    and the unit names."""

    units: np.ndarray
    unique: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    factors: np.ndarray

    @property
    def usable(self) -> np.ndarray:
        """Units whose relevant unique documents are expected at all (some judged unique document
        in a topic with relevant judged documents)."""
        return self.expected[:, 1:].sum(axis=1) > 0


def unit_factors(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    grades: np.ndarray,
    *,
    pooled: Optional[Iterable[str]],
    pool_depth: int,
    group: GroupLike = None,
) -> UnitFactors:
    """The factors ``f_{u,g}`` of the module docstring, for every pooled unit.

    ``run`` and ``qrels`` are canonical frames; ``grades`` the collection's judged levels
    (ascending, starting at 0). A qrels grade outside ``grades`` is an error of the caller.
    """
    pool_depth = check_int("pool_depth", pool_depth, 1)
    names = check_pooled(pd.unique(run["run"]).tolist(), pooled)
    groups = run_groups(names, group)
    units = np.array(sorted(set(groups.values())), dtype=object)
    unit_of_run = {name: int(np.searchsorted(units, groups[name])) for name in names}
    judged = qrels.loc[qrels["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    topics = np.sort(pd.unique(judged["query_id"]))
    n_units, n_topics, n_grades = len(units), len(topics), len(grades)

    pool_runs = run.loc[run["run"].isin(set(names)) & run["query_id"].isin(set(topics))]
    top = rank_run(pool_runs[["run", "query_id", "doc_id", "score"]], depth=pool_depth)
    unit = top["run"].map(unit_of_run).to_numpy(dtype=np.int64)
    topic = np.searchsorted(topics, top["query_id"].to_numpy())
    contributions = pd.DataFrame({"query_id": top["query_id"].to_numpy(), "doc_id": top["doc_id"].to_numpy(),
                                  "unit": unit}).drop_duplicates()
    n_units_of = contributions.groupby(["query_id", "doc_id"], sort=False)["unit"].transform("size").to_numpy()
    unique_docs = contributions.loc[n_units_of == 1]
    # per row of the pooled top pool_depth: its judged grade code (-1 none), whether only its unit pooled it
    rows = top[["query_id", "doc_id"]].reset_index(drop=True)
    grade_of = judged.assign(code=np.searchsorted(grades, judged["relevance"].to_numpy(dtype=np.int64)))
    code = rows.merge(grade_of[["query_id", "doc_id", "code"]], on=["query_id", "doc_id"], how="left")["code"]
    code = code.fillna(-1).to_numpy(dtype=np.int64)
    hidden = rows.merge(unique_docs[["query_id", "doc_id"]].assign(u=True), on=["query_id", "doc_id"],
                        how="left")["u"].fillna(False).to_numpy(dtype=bool)
    topic_counts = grade_counts(grade_of["code"].to_numpy(), np.searchsorted(topics, judged["query_id"].to_numpy()),
                                n_topics, n_grades)
    # the unit's unique judged documents (each once) per topic and grade, and the pool prior without them
    first = ~rows.assign(u=unit).duplicated().to_numpy()
    own = grade_counts(code[hidden & first], (unit * n_topics + topic)[hidden & first],
                       n_units * n_topics, n_grades).reshape(n_units, n_topics, n_grades)
    pool = shares(topic_counts[None, :, :] - own)  # units x topics x grades
    # each hidden judged row's prior had its unit been left out: pool and the run's other judged rows
    list_code = pd.factorize(pd.Series(top["run"].to_numpy()) + "\x1f" + top["query_id"].astype(str))[0]
    seen = (code >= 0) & ~hidden
    run_counts = grade_counts(code[seen], list_code[seen], int(list_code.max(initial=-1)) + 1, n_grades)
    target = hidden & (code >= 0)
    counts = run_counts[list_code[target]]
    base = both_priors(pool[unit[target], topic[target]], shares(counts), counts.sum(axis=1) > 0)
    observed = grade_counts(code[target], unit[target], n_units, n_grades)
    expected = np.zeros((n_units, n_grades))
    np.add.at(expected, unit[target], base)
    factors = np.divide(observed, expected, out=np.ones_like(observed), where=expected > 0)
    return UnitFactors(units=units, unique=own.sum(axis=(1, 2)), observed=observed, expected=expected,
                       factors=factors)


def factor_table(factors: UnitFactors, grades: np.ndarray) -> pd.DataFrame:
    """Tidy ``unit, grade, unique, observed, expected, factor, usable`` (relevant grades only)."""
    n_units, rel = len(factors.units), np.flatnonzero(grades > 0)
    return pd.DataFrame({
        "unit": np.repeat(factors.units, len(rel)).astype(str),
        "grade": np.tile(grades[rel], n_units),
        "unique": np.repeat(factors.unique, len(rel)).astype(np.int64),
        "observed": factors.observed[:, rel].ravel(),
        "expected": factors.expected[:, rel].ravel(),
        "factor": factors.factors[:, rel].ravel(),
        "usable": np.repeat(factors.usable, len(rel)),
    })


@contract(run=Frame("run"), qrels=Frame("qrels", variants=False), pool_depth=POOL_DEPTH, pooled=POOLED, group=GROUP)
def unique_factors(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    pool_depth: int,
    pooled: Optional[Iterable[str]] = None,
    group: GroupLike = None,
) -> pd.DataFrame:
    """The factors the ``"unique"`` prior of :func:`pdeval.estimate` draws from.

    For every pooled unit ``u`` (a run, or with ``group`` a group of runs) and relevant grade
    ``g``: ``f_{u,g} = O_{u,g} / E_{u,g}``, the rows of ``u``'s runs holding a judged unique
    document of ``u`` (one only ``u`` brought into the depth-``pool_depth`` pool) with grade
    ``g``, over the number their base prior expects had ``u`` been left out (the mean of the
    topic's pool prior and the ranking's judged rows, both without ``u``'s unique documents;
    Fröbe, Gienapp, Potthast & Hagen, ECIR 2023). See :mod:`pdeval.analysis.estimates.unique_priors`;
    unique documents after Zobel (SIGIR 1998) and Buckley, Dimmick, Soboroff & Voorhees (IRJ 2007).

    Parameters
    ----------
    run : DataFrame
        Run frame holding the pooled runs (others are ignored).
    qrels : DataFrame
        The judgments of the pool (one qrels variant).
    pool_depth : int
        The depth of the pool that built the qrels.
    pooled : list of str, optional
        The runs that built the pool (default: every run of the frame).
    group : mapping or callable, optional
        The unit of each pooled run (a mapping run -> group or a callable such as
        ``lambda run: run.split("_")[0]``; default: each run its own unit), as in
        :func:`pdeval.leave_out_pooling`.

    Returns
    -------
    DataFrame
        ``unit, grade, unique, observed, expected, factor, usable``: one row per unit and
        relevant grade; ``unique`` counts the unit's judged unique documents (all grades),
        ``observed`` and ``expected`` count rows (a document in several runs of the unit counts
        in each),
        ``usable`` tells whether the prior draws this unit (some relevant unique document
        expected).

    Raises
    ------
    PdevalError
        Unknown or no pooled runs, a bad group mapping, ``pool_depth`` below 1.
    SchemaError
        Qrels without any judged document, or with variant keys.

    See Also
    --------
    estimate : Its ``prior='unique'`` draws from these factors.
    leave_out_pooling : Qrels without each unit's unique documents.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> pdeval.unique_factors(run, qrels, pool_depth=3).round(3)
      unit  grade  unique  observed  expected  factor  usable
    0    a      1       1       0.0     0.875     0.0    True
    1    b      1       2       1.0     1.667     0.6    True
    2    c      1       0       0.0     0.000     1.0   False
    """
    q = as_qrels(qrels)  # of one variant (the contract refused several): its key columns can go
    judged = q.loc[q["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    if judged.empty:
        raise SchemaError("unique_factors(): the qrels hold no judged document: no factor can be learnt")
    grades = np.union1d([0], judged["relevance"].to_numpy(dtype=np.int64))
    factors = unit_factors(as_run(run, duplicates=None), judged, grades, pooled=pooled, pool_depth=pool_depth,
                           group=group)
    return factor_table(factors, grades)


@dataclass
class UnitEffect:
    """The ``"unique"`` prior of the unjudged rows: ``pool`` (rows x grades) base priors,
    ``run_of_row`` (rows) the run code of each row, ``factors`` (units x grades) the usable
    units' factors, one drawn per run and resample and smoothed with ``bandwidth`` (log scale)."""

    pool: np.ndarray
    run_of_row: np.ndarray
    n_runs: int
    factors: np.ndarray
    bandwidth: float = 0.0

    def take(self, keep: np.ndarray) -> "UnitEffect":
        return UnitEffect(self.pool[keep], self.run_of_row[keep], self.n_runs, self.factors, self.bandwidth)

    def probabilities(self, factors: np.ndarray) -> np.ndarray:
        """(... x rows x grades) probabilities of the rows under (... x rows x grades) factors."""
        relevant = self.pool[..., 1:] * factors[..., 1:]
        mass = relevant.sum(axis=-1, keepdims=True)
        relevant = relevant / np.maximum(mass, 1.0)
        return np.concatenate([1.0 - relevant.sum(axis=-1, keepdims=True), relevant], axis=-1)

    def mean(self) -> np.ndarray:
        """(rows x grades): the probabilities averaged over the units (the expected draw)."""
        return self.probabilities(self.factors[:, None, :]).mean(axis=0) if len(self.pool) else self.pool

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size x rows x grades) probabilities: one unit per run and resample."""
        unit = rng.integers(0, len(self.factors), size=(size, self.n_runs))
        factors = self.factors[unit]
        if self.bandwidth > 0:
            factors = factors * np.exp(self.bandwidth * rng.standard_normal((size, self.n_runs, 1)))
        return self.probabilities(factors[:, self.run_of_row, :])


def unit_effect(pool: np.ndarray, run_of_row: np.ndarray, n_runs: int, factors: UnitFactors) -> UnitEffect:
    """The prior of the unjudged rows, refused when no unit can be drawn although rows need it."""
    usable = factors.factors[factors.usable]
    if len(pool) and len(usable) < 2:
        raise PdevalError(
            f"prior='unique' learns from the unique documents of at least two pooled units, and "
            f"{len(usable)} of the {len(factors.units)} units have judged unique documents in topics with "
            "relevant ones: check pooled= and pool_depth= (the depth of the pool that built the qrels), "
            "pool more units (group= coarser than the runs joins them) or use prior='pool'"
        )
    combined = factors.observed[factors.usable, 1:].sum(axis=1) / factors.expected[factors.usable, 1:].sum(axis=1)
    logs = np.log(combined[combined > 0])
    bandwidth = 1.06 * float(np.std(logs, ddof=1)) * len(logs) ** -0.2 if len(logs) > 2 else 0.0
    return UnitEffect(pool, run_of_row, n_runs, usable, bandwidth)


__all__ = ["UnitEffect", "UnitFactors", "factor_table", "unique_factors", "unit_effect",
           "unit_factors"]
