"""Score standardisation: per-topic values made comparable across topics and collections.

Every method compares a run's value on a topic with the values of a *reference set* of runs
on the same topic (for one measure), so that a hard topic (low scores for every run) and an
easy one weigh alike:

========  ==========================================================  ==========================
method    value                                                       paper
========  ==========================================================  ==========================
z         ``z = (x - mean_t) / sd_t`` (sample standard deviation)      Webber, Moffat & Zobel,
                                                                      SIGIR 2008; trec_eval -Z
std_cdf   ``Phi(z)``, the standard normal CDF of z, in (0, 1)          Webber et al. 2008
std_ab    ``min(1, max(0, A z + B))``, A = 0.15, B = 0.5               Sakai, ICTIR 2016
ecdf      ``F_t(x) = #{reference runs with value <= x} / n``           Urbano, Lima & Hanjalic,
                                                                      SIGIR 2019
========  ==========================================================  ==========================

The reference statistics can also come from a trec_eval z-score file
(:func:`pdeval.read_zscores`), applied as trec_eval 10.0's ``convert_zscores.c`` applies it.

The conventions follow the papers and the authors' code, which agree where both are known: the
sample standard deviation (Sakai 2016: "the topic's sample mean and sample standard deviation
across a set of past runs"; R's ``sd`` in Urbano et al.'s code), std-AB clipped to [0, 1] (Sakai's
ICTIR 2016 talk: "std-AB with clipping"; ``punif`` in Urbano et al.'s code), the ECDF counting the
reference values ``<= x`` (R's ``ecdf``, no interpolation, ties counted in full). The tests
reproduce Urbano et al.'s published outputs for all four methods (``tests/data/standardization``),
which rule out the other readings.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import numpy as np
import pandas as pd
from scipy import stats

from pdeval.common.contract import Boolean, Choice, Instance, ListOf, Nullable, Real, Text, contract
from pdeval.frames.domains import Frame
from pdeval.errors import MeasureError, PdevalError, PdevalWarning, SchemaError, warn
from pdeval.frames.canonical import as_result, result_keys
from pdeval.sources.zscores import read_zscores

__all__ = ["standardize", "zscore_table", "METHODS"]

METHODS = ("z", "std_cdf", "std_ab", "ecdf")
Reference = Union[None, str, Sequence[str], pd.DataFrame]
#: the domain of ``reference=``: run names of the result, or a result frame of other runs
REFERENCE = Nullable(ListOf(Text("a run name"), unique=True) | Frame("result"))


class _Offset(Real):
    """Sakai's B of std_ab: any finite number (its example, 0.25, differs from the default 0.5)."""

    def example(self) -> float:
        return 0.25


def _split(result: pd.DataFrame, reference: Reference) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """(result, reference rows, the keys that group a topic's values: all keys but run)."""
    result = as_result(result)
    if "run" not in result.columns or "query_id" not in result.columns:
        raise SchemaError(f"standardize needs per-topic values of named runs (run, query_id); the frame has "
                          f"{list(result.columns)}")
    if isinstance(reference, pd.DataFrame):
        ref = as_result(reference)
    elif reference is None:
        ref = result
    else:
        names = list(reference)
        absent = sorted(set(names) - set(result["run"].astype(str)))
        if absent:
            raise PdevalError(f"reference={names!r} names run(s) {absent} that the result lacks; it has "
                              f"{sorted(result['run'].astype(str).unique())[:10]}")
        ref = result[result["run"].astype(str).isin(names)]
    keys = [k for k in result_keys(result) if k != "run"] + ["measure"]
    runs = ref["run"].nunique()
    if runs < 2:
        raise PdevalError(
            f"the reference set holds {runs} run(s) ({sorted(ref['run'].astype(str).unique())}); a standard "
            "deviation and a distribution need at least two runs: name more reference runs"
        )
    return result, ref, keys


def _factors(ref: pd.DataFrame, keys: list) -> pd.DataFrame:
    """Mean and sample standard deviation per (topic, measure) group of the reference values.
    Where every value of a group is the same number v, the mean is v and the deviation 0
    exactly (a floating-point mean of 0.4, 0.4, 0.4 is 0.4000000000000001, which no value equals)."""
    grouped = ref.groupby(keys, sort=False, observed=True)["value"]
    table = grouped.agg(mean="mean", stddev="std", runs="count", low="min", high="max").reset_index()
    flat = (table["low"] == table["high"]).to_numpy()
    table.loc[flat, "mean"] = table.loc[flat, "low"]
    table.loc[flat, "stddev"] = 0.0
    table = table.drop(columns=["low", "high"])
    few = table[table["runs"] < 2]
    if len(few):
        raise PdevalError(
            f"{len(few)} (topic, measure) group(s) have fewer than 2 reference values, e.g. "
            f"{few[keys].head(3).to_dict('records')}: reference runs lack these topics"
        )
    return table.drop(columns="runs")


