"""Meta-evaluation of automatic judges: leaderboard correlations with intervals, and which judges differ.

:func:`compare_judges` compares the leaderboard under every label set (an LLM judge, say) with
the leaderboard under a reference label set (the human labels): each coefficient of
:func:`pdeval.compare_leaderboards` with a topic-bootstrap interval, or -- ``pairs=True`` --
the paired comparison of every two label sets against the same reference (the difference of
their coefficients, its interval and p-value), so that a table of many judges can say which
differences are larger than the sampling error over topics.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping, Sequence, Union

import pandas as pd

from pdeval.analysis.judges.labels import LABEL_SET
from pdeval.analysis.judges.leaderboards import check_overlap, split_reference
from pdeval.analysis.rankings.alignment import MISSING_POLICIES
from pdeval.analysis.rankings.coefficients import METHOD
from pdeval.analysis.rankings.intervals import INTERVALS, correlation_intervals
from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Real, Text, contract
from pdeval.common.seeds import SEED
from pdeval.errors import SchemaError
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import GROUP

__all__ = ["compare_judges"]


@contract(result=Frame("result", allowed=(LABEL_SET,)), reference=Text("a label set name"),
          methods=ListOf(METHOD, unique=True), system=Text("a column name"),
          missing=Choice(*MISSING_POLICIES, renamed={"raise": "error", "default": "fill"}), fill_value=Real(),
          n_resamples=Integer(2), confidence=Real(0, 1, closed="neither"), interval=Choice(*INTERVALS), seed=SEED,
          pairs=Boolean(), group=GROUP)
def compare_judges(
    result: pd.DataFrame,
    reference: str,
    *,
    methods: Union[str, Sequence[str]] = ("tau_b", "tau_ap_b"),
    pairs: bool = False,
    system: str = "run",
    missing: Literal["warn", "error", "skip", "fill"] = "warn",
    fill_value: float = 0.0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    interval: str = "auto",
    seed=0,
    group: Union[None, Mapping[str, Any], Callable[[str], Any]] = None,
) -> pd.DataFrame:
    """Every label set's leaderboard correlation with the reference's, with intervals, or every two compared.

    ``result`` is a per-topic result frame with a ``label_set`` column (:func:`pdeval.leaderboards`).
    For each measure and label set, the per-system means are compared with those under the
    ``reference`` label set by each coefficient of ``methods`` (as :func:`pdeval.rank_correlation`
    computes them: ``tau_b``, ``tau_ap_b``, ``tau_gap``, ``spearman``, ``pearson``, ``name@k`` on the
    reference's k best systems, ...). The topics are resampled ``n_resamples`` times; on each, every
    leaderboard and the coefficients are recomputed (Efron & Tibshirani 1993;
    :func:`pdeval.correlation_intervals`). With ``pairs=True`` every two label sets A, B are
    compared against the same reference: ``difference = c(A) - c(B)``, its paired-bootstrap interval
    and p-value (the same resamples serve A, B and the reference, Steiger 1980); with 33 judges,
    528 pairs: correct the p-values for multiplicity. ``group`` names groups of systems (the runs
    re-ranked by the judging model against the rest, Clarke & Dietz 2024): every coefficient is
    then computed within each group, a ``group`` column telling which.

    Parameters
    ----------
    result : DataFrame
        A per-topic result frame with a ``label_set`` column.
    reference : str
        The label set whose leaderboard is the reference (the human labels).
    methods : str or list of str, default ('tau_b', 'tau_ap_b')
        Coefficients of :func:`pdeval.rank_correlation`.
    pairs : bool, default False
        One row per pair of label sets instead of one per label set.
    system : str, default 'run'
        The column naming the systems.
    missing : {'warn', 'error', 'skip', 'fill'}, default 'warn'
        Systems under one of the two label sets only, as in :func:`pdeval.rank_correlation`.
    fill_value : float, default 0.0
        With ``missing="fill"``, the value of a reference system a label set lacks.
    n_resamples : int, default 1000
        How many times the topics are resampled.
    confidence : float, default 0.95
        The intervals' coverage.
    interval : {'auto', 'percentile', 'bca', 'simex', 'hull', 'bounds'}, default 'auto'
        As in :func:`pdeval.correlation_intervals` (the ``interval`` column names the one each row took).
    seed : int, numpy.random.Generator or None, default 0
        The resamples' randomness.
    group : mapping or callable, optional
        Each system's group (a mapping system -> group, or a function of the name); all need one.

    Returns
    -------
    pandas.DataFrame
        ``pairs=False``: ``measure, label_set[, group], method, value, debiased, low, high, interval,
        n_runs, n_topics`` (``value`` the sample coefficient, ``debiased`` its SIMEX estimate).
        ``pairs=True``: ``measure, label_set, label_set_other, method, value, value_other,
        difference, difference_debiased, low, high, interval, p_value, n_topics``.

    Raises
    ------
    SchemaError
        No ``label_set`` column, an unknown reference, a label set sharing < 2 systems with it, a system without a group.

    See Also
    --------
    leaderboards : The result frame compared.
    compare_leaderboards : The coefficients and top-k overlaps without intervals.
    correlation_intervals : The same on any result frame and reference frame.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> human = pd.DataFrame({"run": np.repeat(list("abcde"), 8), "query_id": np.tile(list("12345678"), 5),
    ...                       "measure": "AP", "value": (rng.random((5, 8)) + np.arange(5)[:, None] / 5).ravel()})
    >>> boards = pd.concat([human.assign(label_set="human"),
    ...                     human.assign(label_set="good", value=human["value"] + rng.normal(0, 0.05, 40)),
    ...                     human.assign(label_set="poor", value=rng.random(40))])
    >>> table = pdeval.compare_judges(boards, "human", methods="tau_b", n_resamples=200, seed=0)
    >>> table[["label_set", "method", "value", "n_runs"]]
      label_set method  value  n_runs
    0      good  tau_b    1.0       5
    1      poor  tau_b    0.0       5
    >>> pdeval.compare_judges(boards, "human", methods="tau_b", n_resamples=200, seed=0, pairs=True)["difference"]
    0    1.0
    Name: difference, dtype: float64
    """
    est, ref, by = split_reference(result, reference, system)
    check_overlap(est, ref, reference, system)
    if group is not None:
        est, ref, by = _grouped(est, system, group), _grouped(ref, system, group), [*by, "group"]
    options = dict(methods=methods, by=by, system=system, missing=missing, fill_value=fill_value,
                   n_resamples=n_resamples, confidence=confidence, interval=interval, seed=seed)
    return correlation_intervals(est, ref, pairs=pairs, **options).drop(columns="reference")


def _grouped(frame: pd.DataFrame, system: str, group) -> pd.DataFrame:
    """``frame`` with the ``group`` of each system; a system without one is refused by name."""
    names = frame[system].astype(str)
    lookup = {n: group(n) for n in names.unique()} if callable(group) else {str(k): v for k, v in group.items()}
    groups = names.map(lookup)  # a callable is called once per system, not once per row
    lacking = sorted(names[groups.isna()].unique())
    if lacking:
        raise SchemaError(f"compare_judges(): {len(lacking)} system(s) have no group in group= ({lacking[:5]}): give "
                          "every system a group")
    return frame.assign(group=groups.to_numpy())
