"""The TREC Auto-Judge qrels agreement (``autojudge-evaluate`` 1.1.0, test extra) as an oracle.

``import autojudge_evaluate`` runs its command line, whose imports fetch nltk data from the
network and fail offline. Its module that computes the qrels agreement, ``nugget_doc_eval``
(``set_overlap``: precision, recall, F1; ``grade_agreement``: Jaccard, kappa at every pair of
thresholds, weighted kappa, Krippendorff's alpha, ARI), is loaded here without running the
``__init__`` of ``autojudge_evaluate`` or ``autojudge_base``: both are registered as bare
packages for the time of the import. :func:`nugget_doc_eval` returns ``None`` when the package
is not installed.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Optional

import pandas as pd

__all__ = ["nugget_doc_eval", "qrel_evaluate", "qrel_evaluate_command"]

_LOADED: dict = {}
_PACKAGES = ("autojudge_evaluate", "autojudge_base")


def _bare(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = list(importlib.util.find_spec(name).submodule_search_locations)
    return module


@contextlib.contextmanager
def _bare_packages():
    """The two packages registered without their ``__init__`` for the time of the block."""
    saved = {name: sys.modules.get(name) for name in _PACKAGES}
    try:
        for name in _PACKAGES:
            if saved[name] is None:
                sys.modules[name] = _bare(name)
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)


def nugget_doc_eval() -> Optional[types.ModuleType]:
    """``autojudge_evaluate.nugget_doc_eval`` loaded without the packages' ``__init__``, or None."""
    if "module" not in _LOADED:
        if any(importlib.util.find_spec(name) is None for name in _PACKAGES):
            _LOADED["module"] = None
        else:
            with _bare_packages():
                _LOADED["module"] = importlib.import_module("autojudge_evaluate.nugget_doc_eval")
    return _LOADED["module"]


def qrel_evaluate_command(truth: Path, predicted: Path, output: Path, **options) -> pd.DataFrame:
    """The table ``autojudge-evaluate qrel-evaluate`` prints (rounded to 4 digits, MEAN row last),
    from its command run in-process on two qrels files; ``options`` are its flags
    (``truth_max_grade=3`` is ``--truth-max-grade 3``)."""
    from click.testing import CliRunner

    with _bare_packages():
        command = importlib.import_module("autojudge_evaluate._commands._qrel_evaluate").qrel_evaluate
        flags = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
        outcome = CliRunner().invoke(command, ["--truth-qrels", str(truth), "--predict-qrels", str(predicted),
                                               "--output", str(output), *flags])
    if outcome.exit_code != 0:
        raise RuntimeError(f"qrel-evaluate failed: {outcome.output}") from outcome.exception
    return pd.read_json(output, lines=True, dtype={"Topic": str})


def _qrels(frame: pd.DataFrame):
    """An autojudge ``Qrels`` of a qrels frame."""
    qrels_module = sys.modules["autojudge_base.qrels.qrels"]
    rows = [qrels_module.QrelRow(topic_id=str(q), doc_id=str(d), grade=int(g))
            for q, d, g in zip(frame["query_id"], frame["doc_id"], frame["relevance"])]
    return qrels_module.Qrels(rows=rows)


def qrel_evaluate(truth: pd.DataFrame, predicted: pd.DataFrame, *, truth_max_grade: int, predict_max_grade: int,
                  truth_relevance_threshold: int = 1, predict_relevance_threshold: int = 1, on_missing: str = "default",
                  default_grade: int = 0) -> pd.DataFrame:
    """The per-topic table of ``qrel-evaluate`` (unrounded) as a long frame ``query_id, statistic,
    reference_threshold, label_threshold, value``, with the MEAN row as ``query_id="mean"``
    (the mean over the table's topics, NaN left out, as the command computes it before rounding)."""
    module = nugget_doc_eval()
    t, p = _qrels(truth), _qrels(predicted)
    sides = dict(truth_relevance_threshold=truth_relevance_threshold,
                 predict_relevance_threshold=predict_relevance_threshold)
    overlap = module.set_overlap(t, p, on_missing=on_missing, **sides)
    agreement = module.grade_agreement(t, p, on_missing=on_missing, default_grade=default_grade,
                                       truth_max_grade=truth_max_grade, predict_max_grade=predict_max_grade, **sides)
    pair = (truth_relevance_threshold, predict_relevance_threshold)
    rows = []
    for r in overlap:
        rows += [(r.topic_id, name, *pair, getattr(r, name)) for name in ("precision", "recall", "f1")]
    for r in agreement:
        rows += [(r.topic_id, "jaccard", *pair, r.jaccard), (r.topic_id, "ari", *pair, r.ari),
                 (r.topic_id, "kappa_linear", -1, -1, r.kappa_weighted),
                 (r.topic_id, "alpha_ordinal", -1, -1, r.kripp_alpha)]
        rows += [(r.topic_id, "kappa", tt, pt, value) for (tt, pt), value in r.kappa_binary.items()]
    long = pd.DataFrame(rows, columns=["query_id", "statistic", "reference_threshold", "label_threshold", "value"])
    long["value"] = long["value"].astype(float)
    keys = ["statistic", "reference_threshold", "label_threshold"]
    topics = sorted({r.topic_id for r in overlap} | {r.topic_id for r in agreement})
    # the command's table has a row per topic of either list; a missing value is NaN there
    grid = long.set_index(["query_id", *keys])["value"].unstack("query_id").reindex(columns=topics)
    mean = grid.mean(axis=1, skipna=True).rename("value").reset_index().assign(query_id="mean")
    return pd.concat([long, mean], ignore_index=True)
