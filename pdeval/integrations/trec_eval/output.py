"""trec_eval's output: its rows (per-topic lines, then the ``all`` lines of each run) and text.

trec_eval prints ``%-22s\\t%s\\t%6.4f`` lines: the measure's name padded to 22 characters, the
topic (or ``all``) and the value with four decimals; counts (``num_ret``, ``num_rel``,
``num_rel_ret``, ``num_nonrel_judged_ret``, ``num_q``) as integers; ``relstring`` as a quoted
string, per topic only. The ``all`` line of a measure combines its topics as the registry says
(:attr:`pdeval.measures.MeasureSpec.aggregate`): the sum for counts, the geometric mean
``exp(mean(log(max(v, 1e-5))))`` for gm_map and gm_bpref (which have no per-topic line), the
mean otherwise. ``pdeval eval`` and :func:`pdeval.write_trec_eval` print through here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import Boolean, FilePath, Integer, Nullable, contract
from pdeval.errors import MeasureError, PdevalError
from pdeval.frames.canonical import as_result, result_keys
from pdeval.frames.domains import Frame
from pdeval.measures import parse, parse_all
from pdeval.measures.trec_sets import relstring

PathLike = Union[str, "os.PathLike[str]"]

#: measures trec_eval prints as integers (te_print_final_meas_s_long); besides num_q
COUNTS = {"NumRet", "NumRel", "NumRelRet", "NumNonrelJudgedRet"}

#: the floor of a value in a geometric mean (trec_eval's MIN_GEO_MEAN)
MIN_GEO_MEAN = 1e-5

#: cut-off measures whose trec_eval name carries a real parameter (``%3.2f``)
_REAL_CUTOFFS = {"IPrec": ("iprec_at_recall", "recall"), "RprecMult": ("Rprec_mult", "m")}

#: measures whose undefined value trec_eval prints as ``-nan`` (0/0 on an empty condensed list, -J)
NAN_PRINTED = {"IPrec", "IPrecAvg"}

#: measures whose undefined value trec_eval always prints as ``-nan``: Rndcg when the topic has
#: relevant documents but no ideal list (gains of 0, or trec_eval's order of fractional gains)
NAN_ALWAYS = {"RnDCG"}

__all__ = [
    "COUNTS", "MIN_GEO_MEAN", "NAN_ALWAYS", "NAN_PRINTED", "complete_num_rel", "trec_eval_name", "trec_eval_table",
    "trec_eval_values", "tsv_text", "write_trec_eval",
]


def trec_eval_values(result: pd.DataFrame, measures, judged_only: bool) -> pd.DataFrame:
    """The values trec_eval prints for a result evaluated with ``undefined="nan"``: undefined
    values are 0, except where trec_eval itself computes 0/0 (:data:`NAN_PRINTED` on lists that
    ``-J`` left empty; without -J an empty list is a -c topic, which trec_eval ranks as one
    unjudged document, so 0)."""
    keep = {str(m) for m in measures if m.spec.name in NAN_PRINTED} if judged_only else set()
    keep |= {str(m) for m in measures if m.spec.name in NAN_ALWAYS}
    value = result["value"].to_numpy(dtype=np.float64)
    zero = np.isnan(value) & ~result["measure"].isin(keep).to_numpy()
    return result.assign(value=np.where(zero, 0.0, value))


def complete_num_rel(result: pd.DataFrame, shown: str, at_one: str) -> dict:
    """trec_eval -c's ``num_rel all``: the qrels rows with relevance > 0 over every topic,
    whatever -l (m_num_rel.c), i.e. the sum of NumRel at threshold 1 (``at_one``); keyed
    by (run, ``shown``) for :func:`trec_eval_table`'s ``summary``."""
    rows = result[result["measure"] == at_one]
    return {(run, shown): value for run, value in rows.groupby("run", sort=False)["value"].sum().items()}


def trec_eval_name(measure) -> str:
    """The name trec_eval prints for a measure.

    Parameters
    ----------
    measure
        A measure string or :class:`~pdeval.measures.Measure`.

    Returns
    -------
    str
        trec_eval's name (``AP`` -> ``map``, ``P@10`` -> ``P_10``, ``IPrec(recall=0.1)`` ->
        ``iprec_at_recall_0.10``); the canonical string where trec_eval has no such measure.

    Raises
    ------
    MeasureError
        For a string that is no measure.
    """
    measure = parse(measure)
    if measure.name in _REAL_CUTOFFS and not measure.judged_only:
        family, key = _REAL_CUTOFFS[measure.name]
        params = dict(measure.params)
        defaults = measure.spec.all_params()
        if all(params[k] == defaults[k] for k in params if k != key):
            return f"{family}_{float(params[key]):3.2f}"
    return measure.trec_eval_name()


