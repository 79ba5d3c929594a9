"""PyTerrier: its frames, its significance-test hook, and its experiment table.

**Frames.** PyTerrier's result frames (``qid, docid, docno, rank, score, query``, with
``docno`` the document name and ``docid`` Terrier's internal number) and qrels frames
(``qid, docno, label``) are read by pdeval's alias renaming (:mod:`pdeval.frames.canonical`); the
``query`` text is ignored. Its per-query evaluation frames (``name, qid, measure, value``,
``pt.Experiment(perquery=True)``) are result frames once :func:`from_perquery` renames them.

**Tests.** ``pt.Experiment(test=...)`` takes a callable with the signature of
``scipy.stats.ttest_rel`` (two arrays of per-topic values, returning a tuple whose second
item is the p-value); :func:`paired_test` gives pdeval's paired tests in that form
(``pt.Experiment(..., baseline=0, test=paired_test("permutation", seed=1))``).
``pt.Experiment(correction=...)`` takes only a statsmodels ``multipletests`` method name:
pdeval's corrections (``"holm"``, ``"bonferroni"``, ``"fdr_bh"``,
:func:`pdeval.analysis.statistics.significance.adjust_pvalues`) have the same names and give the same values.

**Experiments.** :func:`experiment` builds ``pt.Experiment``'s table from runs or from an
already evaluated result frame, with pdeval's measures, tests and corrections.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import (
    Boolean, Callable_, Choice, Instance, Integer, ListOf, MappingOf, Nullable, OneOf, Real, Text, contract,
)
from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.frames.domains import Frame
from pdeval.measures.domains import Measures
from pdeval.errors import PdevalError, SchemaError
from pdeval.analysis.statistics.scores import score_matrices
from pdeval.common.seeds import Seed
from pdeval.analysis.statistics.significance import CORRECTIONS, TESTS, adjust_pvalues, compare

TestLike = Union[str, Callable[[np.ndarray, np.ndarray], Any]]


def from_perquery(frame: pd.DataFrame) -> pd.DataFrame:
    """PyTerrier's per-query frame (``name, qid, measure, value``) as a result frame."""
    return frame.rename(columns={"name": "run", "qid": "query_id"})


def paired_test(test: str = "t", **options: Any) -> Callable[[np.ndarray, np.ndarray], tuple]:
    """A pdeval paired test as a ``scipy.stats.ttest_rel``-like callable for ``pt.Experiment``.

    ``test`` is one of :func:`pdeval.compare`'s tests (``"t"``, ``"wilcoxon"``, ``"sign"``,
    ``"permutation"``, ``"bootstrap"``); ``options`` go to :func:`pdeval.compare` (``seed``,
    ``n_resamples``). The callable takes the per-topic values of a system and of the
    baseline (same topic order) and returns ``(statistic, p_value)``.
    """

    def call(a, b) -> tuple:
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if a.shape != b.shape or a.ndim != 1:
            raise PdevalError(f"paired tests need two 1-d arrays of the same length, got shapes {a.shape} and {b.shape}")
        topics = np.arange(a.size).astype(str)
        result = pd.DataFrame(
            {
                "run": np.repeat(["system", "baseline"], a.size),
                "query_id": np.tile(topics, 2),
                "measure": "m",
                "value": np.concatenate([a, b]),
            }
        )
        row = compare(result, baseline="baseline", test=test, correction=None, **options).iloc[0]
        return float(row["statistic"]), float(row["p_value"])

    call.__name__ = f"pdeval_{test}"
    return call


def _named_runs(runs: Any, names: Optional[Sequence[str]]) -> tuple[pd.DataFrame, list]:
    """A list or dict of runs as one run frame, and the run names in the order given."""
    from pdeval.frames import canonical as frames
    from pdeval.frames.foreign import to_frame

    if isinstance(runs, dict):  # pt.Experiment's {name: system}
        if names is not None:
            raise SchemaError("names= names the runs of a list; a dict of runs is named by its keys")
        names, runs = [str(key) for key in runs], list(runs.values())
    if names is not None and len(names) != len(runs):
        raise SchemaError(f"names= holds {len(names)} name(s) for {len(runs)} run(s)")
    parts, order = [], []
    for index, run in enumerate(runs):
        run = frames.canonicalize(to_frame(run))
        if names is not None:
            run = run.assign(run=names[index])
        elif "run" not in run.columns:
            raise SchemaError(f"run {index} of the list has no 'run' column: name the runs with names=")
        parts.append(run)
        order.extend(str(name) for name in pd.unique(run["run"]) if str(name) not in order)
    return pd.concat(parts, ignore_index=True), order


