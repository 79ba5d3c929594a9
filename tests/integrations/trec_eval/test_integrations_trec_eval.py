"""trec_eval output as data: read_trec_eval / write_trec_eval against trec_eval's own outputs.

The expected outputs in tests/data/trec_eval/ were printed by NIST's trec_eval 10.0
(see that folder's PROVENANCE.md); they are the independent source here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import ParseError, PdevalError
from locations import TESTS

DATA = TESTS / "data" / "trec_eval"
#: measures pdeval computes, by trec_eval name -> pdeval string
SHARED = {
    "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet", "map": "AP", "Rprec": "Rprec",
    "bpref": "Bpref", "recip_rank": "RR", "P_5": "P@5", "P_10": "P@10", "P_1000": "P@1000",
    "recall_100": "R@100", "ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "map_cut_100": "AP@100", "infAP": "infAP",
}


def _lines(path: Path, names) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.split()[0] in names]


@pytest.fixture(scope="module")
def result():
    run = pdeval.read_run(DATA / "results.test")
    qrels = pdeval.read_qrels(DATA / "qrels.test")
    return pdeval.evaluate(run, qrels, list(SHARED.values())).assign(run="STANDARD")


def test_read_gives_trec_eval_values_under_pdeval_names(result):
    read = pdeval.read_trec_eval(DATA / "out.test.aq")
    assert list(read.columns) == ["run", "query_id", "measure", "value"]
    assert set(read["run"]) == {"STANDARD"}  # from the runid line
    assert set(read["query_id"]) == {"301", "302", "303"}
    assert {"IPrec(recall=0.1)", "RprecMult(m=0.2)", "Success@5", "Unj@20"} <= set(read["measure"])
    merged = result.merge(read, on=["run", "query_id", "measure"], suffixes=("", "_trec_eval"))
    assert set(merged["measure"]) == set(SHARED.values())
    assert np.abs(merged["value"] - merged["value_trec_eval"]).max() <= 5e-5  # 4 printed decimals


def test_read_summary_and_raw_names():
    summary = pdeval.read_trec_eval(DATA / "out.test.aq", summary=True)
    assert list(summary.columns) == ["run", "measure", "value"]
    values = summary.set_index("measure")["value"]
    assert values["num_q"] == 3 and values["NumRet"] == 1500 and values["AP"] == pytest.approx(0.1785)
    raw = pdeval.read_trec_eval(DATA / "out.test.aq", canonical=False, run="mine")
    assert {"map", "P_10", "gm_map"} <= set(raw["measure"]) | set(
        pdeval.read_trec_eval(DATA / "out.test.aq", canonical=False, summary=True)["measure"]
    )
    assert set(raw["run"]) == {"mine"}


def test_relstring_lines_are_not_measures():
    read = pdeval.read_trec_eval(DATA / "out.test.aql", canonical=False)
    assert "relstring_20" not in set(read["measure"])
    assert read.loc[(read["measure"] == "map") & (read["query_id"] == "301"), "value"].item() == 0.0003


def test_written_lines_are_trec_eval_lines(result):
    text = pdeval.write_trec_eval(result)
    assert result.ir.write_trec_eval() == text  # accessor wiring
    expected = _lines(DATA / "out.test.aq", set(SHARED) | {"runid", "num_q"})
    written = text.splitlines()
    assert sorted(written) == sorted(expected)
    # trec_eval's order: per-topic lines first, the 'all' block last, runid first in it
    assert written[len(written) - len(SHARED) - 2].startswith("runid")


def test_round_trip_is_exact_with_full_precision(tmp_path, result):
    run = pdeval.datasets.load("clef2018").runs
    qrels = pdeval.datasets.load("clef2018").qrels
    several = pdeval.evaluate(run[run["run"].isin(run["run"].unique()[:3])], qrels, ["AP", "nDCG@10", "NumRelRet"])
    for frame in (result, several):
        path = tmp_path / "out.txt"
        pdeval.write_trec_eval(frame, path, digits=None)
        back = pdeval.read_trec_eval(path)
        key = ["run", "query_id", "measure"]
        pd.testing.assert_frame_equal(
            back.sort_values(key).reset_index(drop=True),
            frame[key + ["value"]].astype({"value": float}).sort_values(key).reset_index(drop=True),
            check_dtype=False,
        )


def test_bad_files_raise_with_the_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("map\t301\t0.1\nmap 302\n")
    with pytest.raises(ParseError, match="line 2"):
        pdeval.read_trec_eval(bad)
    only_all = tmp_path / "all.txt"
    only_all.write_text("map\tall\t0.1\n")
    with pytest.raises(PdevalError, match="summary=True"):
        pdeval.read_trec_eval(only_all)
    with pytest.raises(PdevalError, match="variant"):
        pdeval.write_trec_eval(pd.DataFrame({"run": "a", "level": 1, "query_id": "1", "measure": "AP", "value": 0.5}, index=[0]))


def test_malformed_values_and_repeated_keys_are_parse_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("map\t301\t0.1\nP_10\t301\tabc\n")
    with pytest.raises(ParseError, match=r"line 2.*not a number|not a number.*line 2"):
        pdeval.read_trec_eval(bad)
    twice = tmp_path / "twice.txt"
    twice.write_text("map\t301\t0.1\nmap\t302\t0.2\nmap\t301\t0.3\n")
    with pytest.raises(ParseError, match="lines 1, 3"):
        pdeval.read_trec_eval(twice)
    assert pdeval.read_trec_eval(twice, duplicates="first")["value"].tolist() == [0.1, 0.2]
    assert pdeval.read_trec_eval(twice, duplicates="last")["value"].tolist() == [0.2, 0.3]
    with pytest.raises(PdevalError, match="duplicates"):
        pdeval.read_trec_eval(twice, duplicates="max")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"map\t301\t0.1\nmap\t30\xff\t0.2\n")
    with pytest.raises(ParseError, match="UTF-8"):
        pdeval.read_trec_eval(binary)


def test_concatenated_outputs_are_one_run_each(tmp_path):
    text = (DATA / "out.test.aq").read_text()
    both = tmp_path / "both.txt"
    both.write_text(text + text.replace("STANDARD", "OTHER"))
    read = pdeval.read_trec_eval(both)
    assert set(read["run"]) == {"STANDARD", "OTHER"}
    same = tmp_path / "same.txt"
    same.write_text(text + text)
    with pytest.raises(ParseError, match="repeated"):
        pdeval.read_trec_eval(same)


def test_written_names_are_trec_eval_names_for_every_family():
    frame = pd.DataFrame({"run": "r", "query_id": "1", "measure": ["IPrec(recall=0.1)", "RprecMult(m=2.0)", "GMAP", "SetF",
                                                                   "NumNonrelJudgedRet", "Success@5"], "value": 0.5})
    names = [line.split("\t")[0].strip() for line in pdeval.write_trec_eval(frame).splitlines()]
    assert names[:4] == ["iprec_at_recall_0.10", "Rprec_mult_2.00", "set_F", "num_nonrel_judged_ret"]
    assert "gm_map" in names and "success_5" in names and names.count("gm_map") == 1  # gm_map: summary only


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=6),
    runs=st.integers(min_value=1, max_value=3),
)
def test_any_values_round_trip_exactly(tmp_path_factory, values, runs):
    rows = [
        {"run": f"r{r}", "query_id": str(t), "measure": measure, "value": value}
        for r in range(runs)
        for t, value in enumerate(values)
        for measure in ("AP", "nDCG@10", "bpref_R")
    ]
    frame = pd.DataFrame(rows)
    path = tmp_path_factory.mktemp("trec_eval") / "out.txt"
    pdeval.write_trec_eval(frame, path, digits=None)
    back = pdeval.read_trec_eval(path)
    key = ["run", "query_id", "measure"]
    assert back.sort_values(key)["value"].tolist() == frame.sort_values(key)["value"].tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x1F600, blacklist_categories=("Cs",)),
                        max_size=4), min_size=0, max_size=30))
def test_the_all_lines_order_topics_by_their_utf8_bytes(topics):
    """trec_eval adds a summary's topics in byte order of their ids: the ranks of the distinct
    ids sort the rows as their UTF-8 bytes do (stable among equal ids)."""
    from pdeval.integrations.trec_eval.output import _byte_ranks

    ranks = _byte_ranks(pd.Series(topics, dtype=object))
    expected = sorted(range(len(topics)), key=lambda i: topics[i].encode("utf-8"))
    assert list(np.argsort(ranks, kind="stable")) == expected
