"""Rank correlations between system rankings: Kendall tau, tau_AP, tau_AP_b, tau_GAP, Spearman, Pearson, RMS (MEASURES.md E8).

A *system ranking* is the vector of per-run means of one measure on one qrels variant.
The functions here compute those means from a tidy result frame and compare them:

* per-run means come from :func:`pdeval.summarize` (:mod:`pdeval.evaluation.results`);
* :func:`rank_correlation` -- Kendall's tau-a / tau-b, AP correlation tau_AP, tau_AP_b,
  tau_GAP, Spearman, Pearson and RMS error (each optionally on the reference's k best
  systems, ``name@k``) between the means of every (measure, variant) group of a result
  frame and a reference ranking (a result frame, or ``reference_measure``), or per topic;
* :func:`correlation_table` -- the measure-by-measure table of Sakai (2007), Table 2;
* array-level statistics :func:`kendall_tau`, :func:`tau_ap`, :func:`spearman`,
  :func:`pearson`, :func:`rms_error`, :func:`tau_ap_b`, :func:`tau_gap` and :func:`tau_significance`
  (computed on many rankings at once by :mod:`pdeval.analysis.rankings.batched`; systems on
  one side only are handled by :mod:`pdeval.analysis.rankings.alignment`).

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

from typing import Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.rankings.alignment import MISSING_POLICIES, MissingPolicy, align_means
from pdeval.analysis.rankings.batched import parse_method, rows_coefficients
from pdeval.analysis.rankings.coefficients import (
    METHOD,
    METHODS,
    correlation,
    kendall_tau,
    pearson,
    rms_error,
    spearman,
    tau_ap,
    tau_ap_b,
    tau_gap,
    tau_significance,
)
from pdeval.common.contract import Boolean, Choice, ListOf, Nullable, Real, Text, contract
from pdeval.errors import PdevalError, SchemaError
from pdeval.frames.domains import Frame
from pdeval.evaluation.results import require_systems, split_keys, summarize
from pdeval.frames.canonical import as_result, result_keys

__all__ = [
    "METHODS",
    "rank_correlation",
    "correlation_table",
    "kendall_tau",
    "tau_ap",
    "tau_ap_b",
    "tau_gap",
    "spearman",
    "pearson",
    "rms_error",
    "correlation",
    "tau_significance",
]

TOPIC = "_topic"  # query_id while the topics are ranking keys (per_topic=True)


def _prepare_reference(
    result_means: pd.DataFrame,
    reference: Optional[pd.DataFrame],
    reference_measure: Optional[str],
    *,
    system: str,
    by_list: list[str],
    per_topic: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Split into (estimate means with a ``reference`` measure column, reference means, join keys)."""
    measures = list(pd.unique(result_means["measure"]))
    if (reference is None) == (reference_measure is None):
        raise PdevalError(
            "rank_correlation(): give the reference ranking either as a result frame (reference=) or as a "
            "measure of the result (reference_measure=), not " + ("both" if reference is not None else "neither")
        )
    if reference_measure is not None:
        if reference_measure not in measures:
            raise SchemaError(
                f"reference_measure {reference_measure!r} is not in the result; its measures are {measures}"
            )
        est = result_means[result_means["measure"] != reference_measure].assign(reference=reference_measure)
        if est.empty:
            raise SchemaError(f"the result holds only the reference measure {reference_measure!r}: nothing to compare")
        ref = result_means[result_means["measure"] == reference_measure]
        return est, ref, list(by_list)
    ref_frame = as_result(reference)
    if per_topic:
        ref_frame = ref_frame.rename(columns={"query_id": TOPIC})
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


def compared_means(result, reference, reference_measure, *, by, system, per_topic=False):
    """The per-system means of ``result`` (with the ``reference`` measure column), of the
    reference, the ranking keys and the keys shared with the reference."""
    result = as_result(result)
    if per_topic:
        if "query_id" not in result.columns:
            raise SchemaError("per_topic=True needs a per-topic result frame (a query_id column)")
        result = result.rename(columns={"query_id": TOPIC})
    by_list, _ = split_keys(result, system=system, by=by)
    if per_topic:  # the topic is the last key of a ranking
        by_list = [*[k for k in by_list if k != TOPIC], TOPIC]
    means = summarize(result, system=system, by=by_list)
    if not per_topic:
        require_systems(means, system, by_list, "rank_correlation")
    est, ref, shared = _prepare_reference(means, reference, reference_measure, system=system, by_list=by_list,
                                          per_topic=per_topic)
    return est, ref, by_list, shared