@contract(result=Frame("result"), reference=REFERENCE, trec_eval_names=Boolean())
def zscore_table(result: pd.DataFrame, reference: Reference = None, *, trec_eval_names: bool = True) -> pd.DataFrame:
    """Per topic and measure, the mean and sample standard deviation of the reference runs.

    ``mean_t = 1/n sum_i x_it`` and ``sd_t = sqrt(1/(n-1) sum_i (x_it - mean_t)^2)`` over the
    n reference runs i (Webber, Moffat & Zobel, SIGIR 2008; Sakai, ICTIR 2016); where the n
    values are equal, their value and 0 exactly.

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values (``run``, ``query_id``, ``measure``, ``value``).
    reference : str, list of str or DataFrame, optional
        The reference runs: names of runs in ``result``, or a result frame of other runs.
        None: every run of ``result``.
    trec_eval_names : bool, default True
        Name the measures as trec_eval does (``AP`` -> ``map``), so that
        :func:`pdeval.write_zscores` writes a file ``trec_eval -Z`` reads.

    Returns
    -------
    DataFrame
        The key columns but ``run`` (``query_id``, variants), ``measure``, ``mean``, ``stddev``.

    Raises
    ------
    PdevalError
        A reference set of fewer than two runs, or a topic fewer than two of them cover.

    See Also
    --------
    standardize : Standardise a result frame against reference runs or a z-score table.
    write_zscores : Write the table as a trec_eval z-score file.

    Examples
    --------
    >>> result = pd.DataFrame({"run": list("aabbcc"), "query_id": list("121212"), "measure": "AP",
    ...                        "value": [0.1, 0.5, 0.3, 0.6, 0.5, 0.7]})
    >>> pdeval.zscore_table(result).round(3)
      query_id measure  mean  stddev
    0        1     map   0.3     0.2
    1        2     map   0.6     0.1
    """
    result, ref, keys = _split(result, reference)
    table = _factors(ref, keys)
    if trec_eval_names:
        table["measure"] = table["measure"].map(_trec_eval_names(table["measure"]))
    return table


def _trec_eval_names(measures: pd.Series) -> dict:
    """pdeval measure string -> trec_eval's name (the string itself where trec_eval has none)."""
    from pdeval.measures import parse

    def name(measure: str) -> str:
        try:
            return parse(measure).trec_eval_name()
        except MeasureError:
            return measure

    return {measure: name(measure) for measure in pd.unique(measures)}


def _ecdf(result: pd.DataFrame, ref: pd.DataFrame, keys: list) -> np.ndarray:
    """F_t(x): the share of the topic's reference values <= x, for every row at once. A NaN
    reference value is no value (it counts in no denominator); a NaN x gives NaN."""
    ref = ref[ref["value"].notna()]
    groups = ref[keys].drop_duplicates().reset_index(drop=True).assign(_group=lambda f: np.arange(len(f)))
    ref_g = ref.merge(groups, on=keys)["_group"].to_numpy(np.int64)
    res = result[keys].merge(groups, on=keys, how="left")["_group"]
    if res.isna().any():
        _lacking(result[keys].loc[res.isna().to_numpy()])
    res_g = res.to_numpy(np.int64)
    x = result["value"].to_numpy(np.float64)
    values = np.concatenate([ref["value"].to_numpy(np.float64), np.nan_to_num(x)])
    code = np.unique(values, return_inverse=True)[1].astype(np.int64)
    span = int(code.max()) + 2
    ref_key = np.sort(ref_g * span + code[: len(ref_g)])
    res_key = res_g * span + code[len(ref_g):]
    at_most = np.searchsorted(ref_key, res_key, side="right") - np.searchsorted(ref_key, res_g * span, side="left")
    counts = np.bincount(ref_g, minlength=len(groups))
    return np.where(np.isnan(x), np.nan, at_most / counts[res_g])


def _lacking(rows: pd.DataFrame) -> None:
    """The error for values on (topic, measure) groups that no reference run has, naming them."""
    shown = rows.drop_duplicates().head(3).to_dict("records")
    raise PdevalError(f"{len(rows)} value(s) are on topics no reference run has, e.g. {shown}: add reference runs "
                      "that cover these topics, or leave the topics out of the result")


