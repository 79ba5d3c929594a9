"""Every measure of the incomplete-judgment family on the real CLEF eHealth runs.

Evaluates all runs of clef2018 (24 runs, 8 with duplicate documents: ``duplicates="first"``),
clef2016 (16 runs) and clef2015 (68 runs, graded qrels with ``qtest.N`` ids) at full depth
(1000) and checks that nothing fails, that every value lies in [0, 1], that NaN appears only
where the measure is undefined, and a few identities that must hold on these qrels (they
have no ``-1`` entries). Skipped when the shared data folder (``../shared/data`` next to the
repository) is absent. Takes about 30 s in all.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval
from locations import REPO

DATA = REPO.parent / "shared" / "data"

DATASETS = {
    "clef2018": ("clef2018-chs-task1", "qrels.txt"),
    "clef2016": ("clef2016-chs-task2", "qrels.txt"),
    "clef2015": ("clef2015-chs-task2", "qrels/qrels.eng.clef2015.qtest.graded.txt"),
}

MEASURES = [
    "bpref10",
    "bpref10(denominator=fixed)",
    "bpref10(denominator=legacy)",
    "bpref_R",
    "bpref_N",
    "RankEff",
    "RankEff(unretrieved=ignore)",
    "bpref_relative",
    "AP",
    "AP'",
    "indAP",
    "subAP(p=0.3)",
    "subAP(p=auto)",
    "infAP",
    "infAP(c=1.5)",
    "infAP(pool_aware=false)",
    "rpref_N",
    "rpref_relative",
    "rpref_relative2",
    "npref",
    "npref(n=2, norm=N)",
    "npref(n=8, norm=relative2)",
    "Q",
    "Q'",
    "nDCG(dcg=sakai)",
    "nDCG'(dcg=sakai)",
]


def _load(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    folder, qrels_file = DATASETS[name]
    root = DATA / folder
    if not root.is_dir():
        pytest.skip(f"real data not found: {root} (the shared data folder sits next to the repository)")
    from pdeval.sources.io import read_qrels, read_run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 2018 duplicate-document warnings
        run = read_run(str(root / "runs" / "*.gz"), duplicates="first")
    return run, read_qrels(root / qrels_file)


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_measure_on_real_runs(name: str) -> None:
    run, qrels = _load(name)
    result = pdeval.evaluate(run, qrels, MEASURES, undefined="nan")
    n_runs = run["run"].nunique()
    assert result["run"].nunique() == n_runs
    assert set(result["measure"]) == {str(pdeval.parse_measure(m)) for m in MEASURES}

    values = result["value"].to_numpy()
    defined = ~np.isnan(values)
    assert (values[defined] >= -1e-12).all() and (values[defined] <= 1 + 1e-12).all()

    judged = qrels[qrels["relevance"] >= 0]
    num_rel = judged.groupby("query_id")["relevance"].apply(lambda r: int((r >= 1).sum()))
    num_nonrel = judged.groupby("query_id")["relevance"].apply(lambda r: int((r == 0).sum()))
    topic_rel = result["query_id"].map(num_rel).fillna(0).to_numpy()
    topic_nonrel = result["query_id"].map(num_nonrel).fillna(0).to_numpy()
    undefined = topic_rel == 0
    undefined |= result["measure"].str.startswith("RankEff").to_numpy() & (topic_nonrel == 0)
    assert (np.isnan(values) == undefined).all(), result[np.isnan(values) != undefined].head()

    # identities on qrels without -1 entries (MEASURES.md M20.2, M20.4)
    wide = result.pivot_table(index=["run", "query_id"], columns="measure", values="value", dropna=False)
    assert (qrels["relevance"] >= 0).all()
    for a, b in [("RankEff", "bpref_N"), ("indAP", "AP"), ("subAP(p=auto)", "AP")]:
        left, right = wide[a].to_numpy(), wide[b].to_numpy()
        both = ~np.isnan(left)
        assert np.allclose(left[both], right[both], atol=1e-12, rtol=0), (a, b)
    # E[r/(r+n+X)] >= r/(r+n+nd): keeping fewer absent documents never lowers the estimate
    sub, ind = wide["subAP(p=0.3)"].to_numpy(), wide["indAP"].to_numpy()
    both = ~np.isnan(ind)
    assert (sub[both] >= ind[both] - 1e-12).all()
