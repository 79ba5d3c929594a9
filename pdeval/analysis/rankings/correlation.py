"""Rank correlations between system rankings: Kendall tau, tau_AP, Spearman, Pearson, RMS (MEASURES.md E8).

A *system ranking* is the vector of per-run means of one measure on one qrels variant.
The functions here compute those means from a tidy result frame and compare them:

* per-run means come from :func:`pdeval.summarize` (:mod:`pdeval.evaluation.results`);
* :func:`rank_correlation` -- Kendall's tau-a / tau-b, AP correlation tau_AP, Spearman,
  Pearson and RMS error between the means of every (measure, variant) group of a result
  frame and a reference ranking (full judgments, or another measure);
* :func:`correlation_table` -- the measure-by-measure table of Sakai (2007), Table 2;
* array-level statistics :func:`kendall_tau`, :func:`tau_ap`, :func:`spearman`,
  :func:`pearson`, :func:`rms_error` and :func:`tau_significance`.

Vocabulary used by every function of this module and of :mod:`pdeval.analysis.statistics.significance`:

``system``
    the column naming a system (default ``"run"``). To rank (run, parameter) combinations,
    build one column first, e.g. ``df.assign(run=df.run + "@b=" + df.b.astype(str))``.
``by``
    the variant key columns that define separate rankings (default: every key column other
    than ``system`` and ``query_id``, e.g. ``level``, ``sample``, a swept ``b``). Key
    columns left out of ``by`` are averaged over together with the topics.
"""

from __future__ import annotations

import warnings
from typing import Iterable, Iterator, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.rankings.coefficients import (
    METHODS,
    correlation,
    kendall_tau,
    pearson,
    rms_error,
    spearman,
    tau_ap,
    tau_significance,
)
from pdeval.common.contract import Boolean, Choice, ListOf, Nullable, Real, Text, contract
from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from pdeval.frames.domains import Frame
from pdeval.evaluation.results import require_systems, split_keys, summarize
from pdeval.frames.canonical import as_result, result_keys

__all__ = [
    "METHODS",
    "rank_correlation",
    "correlation_table",
    "kendall_tau",
    "tau_ap",
    "spearman",
    "pearson",
    "rms_error",
    "correlation",
    "tau_significance",
]

MissingPolicy = Literal["warn", "error"]


# ---------------------------------------------------------------------------------------
# frames
# ---------------------------------------------------------------------------------------


def _group_items(frame: pd.DataFrame, columns: list[str]) -> Iterator[tuple[tuple, pd.DataFrame]]:
    if not columns:
        yield (), frame
        return
    for key, part in frame.groupby(columns, dropna=False, sort=True, observed=True):
        yield (key if isinstance(key, tuple) else (key,)), part


class _Missing:
    """Stands for a NaN key value, so that group keys with NaN hash and compare equal."""

    def __repr__(self) -> str:
        return "nan"


_NA = _Missing()


def _norm_key(key: tuple) -> tuple:
    return tuple(_NA if (np.ndim(v) == 0 and pd.isna(v)) else v for v in key)