def n_runs_of(aligned, methods: list[str]) -> np.ndarray:
    """The systems each (group, method) statistic uses: all compared, or k of those on both sides."""
    ks = np.array([parse_method(m)[1] or np.iinfo(np.int64).max for m in methods], dtype=np.int64)
    n = aligned.mask.sum(axis=1)[:, None]
    both = (np.isfinite(aligned.est_raw) & np.isfinite(aligned.ref)).sum(axis=1)[:, None]
    return np.where(ks[None, :] < np.iinfo(np.int64).max, np.minimum(both, ks[None, :]), n)


def method_rows(keys: pd.DataFrame, values: np.ndarray, n_runs: np.ndarray, methods: list[str]) -> pd.DataFrame:
    """One row per (group, method) from (groups, methods) arrays."""
    out = keys.loc[np.repeat(np.arange(len(keys)), len(methods))].reset_index(drop=True)
    out["method"] = np.tile(np.array(methods, dtype=object), len(keys))
    out["value"] = values.ravel()
    out["n_runs"] = n_runs.ravel().astype(np.int64)
    return out


@contract(result=Frame("result"), reference=Nullable(Frame("result")),
          reference_measure=Nullable(Text("a measure of the result")),
          methods=ListOf(METHOD, unique=True), by=Nullable(ListOf(Text("a column name"), unique=True)),
          aggregate=Boolean(), alpha=Nullable(Real(0, 1, closed="neither")), system=Text("a column name"),
          missing=Choice(*MISSING_POLICIES, renamed={"raise": "error", "default": "fill"}),
          fill_value=Real(), per_topic=Boolean(),
          remedies={"reference": "a result frame; a measure of the result goes to reference_measure="})