def _result_of(
    runs: Any, qrels: Any, measures: Any, names: Optional[Sequence[str]], options: EngineOptions
) -> tuple[pd.DataFrame, list]:
    """The result frame to tabulate and the run names in the order given (``pt.Experiment``'s
    row order, and what ``baseline=<position>`` counts in)."""
    from pdeval.frames import canonical as frames
    from pdeval.evaluation.core import evaluate_frames
    from pdeval.frames.foreign import to_frame

    if isinstance(runs, (list, tuple, dict)):
        runs, order = _named_runs(runs, names)
    else:
        runs = frames.canonicalize(from_perquery(to_frame(runs)) if "name" in getattr(runs, "columns", ()) else to_frame(runs))
        order = [str(name) for name in pd.unique(runs["run"])] if "run" in runs.columns else ["run"]
    if frames.frame_kind(runs) == "result":
        result = frames.as_result(runs)
        if measures is not None:
            wanted = [measures] if isinstance(measures, str) else list(measures)
            result = result[result["measure"].isin(wanted)]
        return result, order
    if qrels is None or measures is None:
        raise SchemaError("runs need qrels and measures to be evaluated (or pass an evaluated result frame)")
    return evaluate_frames(runs, qrels, measures, options), order


@contract(
    runs=OneOf(Frame("run", "result", foreign=True), ListOf(Frame("run", foreign=True), lone=False),
               MappingOf(Text("a run name"), Frame("run", foreign=True), min_len=1)),
    qrels=Nullable(Frame("qrels", foreign=True)),
    measures=Nullable(Measures()),
    baseline=Nullable(OneOf(Integer(0), Text("a run name"))),
    test=OneOf(Choice(*TESTS), Callable_("a scipy.stats.ttest_rel-like callable")),
    correction=Nullable(Choice(*CORRECTIONS)),
    alpha=Real(0, 1, closed="neither"),
    names=Nullable(ListOf(Text("a run name"), lone=False, unique=True)),
    wide=Boolean(),
    seed=Nullable(OneOf(Integer(0), Instance((np.random.Generator,), "a numpy.random.Generator"))),
    complete=Boolean(),
)
@takes_engine_options
def experiment(
    runs: Any,
    qrels: Any = None,
    measures: Any = None,
    *,
    baseline: Union[None, int, str] = None,
    test: TestLike = "t",
    correction: Optional[str] = None,
    alpha: float = 0.05,
    names: Optional[Sequence[str]] = None,
    wide: bool = True,
    seed: Seed = 0,
    complete: bool = True,
    **options: Any,
) -> pd.DataFrame:
    """PyTerrier's experiment table: mean per run and measure, and against a baseline the
    topics improved and degraded, p-values and corrected p-values.

    Parameters
    ----------
    runs : DataFrame, list of DataFrame, or dict of str to DataFrame
        A run frame holding several runs (``run`` column), a list of run frames (named by
        ``names`` or their ``run`` column), a dict ``{name: run}`` (as ``pt.Experiment``
        takes; a dict of ranx ``Run`` objects too), or an evaluated result frame (also
        PyTerrier's per-query frame ``name, qid, measure, value``). Polars, Arrow and ranx
        objects work too. The rows keep the order given: the list's (or dict's) order, else
        the order in which runs first appear in the frame.
    qrels : DataFrame, optional
        The qrels to evaluate runs with.
    measures : str or list of str, optional
        Used to evaluate runs (:func:`pdeval.evaluate` with the engine options below). For a
        result frame, ``measures`` selects measures. Scores are ordered at pdeval's default
        precision (64 bits, as trec_eval 10); ``score_precision="float32"`` gives
        ``pt.Experiment``'s numbers exactly (its ir_measures provider, pytrec_eval, rounds
        scores to 32 bits; pdeval measures inside ``pt.Experiment`` do the same, see
        :func:`pdeval.integrations.ir_measures.measure`).
    baseline : str or int, optional
        The baseline run: its name, or its position in the order given (``baseline=0`` is
        the first run given, as in ``pt.Experiment``; not the alphabetically first).
    test : {'t', 'wilcoxon', 'sign', 'permutation', 'bootstrap'} or callable, default 't'
        One of :func:`pdeval.compare`'s tests (``"t"`` -- the paired t-test, PyTerrier's
        default -- ``"wilcoxon"``, ``"sign"``, ``"permutation"``, ``"bootstrap"``) or a
        ``scipy.stats.ttest_rel``-like callable whose result's second item is the p-value.
    correction : {'holm', 'bonferroni', 'fdr_bh'}, optional
        ``None``, ``"holm"``, ``"bonferroni"`` or ``"fdr_bh"``: applied per measure over the
        runs compared with the baseline (PyTerrier's family); rejects at ``alpha``.
    alpha : float, default 0.05
        The level of the tests (``significant``, ``reject``).
    names : list of str, optional
        The names of the runs of a list (default: their ``run`` column).
    wide : bool, default True
        ``True``: PyTerrier's layout -- ``name``, one column of means per measure, then per
        measure ``"<m> +"``, ``"<m> -"``, ``"<m> p-value"`` and with a correction
        ``"<m> reject"``, ``"<m> p-value corrected"``; the baseline's cells are empty
        (its ``reject`` is False).
        ``False``: a tidy frame ``run, measure, value, improved, degraded, p_value,
        p_adjusted, significant``.
    seed : int, numpy.random.Generator or None, default 0
        Randomness of the permutation and bootstrap tests.
    complete : bool, default True
        trec_eval ``-c``: every run on every qrels topic, as ``pt.Experiment`` scores a topic a
        run lacks as 0.
    {engine_options}

    Returns
    -------
    DataFrame
        The experiment table (``wide``) or the tidy frame.

    Raises
    ------
    SchemaError
        For a baseline that is not one of the runs, a correction without a baseline, variant
        keys in the result, or runs without qrels and measures.
    PdevalError
        For an unknown or invalid engine option.

    See Also
    --------
    compare : The significance tests, in a tidy frame.
    summarize : The means alone.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["bm25"] * 4 + ["dfr"] * 4,
    ...                     "query_id": ["1", "1", "2", "2"] * 2, "doc_id": ["d1", "d2"] * 4,
    ...                     "score": [2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 2.0]})
    >>> qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
    >>> run.ir.experiment(qrels, "AP")
       name   AP
    0  bm25  1.0
    1   dfr  0.5
    """
    engine = EngineOptions.of({**options, "complete": complete}, where="experiment")
    result, given = _result_of(runs, qrels, measures, names, engine)
    from pdeval.frames.canonical import result_keys

    extra = [k for k in result_keys(result) if k not in ("run", "query_id")]
    if extra:
        raise SchemaError(f"the result has variant key column(s) {extra}; select one variant for an experiment table")
    present = set(pd.unique(result["run"]).astype(str))
    order = [name for name in given if name in present]  # the order given, as pt.Experiment
    measure_order = list(pd.unique(result["measure"]))
    if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
        if not 0 <= baseline < len(order):
            raise SchemaError(f"baseline={baseline} is not the position of one of the {len(order)} runs {order}")
        baseline = order[baseline]
    if baseline is not None and baseline not in order:
        raise SchemaError(f"baseline {baseline!r} is not one of the runs {order}")
    if correction is not None and baseline is None:
        raise SchemaError("a correction needs a baseline (the family is the runs compared with it)")
    means = result.groupby(["run", "measure"], sort=False)["value"].mean()
    rows = [{"run": r, "measure": m, "value": means[(r, m)]} for r in order for m in measure_order]
    table = pd.DataFrame(rows)
    if baseline is not None:
        stats = []
        for group in score_matrices(result, measure_order):
            b = group.runs.index(baseline)
            others = [i for i in range(len(group.runs)) if i != b]
            z = group.scores[others] - group.scores[b]
            if callable(test):
                p = np.array([float(test(group.scores[i], group.scores[b])[1]) for i in others])
            else:
                tested = compare(
                    result[result["measure"] == group.measure], baseline=baseline, test=test,
                    correction=None, seed=seed,
                ).set_index("run")
                p = tested["p_value"].reindex([group.runs[i] for i in others]).to_numpy(dtype=np.float64)
            adjusted = adjust_pvalues(p, correction) if correction is not None else np.full(p.shape, np.nan)
            stats.append(
                pd.DataFrame(
                    {
                        "run": [group.runs[i] for i in others],
                        "measure": group.measure,
                        "improved": (z > 0).sum(axis=1),
                        "degraded": (z < 0).sum(axis=1),
                        "p_value": p,
                        "p_adjusted": adjusted,
                        "significant": adjusted < alpha if correction is not None else p < alpha,
                    }
                )
            )
        table = table.merge(pd.concat(stats, ignore_index=True), on=["run", "measure"], how="left")
    if not wide:
        return table
    wide_table = table.pivot(index="run", columns="measure", values="value").reindex(index=order, columns=measure_order)
    wide_table.columns.name = None
    if baseline is not None:
        for m in measure_order:
            part = table[table["measure"] == m].set_index("run").reindex(order)
            wide_table[f"{m} +"] = part["improved"]
            wide_table[f"{m} -"] = part["degraded"]
            wide_table[f"{m} p-value"] = part["p_value"]
            if correction is not None:  # the baseline is not rejected (pt.Experiment writes False)
                wide_table[f"{m} reject"] = part["significant"].fillna(False).astype(bool)
                wide_table[f"{m} p-value corrected"] = part["p_adjusted"]
    return wide_table.rename_axis("name").reset_index()


__all__ = ["experiment", "from_perquery", "paired_test"]