def _summaries(result: pd.DataFrame, kinds: dict) -> pd.DataFrame:
    """The ``all`` value of each (run, measure): sum, mean or geometric mean over topics, each
    sum added topic after topic in byte order of the topic ids, as trec_eval's accumulation does
    (pandas' compensated sums can round the fourth decimal the other way on a tie)."""
    frame = result[["run", "measure", "value", "query_id"]]
    kind = frame["measure"].map(kinds).fillna("mean").to_numpy()
    frame = frame[kind != "none"]
    kind = kind[kind != "none"]
    values = frame["value"].to_numpy(dtype=np.float64)
    logs = np.log(np.maximum(np.where(kind == "gmean", values, 1.0), MIN_GEO_MEAN))
    keys = frame[["run", "measure"]].astype(str)
    group, uniques = pd.MultiIndex.from_frame(keys).factorize()
    order = np.lexsort((_byte_ranks(frame["query_id"]), group)) if len(frame) else np.zeros(0, dtype=int)
    group, values, logs = group[order], values[order], logs[order]
    count = np.bincount(group, minlength=len(uniques))
    total, log_total = _sequential_sums(values, group, count), _sequential_sums(logs, group, count)
    first = np.searchsorted(group, np.arange(len(uniques)))
    group_kind = kind[order][first] if len(first) else np.zeros(0, dtype=object)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(group_kind == "sum", total,
                         np.where(group_kind == "gmean", np.exp(log_total / count), total / count))
    nan = np.bincount(group, weights=np.isnan(values), minlength=len(uniques)) > 0
    measures = uniques.get_level_values(1) if len(uniques) else []
    run_of = frame["run"].to_numpy(dtype=object)[order][first] if len(first) else []  # its own value, not its text
    return pd.DataFrame({"run": list(run_of), "measure": list(measures),
                         "value": np.where(nan, np.nan, value)})  # NaN spreads


def _byte_ranks(values: pd.Series) -> np.ndarray:
    """Each value's place among the distinct values (as text) in byte order of their UTF-8
    encoding: only the distinct values are encoded and compared."""
    codes, uniques = pd.factorize(values.astype(str))
    encoded = [str(value).encode("utf-8") for value in uniques]
    place = np.empty(len(encoded), dtype=np.int64)
    place[sorted(range(len(encoded)), key=encoded.__getitem__)] = np.arange(len(encoded))
    return place[codes]


