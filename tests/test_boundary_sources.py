"""Bad inputs at the sources layer (issues: format detection that blamed line 1, numbers read
wrongly, raw exceptions from file readers, the CLI reading less than the library, tags repeated
across files, directories holding files that are not runs).

Each case asserts the error type and what the message must name: the file, the line, the
format the file was read as, and the remedy.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.cli.commands import main
from pdeval.errors import MissingFileError, ParseError, PdevalError, PdevalWarning, SchemaError
from pdeval.sources.sampled import prels_qrels

TREC = Path(__file__).resolve().parent / "data" / "trec_eval"


def write(tmp_path: Path, name: str, text) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ---- class 1: format detection names the wrong line and the format it read --------------------

SAMPLE_EVAL = "1 0 d1 A 1\n1 0 d2 A 0\n1 0 d3 B -1\n1 0 d4 B 1\n"
PRELS = "1 d1 1 1 0.5\n1 d2 0 1 0.25\n1 d3 1 2 1\n1 d4 0 1 0.125\n"

DETECTION_ERRORS = {
    # name: (file text, wrong line, format it must be read as, fragment of the message)
    "sample_eval_bad_relevance": (SAMPLE_EVAL + "1 0 d5 B x\n", 5, "sample_eval", "'x'"),
    "sample_eval_bad_first_line": ("1 0 d0 A yes\n" + SAMPLE_EVAL, 1, "sample_eval", "'yes'"),
    "sample_eval_missing_field": (SAMPLE_EVAL.replace("1 0 d2 A 0", "1 0 d2 0"), 2, "sample_eval", "found 4"),
    "sample_eval_extra_field": (SAMPLE_EVAL + "1 0 d5 B 0 extra\n", 5, "sample_eval", "found 6"),
    "prels_out_of_range_probability": (PRELS.replace("0.25", "1.5"), 2, "prels", "outside [0, 1]"),
    "prels_nan_relevance": (PRELS.replace("1 d3 1 2 1", "1 d3 nan 2 1"), 3, "prels", "'nan'"),
    "prels_missing_field": (PRELS.replace("1 d4 0 1 0.125", "1 d4 0 0.125"), 4, "prels", "found 4"),
}


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("name", sorted(DETECTION_ERRORS))
def test_a_bad_line_of_a_sampled_file_is_named_with_the_format_read(name, engine, tmp_path):
    text, line, kind, fragment = DETECTION_ERRORS[name]
    path = write(tmp_path, f"{name}.txt", text)
    with pytest.raises(ParseError) as raised:
        pdeval.read_qrels(path, engine=engine)
    error = raised.value
    message = str(error)
    assert error.path == str(path) and error.line == line, message
    assert f"line {line}:" in message and fragment in message
    assert f"read as {'sample_eval' if kind == 'sample_eval' else 'statAP prels'}" in message
    assert "pass format=" in message and "told from its first lines" in message


@pytest.mark.parametrize("text, kind, column", [
    ("1 Q0 d1 A 1\n1 Q0 d2 B 0\n1 Q0 d3 B -1\n", "sample_eval", "stratum"),  # an iteration column Q0
    ("1 0 1007359 1 0\n1 0 10120276 2 -1\n1 0 1012 1 1\n", "sample_eval", "stratum"),  # numeric doc ids
    ("1 1007359 1 1 0.5\n1 1012 0 1 0.25\n", "prels", "inclusion_prob"),  # numeric doc ids in prels
    ("1 clueweb-a 0 2 1\n1 clueweb-b 1 1 1\n1 clueweb-c 1 1 0.5\n", "prels", "inclusion_prob"),
    ("1 0 d1 1\n1 0 d2 0\n", "trec", "relevance"),
])
def test_a_file_that_is_clearly_one_format_is_read_as_that_format(text, kind, column, tmp_path):
    path = write(tmp_path, "q.txt", text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)  # prels: statAP's skipped topics
        qrels = pdeval.read_qrels(path)
        same = pdeval.read_qrels(path, format=kind)
    assert column in qrels.columns
    pd.testing.assert_frame_equal(qrels, same)


def test_the_cli_names_the_line_and_the_format(tmp_path, capsys):
    text, line, _, fragment = DETECTION_ERRORS["sample_eval_bad_relevance"]
    qrels = write(tmp_path, "q.txt", text)
    run = write(tmp_path, "r.txt", "1 Q0 d1 1 2 t\n")
    assert main(["eval", str(qrels), str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"line {line}" in err[0] and "sample_eval" in err[0] and "format=" in err[0]


# ---- class 3: numbers that would be truncated or wrapped -----------------------------------------

def test_prels_frame_with_nan_relevance_is_refused_naming_the_rows():
    prels = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"],
                          "relevance": [1.0, np.nan, 0.0], "method": [1, 1, 1], "inclusion_prob": [0.5, 0.5, 0.5]})
    with pytest.raises(SchemaError, match=r"'relevance' must hold integers; 1 row\(s\).*row 1 \(nan\)"):
        prels_qrels(prels)


def test_prels_frame_with_fractional_grades_is_refused_naming_the_rows():
    prels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.5, 1.0],
                          "method": [1, 1], "iprob": [0.5, 0.5]})
    with pytest.raises(SchemaError, match=r"row 0 \(1\.5\)"):
        prels_qrels(prels)


def test_a_fractional_grade_in_sample_eval_qrels_names_the_line(tmp_path):
    path = write(tmp_path, "se.txt", SAMPLE_EVAL + "1 0 d5 B 1.5\n")
    with pytest.raises(ParseError, match=r"line 5: the relevance \(field 5\) '1\.5' is not an integer"):
        pdeval.read_qrels(path)


# ---- class 4: file readers raise pdeval errors naming the file and the remedy --------------------

@pytest.mark.parametrize("suffix", [".parquet", ".feather"])
def test_a_text_file_named_as_a_table_names_the_file_and_the_remedy(suffix, tmp_path):
    path = write(tmp_path, "run" + suffix, "q1 Q0 d1 1 2 t\n")
    for read in (pdeval.read_run, pdeval.read_qrels):
        with pytest.raises(ParseError) as raised:
            read(path)
        assert raised.value.path == str(path)
        assert suffix in str(raised.value) and "rename it" in str(raised.value)


def test_a_truncated_gzip_download_names_the_file_and_the_remedy(tmp_path):
    whole = gzip.compress(("q1 0 d1 1\n" * 2000).encode())
    path = write(tmp_path, "qrels.txt.gz", whole[: len(whole) // 2])
    with pytest.raises(ParseError) as raised:
        pdeval.read_qrels(path)
    assert raised.value.path == str(path)
    assert "cannot decompress" in str(raised.value) and "download or copy it again" in str(raised.value)


def test_text_that_is_not_utf8_names_the_file_line_and_remedy(tmp_path):
    path = write(tmp_path, "latin1.txt", "q1 0 d1 1\nq1 0 caf\u00e9 0\n".encode("latin-1"))
    with pytest.raises(ParseError) as raised:
        pdeval.read_qrels(path)
    assert (raised.value.path, raised.value.line) == (str(path), 2)
    assert "not valid UTF-8" in str(raised.value) and "iconv" in str(raised.value)


# ---- issue 28 item 2: the CLI reads Parquet, Arrow IPC and Feather files -------------------------

@pytest.mark.parametrize("suffix", [".parquet", ".arrow", ".feather"])
def test_the_cli_reads_table_files(suffix, tmp_path, capsys):
    run = pdeval.read_run(TREC / "results.test")
    qrels = pdeval.read_qrels(TREC / "qrels.test")
    assert main(["eval", "-m", "map", "-m", "P.10", str(TREC / "qrels.test"), str(TREC / "results.test")]) == 0
    expected = capsys.readouterr().out
    run_file, qrels_file = tmp_path / f"run{suffix}", tmp_path / f"qrels{suffix}"
    pdeval.sources.tables.write_table(run, run_file)
    pdeval.sources.tables.write_table(qrels, qrels_file)
    assert main(["eval", "-m", "map", "-m", "P.10", str(qrels_file), str(run_file)]) == 0
    captured = capsys.readouterr()
    assert captured.out == expected and captured.err == ""
    # a table among text files, in a directory: named by its run column, or by its file
    (tmp_path / "runs").mkdir()
    pdeval.sources.tables.write_table(run.drop(columns="run"), tmp_path / "runs" / f"table{suffix}")
    (tmp_path / "runs" / "text.txt").write_bytes((TREC / "results.test").read_bytes())
    both = pdeval.read_run(tmp_path / "runs")
    assert sorted(both["run"].unique()) == ["table", "text"]
    pd.testing.assert_frame_equal(both[both["run"] == "table"].drop(columns=["run", "rank"]).reset_index(drop=True),
                                  run.drop(columns=["run", "rank"]))


# ---- issue 28 item 3: a tag repeated across files is named, never merged -------------------------

def test_a_tag_repeated_across_files_names_the_tag_and_every_file(tmp_path, capsys):
    files = [write(tmp_path, f"IELAB_0{i}.txt", f"q1 Q0 d{i} 1 2 clef2018b\nq1 Q0 e{i} 2 1 clef2018b\n")
             for i in range(1, 4)]
    for duplicates in ("error", "first", "max"):
        with pytest.raises(SchemaError) as raised:
            pdeval.read_run(files, run_from="tag", duplicates=duplicates)
        message = str(raised.value)
        assert "'clef2018b'" in message and all(str(f) in message for f in files)
        assert "run_from='file'" in message and "--run-from file" in message
    qrels = write(tmp_path, "q.txt", "q1 0 d1 1\n")
    assert main(["eval", "--run-from", "tag", "--duplicates", "first", str(qrels), *map(str, files)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "clef2018b" in err[0] and "--run-from file" in err[0] and "--duplicates" not in err[0]


# ---- issue 28 item 8: directories of runs; qrels given as a run ----------------------------------

def test_a_directory_skips_files_that_cannot_be_runs_with_a_warning(tmp_path):
    runs = tmp_path / "runs"
    write(runs, "bm25.txt", "q1 Q0 d1 1 2 t\n")
    for name in ("README.md", "notes.json", "make_runs.py", "LICENSE"):
        write(runs, name, "# not a run\nsome text\n")
    write(runs, ".DS_Store", b"\x00\x01")
    with pytest.warns(PdevalWarning, match="skipped 5 hidden file") as caught:
        run = pdeval.read_run(runs)
    assert run["run"].unique().tolist() == ["bm25"]
    message = str(caught[0].message)
    assert all(name in message for name in ("README.md", "notes.json", "make_runs.py", "LICENSE", ".DS_Store"))
    only_docs = tmp_path / "docs"
    write(only_docs, "README.md", "text\n")
    with pytest.raises(MissingFileError, match="README.md"):
        pdeval.read_run(only_docs)


def test_the_python_api_says_when_qrels_are_given_as_a_run(tmp_path):
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    with pytest.raises(ParseError, match="qrels file given as a run.*read_run and evaluate take the run first"):
        pdeval.read_run(qrels)
    frame = pdeval.read_qrels(qrels)
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    with pytest.raises(SchemaError, match=r"is it the qrels, given as the run\? The run comes first"):
        pdeval.evaluate(frame, run, "AP")
    assert isinstance(SchemaError("x"), PdevalError)


@pytest.mark.parametrize("lines, line", [
    ("1 d1 1 1 0.5\n1 d2 1 x 0.5\n1 d3 1 1\n", 2),     # a bad method before a short line
    ("1 d1 1 1 0.5\n1 d2 x 1 0.5\n1 d3 1 1 7\n", 2),   # a bad relevance before a bad probability
    ("1 d1 1 1 abc\n1 d2 x 1 0.5\n", 1),               # a bad probability before a bad relevance
])
def test_prels_errors_name_the_first_bad_line(tmp_path, lines, line):
    """Issue: read_qrels(format='prels') named a later line than the first bad one (the checks
    went field by field, and a short line anywhere was reported before any bad value)."""
    path = tmp_path / "prels.txt"
    path.write_text(lines)
    with pytest.raises(ParseError) as raised:
        pdeval.read_qrels(path, format="prels")
    assert raised.value.line == line and f"line {line}:" in str(raised.value)


def test_sample_eval_errors_name_the_first_bad_line(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 d1 s1 1\n1 0 d2 s1 x\n1 0 d3 s1\n")
    with pytest.raises(ParseError, match="line 2:"):
        pdeval.read_qrels(path, format="sample_eval")