def rank_correlation(
    result: pd.DataFrame,
    reference: Optional[pd.DataFrame] = None,
    *,
    reference_measure: Optional[str] = None,
    methods: Union[str, Sequence[str]] = ("tau_b",),
    by: Union[None, str, Iterable[str]] = None,
    aggregate: bool = False,
    alpha: Optional[float] = None,
    system: str = "run",
    missing: MissingPolicy = "warn",
    fill_value: float = 0.0,
    per_topic: bool = False,
) -> pd.DataFrame:
    """Compare the system ranking of every (measure, variant) group with a reference ranking.

    For each group of ``result`` (``measure`` x ``by`` keys, e.g. level and sample of a
    qrels reduction) the per-system means (:func:`pdeval.summarize`) are the *estimate*; they
    are compared with the *reference* means by each statistic of ``methods``:

    ``tau_a``, ``tau_b``
        Kendall's tau (:func:`kendall_tau`; Buckley & Voorhees 2004, Sakai 2007); ``tau_b``
        is the ``kendall`` of scipy, pandas and the TREC Auto-Judge meta-evaluation;
    ``tau_ap``
        AP correlation, reference = true ranking (:func:`tau_ap`; Yilmaz, Aslam & Robertson 2008);
    ``tau_ap_b``
        the tie-aware symmetric tau_AP_b (:func:`tau_ap_b`; Urbano & Marrero, ICTIR 2017),
        Auto-Judge's ``tauap_b``;
    ``tau_gap``
        head-weighted gap-sensitive tau_GAP, reference = truth (:func:`tau_gap`; Gao & Oard,
        SIGIR 2015), ties of the estimate broken by system name;
    ``spearman``, ``pearson``
        rank and linear correlation (:func:`spearman`, :func:`pearson`; Yilmaz & Aslam 2008);
    ``rms``
        ``sqrt(mean_s (est_s - ref_s)^2)`` (:func:`rms_error`; Yilmaz & Aslam 2008);
    ``name@k``
        any of them on the k systems the reference ranks highest among those present on both
        sides (ties at the k-th place by system name; a system filled in under
        ``missing="fill"`` is no candidate): ``"tau_b@10"`` is Auto-Judge's ``kendall@10``.

    The reference ranking is either ``reference``, a result frame (e.g. the evaluation on
    complete judgments: if it holds a single measure, every measure of ``result`` is compared
    with it, otherwise measures are matched by name; its variant columns that ``result`` also
    has in ``by`` are matched, any other column must be single-valued), or
    ``reference_measure``, a measure of ``result``: each other measure is compared with it in
    the same variant group (e.g. ``reference_measure="AP"`` to correlate bpref with AP on the
    same reduced qrels).

    **Alignment.** Systems are aligned by name. Systems present on one side only (or with a
    NaN mean) follow ``missing``: ``"warn"`` (default) leaves them out with one
    :class:`~pdeval.errors.PdevalWarning` giving the counts and first names, ``"skip"`` leaves
    them out silently, ``"error"`` raises a :class:`~pdeval.errors.SchemaError`, and ``"fill"``
    gives a reference system the result lacks the value ``fill_value`` (0: Auto-Judge's
    ``default``) and leaves out result systems the reference lacks. ``n_runs`` reports the
    number of systems each statistic was computed on.

    ``per_topic=True`` correlates the systems' per-topic values topic by topic (one ranking
    per ``query_id``, as Auto-Judge's per-topic meta-evaluation): the rows gain a
    ``query_id`` column.

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
    reference : DataFrame, optional
        The reference ranking as a result frame (or give ``reference_measure``).
    reference_measure : str, optional
        The reference ranking as a measure of ``result`` (keyword only).
    methods : str or list of str, default ("tau_b",)
        The coefficients (:data:`pdeval.analysis.rankings.coefficients.METHODS`, each
        optionally with ``@k``).
    by : str or list of str, optional
        Key columns to compare within.
    aggregate : bool, default False
        Summarise the samples (mean, sd, min, max) instead of one row per sample.
    alpha : float, optional
        With ``aggregate``, the level of the significance counts.
    system : str, default 'run'
        The column naming the systems.
    missing : {'warn', 'error', 'skip', 'fill'}, default 'warn'
        Systems on one side only (see "Alignment" above).
    fill_value : float, default 0.0
        With ``missing="fill"``, the value of a reference system the result lacks.
    per_topic : bool, default False
        One correlation per topic instead of one of the means.

    Returns
    -------
    DataFrame
        Tidy rows per variant, measure and method, as described above.

    See Also
    --------
    correlation_table : Every pair of measures at once.
    correlation_intervals : The same coefficients with topic-bootstrap intervals.
    reduce : Qrels variants whose rankings are compared.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> result = pdeval.evaluate(run, qrels, ["AP", "P@2", "RR"])
    >>> pdeval.rank_correlation(result, reference_measure="AP", methods=["tau_b", "tau_ap"]).round(3)
      measure reference  method  value  n_runs
    0     P@2        AP   tau_b  0.816       3
    1     P@2        AP  tau_ap  0.750       3
    2      RR        AP   tau_b  0.816       3
    3      RR        AP  tau_ap  0.500       3
    """
    methods = [methods] if isinstance(methods, str) else list(methods)
    if aggregate and per_topic:
        raise PdevalError("rank_correlation(): aggregate=True averages over samples; it does not combine with per_topic")
    est, ref, by_list, shared = compared_means(result, reference, reference_measure, by=by, system=system,
                                               per_topic=per_topic)
    if aggregate and "sample" not in by_list:
        raise SchemaError(
            "aggregate=True averages the statistics over the 'sample' column, but the result "
            f"rankings have no 'sample' key (by={by_list})"
        )
    aligned = align_means(est, ref, system=system, by=by_list, shared=shared, missing=missing,
                          fill_value=fill_value, where="rank_correlation")
    both = np.isfinite(aligned.est_raw) & np.isfinite(aligned.ref)
    values = rows_coefficients(aligned.est, aligned.ref, aligned.mask, methods, mask_k=both)
    out = method_rows(aligned.keys, values, n_runs_of(aligned, methods), methods)
    if per_topic:
        out = out.rename(columns={TOPIC: "query_id"})
        by_list = ["query_id" if k == TOPIC else k for k in by_list]
    out = out[["measure", *by_list, "reference", "method", "value", "n_runs"]]
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