def _sequential_sums(values: np.ndarray, group: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per group (rows sorted by group), the sum of its values added one after the other (C's
    loop; numpy's and pandas' sums add pairwise or compensated)."""
    if len(values) == 0:
        return np.zeros(len(count))
    width = int(count.max())
    within = np.arange(len(group)) - np.searchsorted(group, group)
    padded = np.zeros((len(count), width))
    padded[group, within] = values
    return np.cumsum(padded, axis=1)[:, -1]


def _relstring_rows(result: pd.DataFrame, codes: list, name: str) -> pd.DataFrame:
    """One row per (run, topic) whose value is trec_eval's quoted relevance string."""
    rows = result[result["measure"].isin(codes)]
    position = rows["measure"].map({code: i for i, code in enumerate(codes)})
    wide = rows.assign(_k=position).pivot_table(index=["run", "query_id"], columns="_k", values="value", sort=False)
    wide = wide.reindex(columns=range(len(codes)))
    text = [f"'{relstring(row)}'" for row in wide.to_numpy()]
    index = wide.index.to_frame(index=False)
    return index.assign(measure=name, value=text)[["run", "measure", "query_id", "value"]]


def trec_eval_table(
    result: pd.DataFrame,
    measures,
    order: dict,
    command: list,
    per_topic: bool,
    relstring_codes: Optional[tuple] = None,
    summary: Optional[dict] = None,
) -> pd.DataFrame:
    """trec_eval's rows for each run: per-topic values (with ``per_topic``), then the ``all`` lines.

    Parameters
    ----------
    result
        A result frame (``run``, ``query_id``, ``measure``, ``value``).
    measures
        The parsed measures of ``result`` (their ``aggregate`` decides each ``all`` line).
    order
        Each measure string (and the relstring name) to its sort key (trec_eval's order).
    command
        May hold ``"num_q"``: the number of topics of each run, as a row.
    per_topic
        Whether the per-topic rows come first (trec_eval ``-q``); gm_map and gm_bpref have none.
    relstring_codes
        ``(printed name, [RelAt@1 .. RelAt@N strings])`` when relstring is printed.
    summary
        ``all`` values that replace the computed ones, keyed by (run, measure)
        (:func:`complete_num_rel`).

    Returns
    -------
    pandas.DataFrame
        ``run, measure, query_id, value``: runs in the order of the result, topics in byte
        order, measures in trec_eval's order; ``value`` holds floats (and the quoted relevance
        strings, when asked for).
    """
    kinds = {str(m): m.spec.aggregate for m in measures}
    codes = list(relstring_codes[1]) if relstring_codes else []
    plain = result[~result["measure"].isin(codes)] if codes else result
    totals = _summaries(plain, kinds)
    if summary:
        replaced = [summary.get(key) for key in zip(totals["run"], totals["measure"])]
        totals["value"] = [old if new is None else new for old, new in zip(totals["value"].tolist(), replaced)]
    parts = [totals.assign(query_id="all", _section=2)]
    if "num_q" in command:
        counts = result.groupby("run", sort=False)["query_id"].nunique()
        parts.append(pd.DataFrame({"run": counts.index, "measure": "num_q", "query_id": "all",
                                   "value": counts.to_numpy(dtype=float), "_section": 1}))
    if per_topic:
        shown = plain[plain["measure"].map(kinds).fillna("mean") != "gmean"]
        parts.append(shown[["run", "measure", "query_id", "value"]].assign(_section=0))
        if codes:
            parts.append(_relstring_rows(result, codes, relstring_codes[0]).assign(_section=0))
    table = pd.concat(parts, ignore_index=True)
    table["query_id"] = table["query_id"].astype(str)
    rank = {name: i for i, name in enumerate(sorted(order, key=order.get))}
    runs = {run: i for i, run in enumerate(pd.unique(result["run"]))}  # in order of appearance
    table = table.assign(_run=table["run"].map(runs), _order=table["measure"].map(rank).fillna(-1),
                         _topic=table["query_id"].where(table["_section"] == 0, ""))
    table = table.sort_values(["_run", "_section", "_topic", "_order"], kind="stable")
    return table[["run", "measure", "query_id", "value"]].reset_index(drop=True)


def formatted_values(measure: pd.Series, value: pd.Series, counts: set, digits: Optional[int] = 4) -> np.ndarray:
    """trec_eval's text of each value: counts as integers, strings as they are, the others with
    ``digits`` decimals (``None``: the shortest text that reads back exactly)."""
    value = value.to_numpy()
    text = np.empty(len(value), dtype=object)
    is_text = (np.array([isinstance(v, str) for v in value], dtype=bool) if value.dtype == object
               else np.zeros(len(value), dtype=bool))
    is_count = measure.isin(counts).to_numpy() & ~is_text
    rest = ~is_count & ~is_text
    text[is_text] = value[is_text]
    text[is_count] = [str(int(round(v))) for v in value[is_count].astype(float).tolist()]
    numbers = value[rest].astype(float).tolist()
    text[rest] = [repr(v) for v in numbers] if digits is None else [
        f"{v:.{digits}f}" if v == v else f"{'-nan':>6}" for v in numbers  # C's printf("%6.4f") of 0/0
    ]
    return text


def tsv_text(table: pd.DataFrame, names: dict, counts: set, runids: Optional[dict], extra: tuple = (),
             digits: Optional[int] = 4, num_q: Optional[dict] = None) -> str:
    """trec_eval's output lines for the rows of :func:`trec_eval_table`: measure (renamed by
    ``names``, padded to 22 characters), topic and value, tab-separated, led by the run when
    there are several; ``extra`` names further value columns (``--bounds``). With ``runids``, a
    ``runid`` line heads each run's ``all`` lines (and a ``num_q`` line from ``num_q``)."""
    measure = table["measure"]
    shown = measure.map({m: f"{names.get(m, m):<22}" for m in measure.unique()})
    fields = [shown.tolist(), table["query_id"].astype(str).tolist(), formatted_values(measure, table["value"], counts, digits)]
    fields += [formatted_values(measure, table[column], counts, digits) for column in extra]
    run = table["run"].astype(str)
    single = run.nunique() == 1
    if not single:
        fields.insert(0, run.tolist())
    lines = np.array(list(map("\t".join, zip(*fields))), dtype=object)
    if runids is not None:  # before each run's first "all" line
        all_rows = np.flatnonzero((table["query_id"] == "all").to_numpy())
        first_all = all_rows[~run.iloc[all_rows].duplicated().to_numpy()]
        heads = []
        for name in run.to_numpy()[first_all]:
            head = [[name, f"{'runid':<22}", "all", runids.get(name, name)]]
            if num_q is not None:
                head.append([name, f"{'num_q':<22}", "all", str(int(num_q[name]))])
            heads.append("\n".join("\t".join(h[1:] if single else h) for h in head))
        lines = np.insert(lines, first_all, heads)
    return "\n".join(lines.tolist()) + "\n"


@contract(result=Frame("any"), path=Nullable(FilePath()), per_topic=Boolean(), digits=Nullable(Integer(0, 17)))
def write_trec_eval(
    result: pd.DataFrame,
    path: Optional[PathLike] = None,
    *,
    per_topic: bool = True,
    digits: Optional[int] = 4,
) -> str:
    """Write a result frame as trec_eval output; return the text (and write it to ``path``).

    Parameters
    ----------
    result : DataFrame
        A result frame (``run``, ``query_id``, ``measure``, ``value``); a frame without
        ``run`` is one run named ``run``.
    path : str or path, optional
        Where to write the text (default: only return it).
    per_topic : bool, default True
        Per-topic lines (``trec_eval -q``) first; ``False`` leaves them out.
    digits : int, optional
        Decimals of the values (trec_eval's 4; ``None`` prints the shortest text that reads
        back exactly).

    Returns
    -------
    str
        For each run its per-topic lines, then ``runid``, ``num_q`` and the ``all`` line of
        every measure, in trec_eval's names (``AP`` -> ``map``) and layout
        (``%-22s\\t%s\\t%.4f``, counts as integers, the ``all`` line the sum for counts, the
        geometric mean for gm_map/gm_bpref, else the mean). One run gives trec_eval's three
        columns, several runs a leading run column (as ``pdeval eval`` prints).

    Raises
    ------
    PdevalError
        When the result has variant keys (``level``, ``sample``): select one variant first.

    See Also
    --------
    read_trec_eval : Read trec_eval output.
    evaluate : The result frame written here.

    Examples
    --------
    >>> result = pd.DataFrame({"run": "bm25", "query_id": ["1", "2"], "measure": "AP",
    ...                        "value": [0.5, 0.25]})
    >>> print(pdeval.write_trec_eval(result), end="")  # doctest: +NORMALIZE_WHITESPACE
    map   1   0.5000
    map   2   0.2500
    runid all bm25
    num_q all 2
    map   all 0.3750
    """
    result = as_result(result)
    extra = [k for k in result_keys(result) if k not in ("run", "query_id")]
    if extra:
        raise PdevalError(f"the result has key column(s) {extra} besides run and query_id; select one variant first")
    if "run" not in result.columns:
        result = result.assign(run="run")
    given = list(pd.unique(result["measure"]))
    canonical = {name: str(parse(name)) for name in given}
    result = result.assign(measure=result["measure"].map(canonical))
    measures = parse_all(given)
    order = {str(m): position for position, m in enumerate(measures)}  # the result's order
    table = trec_eval_table(result, measures, order, [], per_topic)
    names = {}
    for measure in table["measure"].unique():
        try:
            names[measure] = trec_eval_name(measure)
        except MeasureError:
            names[measure] = measure
    counts = {str(m) for m in measures if m.spec.name in COUNTS}
    runs = result["run"].astype(str)
    topics = result.assign(run=runs).groupby("run", sort=False)["query_id"].nunique().to_dict()
    text = tsv_text(table.assign(run=table["run"].astype(str)), names, counts, {r: r for r in topics}, digits=digits,
                    num_q=topics)
    if path is not None:
        Path(path).write_text(text)
    return text