def _prepare_reference(
    result_means: pd.DataFrame,
    reference: Union[str, pd.DataFrame],
    *,
    system: str,
    by_list: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Split into (estimate means with a ``reference`` measure column, reference means, join keys)."""
    measures = list(pd.unique(result_means["measure"]))
    if isinstance(reference, str):
        if reference not in measures:
            raise SchemaError(
                f"reference measure {reference!r} is not in the result; its measures are {measures}"
            )
        est = result_means[result_means["measure"] != reference].assign(reference=reference)
        if est.empty:
            raise SchemaError(f"the result holds only the reference measure {reference!r}: nothing to compare")
        ref = result_means[result_means["measure"] == reference]
        return est, ref, list(by_list)
    if not isinstance(reference, pd.DataFrame):
        raise SchemaError(
            f"reference must be a result frame or a measure name, not {type(reference).__name__}"
        )
    ref_frame = as_result(reference)
    ref_keys = result_keys(ref_frame)
    if system not in ref_keys:
        raise SchemaError(f"the reference frame has no system column {system!r}; its key columns are {ref_keys}")
    ref_by = [k for k in ref_keys if k not in (system, "query_id")]
    extra = [k for k in ref_by if k not in by_list]
    for k in extra:
        if ref_frame[k].nunique(dropna=False) > 1:
            raise SchemaError(
                f"the reference has variant column {k!r} with several values, which the result's "
                f"rankings (by={by_list}) do not have; filter the reference to one {k}"
            )
    shared = [k for k in ref_by if k in by_list]
    ref = summarize(ref_frame.drop(columns=extra), system=system, by=shared)
    ref_measures = list(pd.unique(ref["measure"]))
    if len(ref_measures) == 1:
        est = result_means.assign(reference=ref_measures[0])
    else:
        missing = [m for m in measures if m not in ref_measures]
        if missing:
            raise SchemaError(
                f"the reference holds measures {ref_measures} but not {missing}; give a reference "
                f"with one measure (compared with every measure) or with every measure of the result"
            )
        est = result_means.assign(reference=result_means["measure"])
    return est, ref, shared


@contract(result=Frame("result"), reference=Text("a measure of the result") | Frame("result"),
          methods=ListOf(Choice(*METHODS), unique=True), by=Nullable(ListOf(Text("a column name"), unique=True)),
          aggregate=Boolean(), alpha=Nullable(Real(0, 1, closed="neither")), system=Text("a column name"),
          missing=Choice("warn", "error", renamed={"raise": "error"}))
def rank_correlation(
    result: pd.DataFrame,
    reference: Union[str, pd.DataFrame],
    *,
    methods: Union[str, Sequence[str]] = ("tau_b",),
    by: Union[None, str, Iterable[str]] = None,
    aggregate: bool = False,
    alpha: Optional[float] = None,
    system: str = "run",
    missing: MissingPolicy = "warn",
) -> pd.DataFrame:
    """Compare the system ranking of every (measure, variant) group with a reference ranking.

    For each group of ``result`` (``measure`` x ``by`` keys, e.g. level and sample of a
    qrels reduction) the per-system means (:func:`pdeval.summarize`) are the *estimate*; they
    are compared with the *reference* means by each statistic of ``methods``:

    ``tau_a``, ``tau_b``
        Kendall's tau (:func:`kendall_tau`; Buckley & Voorhees 2004, Sakai 2007);
    ``tau_ap``
        AP correlation, reference = true ranking (:func:`tau_ap`; Yilmaz, Aslam & Robertson 2008);
    ``spearman``, ``pearson``
        rank and linear correlation (:func:`spearman`, :func:`pearson`; Yilmaz & Aslam 2008);
    ``rms``
        ``sqrt(mean_s (est_s - ref_s)^2)`` (:func:`rms_error`; Yilmaz & Aslam 2008).

    ``reference`` is either

    * a result frame (e.g. the evaluation on complete judgments). If it holds a single
      measure, every measure of ``result`` is compared with it; otherwise measures are
      matched by name. Its variant columns that ``result`` also has in ``by`` are matched
      (so a per-level reference is compared level by level); any other column must be
      single-valued. It is averaged per system with :func:`pdeval.summarize`.
    * a measure name: each other measure of ``result`` is compared with that measure in the
      same variant group (e.g. ``"AP"`` to correlate bpref with AP on the same reduced qrels).

    **Alignment.** Systems are aligned by name. Systems present on one side only (or with a
    NaN mean) are left out of that comparison; with ``missing="warn"`` (default) one
    :class:`~pdeval.errors.PdevalWarning` gives the counts and first names, with
    ``missing="error"`` a :class:`~pdeval.errors.SchemaError` is raised. ``n_runs`` reports
    the number of systems each statistic was computed on.

    ``alpha`` adds the normal test of tau (:func:`tau_significance`, Sakai 2007) to the
    ``tau_a`` / ``tau_b`` rows: columns ``p_value``, ``critical`` (the critical ``|tau|``) and
    ``significant``; NaN (and False) for the other methods.

    Returns a tidy frame, one row per (measure, by..., method), with columns ``measure``,
    the ``by`` columns, ``reference`` (the reference measure), ``method``, ``value``,
    ``n_runs`` (plus the significance columns).

    ``aggregate=True`` averages each statistic over the ``sample`` column, as Yilmaz & Aslam
    (2008) report the mean over 10 samples per level: columns ``mean``, ``std`` (ddof=1),
    ``count`` (samples) and ``n_runs`` (the smallest over samples) replace ``value``;
    with ``alpha``, ``critical`` (for that ``n_runs``) and ``n_significant`` (samples whose
    tau is significant) are added.

    Parameters
    ----------
    result : DataFrame
        Result frame (per topic or per run means) of the systems to rank.
    reference : str or DataFrame
        The reference ranking: a result frame, or the name of a measure of ``result``.
    methods : str or list of str, default ("tau_b",)
        The coefficients (:data:`pdeval.analysis.rankings.coefficients.METHODS`).
    by : str or list of str, optional
        Key columns to compare within.
    aggregate : bool, default False
        Summarise the samples (mean, sd, min, max) instead of one row per sample.
    alpha : float, optional
        With ``aggregate``, the level of the significance counts.
    system : str, default 'run'
        The column naming the systems.
    missing : {'warn', 'error'}, default 'warn'
        Systems on one side only (see "Alignment" above).

    Returns
    -------
    DataFrame
        Tidy rows per variant, measure and method, as described above.

    See Also
    --------
    correlation_table : Every pair of measures at once.
    reduce : Qrels variants whose rankings are compared.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> result = pdeval.evaluate(run, qrels, ["AP", "P@2", "RR"])
    >>> pdeval.rank_correlation(result, "AP", methods=["tau_b", "tau_ap"]).round(3)
      measure reference  method  value  n_runs
    0     P@2        AP   tau_b  0.816       3
    1     P@2        AP  tau_ap  0.750       3
    2      RR        AP   tau_b  0.816       3
    3      RR        AP  tau_ap  0.500       3
    """
    if isinstance(methods, str):
        methods = [methods]
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise PdevalError(f"unknown comparison method(s) {unknown}; choose from {list(METHODS)}")
    result = as_result(result)
    by_list, _ = split_keys(result, system=system, by=by)
    if aggregate and "sample" not in by_list:
        raise SchemaError(
            "aggregate=True averages the statistics over the 'sample' column, but the result "
            f"rankings have no 'sample' key (by={by_list})"
        )
    means = summarize(result, system=system, by=by_list)
    require_systems(means, system, by_list, "rank_correlation")
    est, ref, shared = _prepare_reference(means, reference, system=system, by_list=by_list)

    ref_lookup: dict[tuple, pd.Series] = {}
    for key, part in _group_items(ref, ["measure", *shared]):
        series = part.set_index(system)["value"]
        ref_lookup[_norm_key(key)] = series[series.notna()]

    rows = []
    lost_est: dict[str, int] = {}
    lost_ref: dict[str, int] = {}
    shared_pos = [by_list.index(k) for k in shared]
    for key, part in _group_items(est, ["measure", *by_list]):
        measure, variant = key[0], key[1:]
        ref_measure = part["reference"].iloc[0]
        ref_key = (ref_measure, *[variant[i] for i in shared_pos])
        ref_series = ref_lookup.get(_norm_key(ref_key))
        if ref_series is None:
            raise SchemaError(
                f"the reference has no values for measure {ref_measure!r}"
                + (f" and {dict(zip(shared, ref_key[1:]))}" if shared else "")
            )
        est_series = part.set_index(system)["value"]
        est_series = est_series[est_series.notna()]
        common = est_series.index.intersection(ref_series.index, sort=False)
        only_est = est_series.index.difference(ref_series.index)
        only_ref = ref_series.index.difference(est_series.index)
        if len(only_est) or len(only_ref):
            where = f"measure {measure!r}" + (f", {dict(zip(by_list, variant))}" if by_list else "")
            if missing == "error":
                raise SchemaError(
                    f"rank_correlation ({where}): {len(only_est)} system(s) of the result lack a "
                    f"reference value (first: {list(only_est[:3])}) and {len(only_ref)} reference "
                    f"system(s) lack a result value (first: {list(only_ref[:3])})"
                )
            for name in only_est:
                lost_est[str(name)] = lost_est.get(str(name), 0) + 1
            for name in only_ref:
                lost_ref[str(name)] = lost_ref.get(str(name), 0) + 1
        x = est_series.loc[common].to_numpy(np.float64)
        y = ref_series.loc[common].to_numpy(np.float64)
        for method in methods:
            rows.append((measure, *variant, ref_measure, method, correlation(x, y, method), len(common)))
    if lost_est or lost_ref:
        warnings.warn(
            f"rank_correlation: {len(lost_est)} system(s) of the result had no reference value "
            f"(first: {sorted(lost_est)[:3]}) and {len(lost_ref)} reference system(s) no result "
            f"value (first: {sorted(lost_ref)[:3]}); each statistic uses the common systems (see n_runs)",
            PdevalWarning,
            stacklevel=2,
        )
    out = pd.DataFrame(rows, columns=["measure", *by_list, "reference", "method", "value", "n_runs"])
    out["n_runs"] = out["n_runs"].astype(np.int64)
    if alpha is not None:
        out = _with_significance(out, alpha)
    return _aggregate_samples(out, by_list, alpha) if aggregate else out


def _with_significance(out: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The normal test of tau (:func:`tau_significance`) on the ``tau_a`` / ``tau_b`` rows."""
    p_value, critical = tau_significance(out["value"].to_numpy(), out["n_runs"].to_numpy(), alpha)
    is_tau = out["method"].isin(["tau_a", "tau_b"]).to_numpy()
    out["p_value"] = np.where(is_tau, p_value, np.nan)
    out["critical"] = np.where(is_tau, critical, np.nan)
    out["significant"] = is_tau & (out["p_value"].to_numpy() < alpha)
    return out


def _aggregate_samples(out: pd.DataFrame, by_list: list[str], alpha: Optional[float]) -> pd.DataFrame:
    """Each statistic of :func:`rank_correlation` averaged over the ``sample`` column."""
    group = ["measure", *[k for k in by_list if k != "sample"], "reference", "method"]
    agg = {
        "mean": ("value", "mean"),
        "std": ("value", "std"),
        "count": ("value", "count"),
        "n_runs": ("n_runs", "min"),
    }
    if alpha is not None:
        agg["n_significant"] = ("significant", "sum")
    summary = out.groupby(group, dropna=False, sort=False, observed=True).agg(**agg).reset_index()
    summary["count"] = summary["count"].astype(np.int64)
    if alpha is not None:
        is_tau = summary["method"].isin(["tau_a", "tau_b"]).to_numpy()
        critical = tau_significance(0.0 * summary["mean"].to_numpy(), summary["n_runs"].to_numpy(), alpha)[1]
        summary["critical"] = np.where(is_tau, critical, np.nan)
        summary["n_significant"] = summary["n_significant"].astype(np.int64)
        columns = [c for c in summary.columns if c != "n_significant"] + ["n_significant"]
        summary = summary[columns]
    return summary


@contract(result=Frame("result"), methods=Choice(*METHODS) | ListOf(Choice(*METHODS), lone=False, unique=True),
          system=Text("a column name"),
          measures=Nullable(ListOf(Text("a measure of the result"), unique=True)))
def correlation_table(
    result: pd.DataFrame,
    *,
    methods: Union[str, Sequence[str]] = "tau_b",
    system: str = "run",
    measures: Union[None, str, Sequence[str]] = None,
) -> pd.DataFrame:
    """Measure-by-measure table of system-ranking correlations (Sakai, SIGIR 2007, Table 2).

    Cell ``[r, c]`` compares the per-system means of measure ``c`` (the estimate) with those
    of measure ``r`` (the reference) by each of ``methods`` (see :func:`rank_correlation`);
    only ``tau_ap`` and ``rms`` can be asymmetric/nonzero off the diagonal in one direction.
    Each cell uses the systems with a mean for both measures.

    Parameters
    ----------
    result : DataFrame
        A result frame holding a single ranking per measure (no ``level``/``sample`` variants
        with several values; filter it first).
    methods : str or list of str, default 'tau_b'
        A coefficient (``"tau_b"``, ``"tau_ap"``, ...; :data:`METHODS`) or a list of them.
    system : str, default 'run'
        The column naming the systems.
    measures : list of str, optional
        The measures of the table and their order (default: the order of first appearance).

    Returns
    -------
    pandas.DataFrame
        For one method (a string): a square table, index named ``reference`` and columns
        named ``measure``. For a list: the tables stacked, index levels ``method`` and
        ``reference``.

    Raises
    ------
    PdevalError
        An unknown method.
    SchemaError
        Several rankings per measure, or a measure the result lacks.

    See Also
    --------
    rank_correlation : The tidy form.
    pdeval.plotting.correlation_heatmap : The table as a figure.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> result = pdeval.evaluate(run, qrels, ["AP", "P@2", "RR"])
    >>> pdeval.correlation_table(result).round(3)
    measure       AP    P@2     RR
    reference                     
    AP         1.000  0.816  0.816
    P@2        0.816  1.000  0.500
    RR         0.816  0.500  1.000
    """
    names = [methods] if isinstance(methods, str) else list(methods)
    result = as_result(result)
    by_list, _ = split_keys(result, system=system)
    means = summarize(result, system=system, by=by_list)
    require_systems(means, system, by_list, "correlation_table")
    if by_list and len(means[by_list].drop_duplicates()) > 1:
        raise SchemaError(
            f"correlation_table needs one ranking per measure, but the result has several "
            f"variants in {by_list}; select one (e.g. result[result.level == 100])"
        )
    wide = means.pivot_table(index=system, columns="measure", values="value", aggfunc="first", observed=True)
    if measures is None:
        order = list(pd.unique(means["measure"]))
    else:
        order = [measures] if isinstance(measures, str) else list(measures)
    missing = [m for m in order if m not in wide.columns]
    if missing:
        raise SchemaError(f"measure(s) {missing} are not in the result; it has {list(wide.columns)}")
    tables = []
    for method in names:
        table = pd.DataFrame(np.nan, index=pd.Index(order, name="reference"), columns=pd.Index(order, name="measure"))
        for r in order:
            for c in order:
                both = wide[[r, c]].dropna().to_numpy(np.float64) if r != c else wide[[r]].dropna().to_numpy(np.float64)[:, [0, 0]]
                table.loc[r, c] = correlation(both[:, 1], both[:, 0], method)
        tables.append(table)
    if isinstance(methods, str):
        return tables[0]
    return pd.concat(tables, keys=names, names=["method"])
