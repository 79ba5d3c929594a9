"""The pdeval command: trec_eval-compatible output, options, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pdeval.cli import main

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"


def trec_eval_all_lines(path: Path) -> dict:
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return {(m, q): v for m, q, v in lines}


def test_eval_prints_trec_eval_lines_that_match_trec_eval(capsys):
    assert main(["eval", str(DATA / "qrels.test"), str(DATA / "results.test"),
                 "-m", "AP", "-m", "P@10", "-m", "Bpref", "-m", "infAP", "-m", "nDCG@10", "-m", "NumRet", "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    expected = trec_eval_all_lines(DATA / "out.test.aq")
    ours = {}
    for line in out:
        measure, query, value = line.split("\t")
        ours[(measure.strip(), query)] = value
    assert ours[("map", "all")] == expected[("map", "all")]
    assert ours[("num_ret", "all")] == expected[("num_ret", "all")]  # a sum, printed as an integer
    for key, value in ours.items():
        assert key in expected and value == expected[key], key


def test_eval_options_reach_the_engine(capsys):
    args = ["eval", str(DATA / "qrels.test"), str(DATA / "results.trunc"), "-m", "AP", "-m", "NumRet"]
    main(args + ["-c", "-M", "100", "-q"])
    out = dict(((l.split("\t")[0].strip(), l.split("\t")[1]), l.split("\t")[2]) for l in capsys.readouterr().out.splitlines())
    expected = trec_eval_all_lines(DATA / "out.test.aqcM")
    assert out[("map", "all")] == expected[("map", "all")]
    assert out[("num_ret", "all")] == expected[("num_ret", "all")]


def test_eval_json_and_csv_are_tidy(capsys):
    main(["eval", str(DATA / "qrels.test"), str(DATA / "results.test"), "-m", "AP'", "--format", "json"])
    rows = json.loads(capsys.readouterr().out)
    assert rows and set(rows[0]) == {"run", "measure", "query_id", "value"}
    assert rows[-1]["query_id"] == "all" and rows[-1]["measure"] == "AP'"
    main(["eval", str(DATA / "qrels.test"), str(DATA / "results.test"), "-m", "AP", "--format", "csv"])
    assert capsys.readouterr().out.startswith("run,measure,query_id,value")


def test_errors_are_one_line_and_exit_2(capsys, tmp_path):
    assert main(["eval", str(DATA / "qrels.test"), str(DATA / "results.test"), "-m", "bperf"]) == 2
    assert "Did you mean" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "missing.txt"), str(DATA / "results.test")]) == 2
    assert "missing.txt" in capsys.readouterr().err


def test_measures_lists_every_measure(capsys):
    main(["measures"])
    out = capsys.readouterr().out
    assert "infAP" in out and "Bpref" in out


def test_python_dash_m_runs_the_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pdeval", "measures"], capture_output=True, text=True)
    assert done.returncode == 0 and "AP" in done.stdout