def _apply_factors(x: np.ndarray, mean: np.ndarray, sd: np.ndarray, zero_variance: str, what: pd.DataFrame,
                   fill_value: float) -> np.ndarray:
    """(x - mean) / sd, with trec_eval's rule where sd is 0 (0 if x == mean, else fill_value)."""
    flat = sd == 0
    if flat.any() and zero_variance == "error":
        raise PdevalError(
            f"{int(flat.sum())} value(s) are on (topic, measure) groups whose reference values do not vary "
            f"(standard deviation 0), e.g. {what.loc[flat].drop_duplicates().head(3).to_dict('records')}; z is undefined there. "
            "Pass zero_variance='nan' (NaN), 'trec_eval' (0 where x equals the mean, as trec_eval -Z) or 'raw' "
            "(x itself, as Urbano et al.'s code)."
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (x - mean) / sd
    if zero_variance == "nan":
        return np.where(flat, np.nan, z)
    if zero_variance == "raw":
        return np.where(flat, x, z)
    return np.where(flat, np.where(x == mean, 0.0, fill_value), z)


@contract(
    result=Frame("result"),
    reference=REFERENCE,
    method=Choice(*METHODS),
    zscores=Nullable(Instance((str, os.PathLike), "a path", "zscores.txt") | Frame("any")),
    a=Real(0, closed="neither"),
    b=_Offset(),
    zero_variance=Choice("nan", "trec_eval", "raw", "error", renamed={"raise": "error"}),
    fill_value=Nullable(Real()),
    modes={"a": ("method", ("std_ab",)), "b": ("method", ("std_ab",)),
           "zscores": ("method", ("z", "std_cdf", "std_ab"))},
    renamed={"missing": "fill_value"},
    remedies={"fill_value": "a number, e.g. -1000000 as trec_eval prints, or None for NaN"},
)
def standardize(
    result: pd.DataFrame,
    reference: Reference = None,
    *,
    method: str = "z",
    zscores: Union[None, str, "os.PathLike[str]", pd.DataFrame] = None,
    a: float = 0.15,
    b: float = 0.5,
    zero_variance: str = "error",
    fill_value: Optional[float] = None,
) -> pd.DataFrame:
    """Standardised per-topic values of a result frame, against a reference set of runs.

    For run i on topic t with value x and the reference runs' mean ``mean_t`` and sample
    standard deviation ``sd_t`` on t (for the same measure):

    * ``"z"``: ``z = (x - mean_t) / sd_t`` (Webber, Moffat & Zobel, "Score standardization for
      inter-collection comparison of retrieval systems", SIGIR 2008; trec_eval ``-Z``);
    * ``"std_cdf"``: ``Phi(z)``, the standard normal CDF (Webber et al. 2008);
    * ``"std_ab"``: ``min(1, max(0, a z + b))`` (Sakai, "A simple and effective approach to
      score standardisation", ICTIR 2016: b = 0.5 for the "average" system and a = 0.15, so that
      the values within 3 standard deviations, at least 1 - 1/3^2 = 89% of any distribution by
      Chebyshev's inequality, land in [0.05, 0.95]; values outside [0, 1] are clipped). Urbano et al.
      (2019) read it as the CDF of a uniform distribution on [mean_t - sd_t b/a, mean_t + sd_t (1-b)/a];
    * ``"ecdf"``: ``F_t(x) = 1/n #{reference runs j: x_jt <= x}``, the empirical CDF of the n
      reference values, in (0, 1] on them (Urbano, Lima & Hanjalic, "A new perspective on score
      standardization", SIGIR 2019: E-std, R's ``ecdf`` in their code; ties count in full, no
      interpolation). A NaN value stays NaN and is no reference value.

    With ``reference=None`` every run of ``result`` is the reference set, as in Urbano et al.'s
    experiments, whose published correlations this function reproduces to their 6 decimals for
    all four methods (TREC Robust 2004 and Terabyte 2006 AP; see ``tests/data/standardization``).
    Where the reference values of a topic do not vary, their code sets mean 0 and sd 1, so z is the
    raw value: ``zero_variance='raw'`` (trec_eval gives 0 where x is the mean).

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values (``run``, ``query_id``, ``measure``, ``value``;
        variant keys such as ``level`` standardise each variant separately).
    reference : str, list of str or DataFrame, optional
        The reference runs: names of runs in ``result`` or a result frame of other runs.
        None: every run of ``result``. Ignored with ``zscores``.
    method : {'z', 'std_cdf', 'std_ab', 'ecdf'}, default 'z'
        The standardisation (above).
    zscores : str, path or DataFrame, optional
        A trec_eval z-score file (or its frame from :func:`pdeval.read_zscores`): the means
        and standard deviations per topic and trec_eval measure name, applied as trec_eval
        10.0 applies ``-Z``: a standard deviation of 0 gives 0 where x equals the mean, else
        ``fill_value``; a (topic, measure) the file lacks gives ``fill_value``. Not with ``ecdf``.
    a : float, default 0.15
        Sakai's A of ``std_ab`` (a positive number; ``method='std_ab'`` only).
    b : float, default 0.5
        Sakai's B of ``std_ab`` (``method='std_ab'`` only).
    zero_variance : {'error', 'nan', 'trec_eval', 'raw'}, default 'error'
        Where the reference values of a topic are all equal (sd 0, computed from
        ``reference``): an error naming them, NaN, trec_eval's rule (0 where x equals their
        value, else ``fill_value``), or z = x, the value unstandardised (mean 0 and sd 1, as
        Urbano et al.'s code does). The ECDF needs no variance and ignores it.
    fill_value : float, optional
        The value where trec_eval's rule finds no z (default NaN; trec_eval prints -1000000).

    Returns
    -------
    DataFrame
        ``result`` with ``value`` standardised (rows and columns unchanged).

    Raises
    ------
    PdevalError
        An option outside its domain (the old ``missing=`` names ``fill_value``), a
        reference set of fewer than two runs, topics no (or only one) reference run has
        (named), zero variance under ``zero_variance='error'``.
    ParseError
        A malformed z-score file.

    See Also
    --------
    zscore_table : The reference means and deviations, for a trec_eval z-score file.
    read_zscores : Read a trec_eval z-score file.

    Examples
    --------
    >>> result = pd.DataFrame({"run": ["a", "a", "b", "b", "c", "c"], "query_id": ["1", "2"] * 3,
    ...                        "measure": "AP", "value": [0.1, 0.5, 0.3, 0.6, 0.5, 0.7]})
    >>> pdeval.standardize(result).round(3)
      run query_id measure  value
    0   a        1      AP   -1.0
    1   a        2      AP   -1.0
    2   b        1      AP    0.0
    3   b        2      AP    0.0
    4   c        1      AP    1.0
    5   c        2      AP    1.0
    >>> pdeval.standardize(result, method="ecdf")["value"].round(3).tolist()
    [0.333, 0.333, 0.667, 0.667, 1.0, 1.0]
    """
    fill_value = np.nan if fill_value is None else float(fill_value)
    if zscores is not None:
        return _from_zscores(as_result(result), zscores, method, a, b, fill_value)
    result, ref, keys = _split(result, reference)
    if method == "ecdf":
        return result.assign(value=_ecdf(result, ref, keys))
    factors = _factors(ref, keys)
    merged = result[keys].merge(factors, on=keys, how="left")
    if merged["mean"].isna().any():
        _lacking(merged.loc[merged["mean"].isna(), keys])
    z = _apply_factors(result["value"].to_numpy(np.float64), merged["mean"].to_numpy(), merged["stddev"].to_numpy(),
                       zero_variance, merged[keys], fill_value)
    return result.assign(value=_transform(z, method, a, b))


def _transform(z: np.ndarray, method: str, a: float, b: float) -> np.ndarray:
    if method == "std_cdf":
        return stats.norm.cdf(z)
    if method == "std_ab":
        return np.clip(a * z + b, 0.0, 1.0)
    return z


def _from_zscores(result: pd.DataFrame, zscores, method: str, a: float, b: float, fill_value: float) -> pd.DataFrame:
    table = zscores if isinstance(zscores, pd.DataFrame) else read_zscores(zscores)
    table = table.drop_duplicates(["query_id", "measure"], keep="last")  # trec_eval finds one of them
    names = result["measure"].map(_trec_eval_names(result["measure"]))
    lookup = pd.DataFrame({"query_id": result["query_id"].astype(str).to_numpy(), "measure": names.to_numpy()})
    merged = lookup.merge(table.astype({"query_id": str, "measure": str}), on=["query_id", "measure"], how="left")
    absent = merged["mean"].isna().to_numpy()
    if absent.any():
        warn(f"{int(absent.sum())} value(s) have no mean and deviation in the z-score file (trec_eval prints "
             f"-1000000 for them): they get {fill_value}", PdevalWarning)
    z = _apply_factors(result["value"].to_numpy(np.float64), merged["mean"].to_numpy(), merged["stddev"].to_numpy(),
                       "trec_eval", merged, fill_value)
    z = np.where(absent, fill_value, z)
    return result.assign(value=np.where(z == fill_value, z, _transform(z, method, a, b)) if method != "z" else z)
