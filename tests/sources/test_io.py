"""Tests of pdeval.sources (io and the modules behind it): TREC run and qrels files, every quirk of real data, clear errors.

Files from trec_eval's own test suite are in tests/data/trec_eval (see its PROVENANCE.md);
the tests that read the project's shared data skip when ../shared/data is absent.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import warnings
from unittest import mock
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
import pdeval.sources.blocks
import pdeval.sources.runparse
from pdeval.errors import DuplicateError, ParseError, PdevalError, PdevalWarning, SchemaError
from pdeval.frames.canonical import as_run
from pdeval.sources.io import (
    MissingFileError,
    read_qrels,
    read_run,
    run_name,
    write_qrels,
    write_run,
)
from pdeval.engine.ranking import rank_run
from locations import TESTS

HERE = TESTS
TREC = HERE / "data" / "trec_eval"
REPO = HERE.parent
SHARED = REPO.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not (SHARED / "clef2018-chs-task1").is_dir(),
    reason=f"the project's shared data is not at {SHARED} (../shared/data from the repository root)",
)


def write(directory: Path, name: str, text: str | bytes) -> Path:
    path = directory / name
    data = text.encode("utf-8") if isinstance(text, str) else text
    if name.endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def read_run_both(source, **kwargs) -> pd.DataFrame:
    """read_run with both parsers; they must give the same frame."""
    fast = read_run(source, **kwargs)
    slow = read_run(source, engine="python", **kwargs)
    pd.testing.assert_frame_equal(fast, slow)
    return fast


def read_qrels_both(path, **kwargs) -> pd.DataFrame:
    fast = read_qrels(path, **kwargs)
    slow = read_qrels(path, engine="python", **kwargs)
    pd.testing.assert_frame_equal(fast, slow)
    return fast


def assert_names_file_and_line(error: pytest.ExceptionInfo, path: Path, line: int) -> None:
    message = str(error.value)
    assert str(path) in message, message
    assert f"line {line}" in message, message
    assert error.value.path == str(path)
    assert error.value.line == line


# --------------------------------------------------------------------------- trec_eval's files


def test_results_test_tabs_and_blanks_before_score():
    run = read_run_both(TREC / "results.test")
    assert run.columns.tolist() == ["run", "query_id", "doc_id", "score", "rank"]
    assert run.dtypes.to_dict() == {
        "run": pd.StringDtype(na_value=np.nan),
        "query_id": pd.StringDtype(na_value=np.nan),
        "doc_id": pd.StringDtype(na_value=np.nan),
        "score": np.dtype("float64"),
        "rank": np.dtype("int64"),
    }
    assert len(run) == 1500
    assert sorted(run.query_id.unique()) == ["301", "302", "303"]
    assert set(run.run) == {"results.test"}  # named by file, not by the tag STANDARD
    first = run.iloc[0]
    assert (first.query_id, first.doc_id, first["rank"], first.score) == ("301", "FR940202-2-00150", 104, 2.129133)


def test_results_trunc_ignores_trailing_junk_like_trec_eval():
    run = read_run_both(TREC / "results.trunc")
    assert len(run) == 584
    assert run.groupby("query_id").size().to_dict() == {"301": 500, "303": 84}
    first = run.iloc[0]  # "301 Q0 FBIS3-27619 99 2.138276 STANDARD more junk at"
    assert (first.doc_id, first["rank"], first.score) == ("FBIS3-27619", 99, 2.138276)


def test_qrels_test():
    qrels = read_qrels_both(TREC / "qrels.test")
    assert qrels.columns.tolist() == ["query_id", "doc_id", "relevance"]
    assert qrels.relevance.dtype == np.int64
    assert len(qrels) == 3681
    assert qrels.relevance.value_counts().to_dict() == {0: 3120, 1: 561}


def test_qrels_comment_lines_skipped_and_hash_in_docno_kept(caplog):
    plain = read_qrels(TREC / "qrels.test")
    with caplog.at_level("INFO", logger="pdeval.sources"):
        commented = read_qrels_both(TREC / "qrels.test.with-comments")
    assert len(commented) == len(plain) == 3681
    assert "CR#93E-1860" in set(commented.doc_id)
    expected = plain.assign(doc_id=plain.doc_id.replace("CR93E-1860", "CR#93E-1860"))
    pd.testing.assert_frame_equal(commented, expected)
    assert "3 comment line(s)" in caplog.text  # counted, not silently dropped


def test_qrels_hash_in_every_docno_graded():
    qrels = read_qrels_both(TREC / "qrels.comment.test")
    assert len(qrels) == 5890
    assert qrels.query_id.nunique() == 31
    assert qrels.doc_id.str.contains("#").all()
    assert qrels.relevance.value_counts().to_dict() == {0: 1427, 1: 2381, 2: 1515, 3: 567}


def test_qrels_negative_relevance_kept():
    qrels = read_qrels_both(TREC / "qrels.rel_level")
    assert qrels.relevance.value_counts().sort_index().to_dict() == {-1: 304, 0: 2818, 1: 462, 2: 14, 3: 77, 4: 6}


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_qrels_with_floats_is_refused_at_the_first_non_integer(engine):
    path = TREC / "qrels.test.with-floats"
    with pytest.raises(ParseError) as error:
        read_qrels(path, engine=engine)
    assert_names_file_and_line(error, path, 3)
    assert "'1.5'" in str(error.value)
    assert "trec_eval would silently read it as 1" in str(error.value)


# --------------------------------------------------------------------------- quirks of real runs

QUIRKS = {
    # column 2 may be anything
    "col2.txt": "q1 Q0 d1 1 3.0 tag\nq1 q0 d2 2 2.0 tag\nq1 0 d3 3 1.0 tag\nq1 iter d4 4 0.5 tag\n",
    # tabs, repeated spaces, leading and trailing blanks, CRLF line ends
    "blanks.txt": "q1\tQ0\td1\t1\t  3.5\ttag\r\n  q1   Q0  d2 2 2.5   tag  \r\nq1 \t Q0\t d3 3 1e-3 tag\r\n",
    # ranks starting at 0
    "rank0.txt": "q1 Q0 d1 0 3 t\nq1 Q0 d2 1 2 t\nq2 Q0 d1 0 1 t\n",
    # fields after the 6th are ignored (trec_eval's results.trunc)
    "junk.txt": "q1 Q0 d1 1 3 t more junk\nq1 Q0 d2 2 2 t even more junk here\nq1 Q0 d3 3 1 t\n",
    # '#' inside doc ids and tags is data; lines starting with '#' are comments
    "hash.txt": "# a comment\nq1 Q0 doc#1 1 3 t#1\n   # an indented comment\nq1 Q0 #doc2 2 2 t\nq1 Q0 d#3 3 1 t\n",
    # blank lines (also whitespace-only) are skipped, as trec_eval does
    "blank_lines.txt": "\nq1 Q0 d1 1 3 t\n\n   \t\nq1 Q0 d2 2 2 t\n\n",
    # no newline at the end, signed and odd-looking numbers
    "numbers.txt": "q1 Q0 d1 +1 +3 t\nq1 Q0 d2 2 -2.5E+2 t\nq1 Q0 d3 3 .5 t\nq1 Q0 d4 4 5. t\nq1 Q0 d5 5 inf t\nq1 Q0 d6 6 -Infinity t",
    # a UTF-8 byte-order mark is not part of the first query id
    "bom.txt": "\ufeffq1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\n",
    # non-ASCII ids (UTF-8)
    "utf8.txt": "q1 Q0 dé1 1 3 t\nq1 Q0 文档 2 2 t\n",
}

QUIRK_EXPECTED = {
    "col2.txt": (["d1", "d2", "d3", "d4"], [3.0, 2.0, 1.0, 0.5], [1, 2, 3, 4]),
    "blanks.txt": (["d1", "d2", "d3"], [3.5, 2.5, 0.001], [1, 2, 3]),
    "rank0.txt": (["d1", "d2", "d1"], [3.0, 2.0, 1.0], [0, 1, 0]),
    "junk.txt": (["d1", "d2", "d3"], [3.0, 2.0, 1.0], [1, 2, 3]),
    "hash.txt": (["doc#1", "#doc2", "d#3"], [3.0, 2.0, 1.0], [1, 2, 3]),
    "blank_lines.txt": (["d1", "d2"], [3.0, 2.0], [1, 2]),
    "numbers.txt": (["d1", "d2", "d3", "d4", "d5", "d6"], [3.0, -250.0, 0.5, 5.0, np.inf, -np.inf], [1, 2, 3, 4, 5, 6]),
    "utf8.txt": (["dé1", "文档"], [3.0, 2.0], [1, 2]),
    "bom.txt": (["d1", "d2"], [3.0, 2.0], [1, 2]),
}


@pytest.mark.parametrize("name", sorted(QUIRKS))
def test_run_quirks_both_parsers_agree(tmp_path, name):
    path = write(tmp_path, name, QUIRKS[name])
    if name == "hash.txt":  # comment lines in a run are skipped with a counted warning
        with pytest.warns(PdevalWarning, match="skipped 2 line.*first at line 1"):
            run = read_run_both(path)
    else:
        run = read_run_both(path)
    docs, scores, ranks = QUIRK_EXPECTED[name]
    assert run.doc_id.tolist() == docs
    assert run.score.tolist() == scores
    assert run["rank"].tolist() == ranks
    assert set(run.run) == {name[: -len(".txt")]}
    assert set(run.query_id) <= {"q1", "q2"}


def test_run_quirks_compressed(tmp_path):
    text = QUIRKS["blanks.txt"].encode()
    plain = read_run(write(tmp_path, "r.txt", text))
    (tmp_path / "r.txt").unlink()
    for suffix, compress in ((".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)):
        path = tmp_path / f"r.txt{suffix}"
        path.write_bytes(compress(text))
        pd.testing.assert_frame_equal(read_run_both(path), plain)
        path.unlink()


@pytest.mark.parametrize("inflater", ["default", "zlib"])  # ISA-L where installed, and the zlib fallback
def test_gzip_members_checksums_and_truncation(tmp_path, monkeypatch, inflater):
    import gzip
    import zlib

    if inflater == "zlib":
        monkeypatch.setattr(pdeval.sources.blocks, "_inflate", zlib)
    text = "".join(f"q{i % 3} Q0 d{i} {i} {1000 - i}.5 t\n" for i in range(5000)).encode()
    path = tmp_path / "r.gz"
    path.write_bytes(gzip.compress(text[:20000]) + gzip.compress(text[20000:]))  # two members
    pd.testing.assert_frame_equal(read_run(path), read_run(path, engine="python"))
    assert len(read_run(path)) == 5000
    damaged = bytearray(gzip.compress(text))
    damaged[-6] ^= 1  # the CRC
    for data in (b"not gzip at all", bytes(damaged), gzip.compress(text)[:-20]):
        path.write_bytes(data)
        with pytest.raises(ParseError, match=re.escape(str(path))):
            read_run(path)


# --------------------------------------------------------------------------- sources and names


@pytest.mark.parametrize(
    "filename, expected",
    [
        ("CUNI__CUNI_en.run1.gz", "CUNI__CUNI_en.run1"),
        ("CUNI__CUNI_en.run2.gz", "CUNI__CUNI_en.run2"),
        ("IELAB__IELAB_01.txt.gz", "IELAB__IELAB_01"),
        ("IMS__baseline.exp.gz", "IMS__baseline.exp"),
        ("SINAI__SINAI_Run1_google+cTakes.result.gz", "SINAI__SINAI_Run1_google+cTakes"),
        ("UEvora__UEvoraIRtask1run1.res.gz", "UEvora__UEvoraIRtask1run1"),
        ("baselines__elastic_BM25f_qe.out.gz", "baselines__elastic_BM25f_qe"),
        ("CUNI_EN_Run.2.dat.gz", "CUNI_EN_Run.2"),
        ("KISTI_EN_RUN.10.dat.gz", "KISTI_EN_RUN.10"),
        ("results.test", "results.test"),
        ("run.TXT", "run"),
        ("bm25", "bm25"),
        (".txt", ".txt"),
        ("a.txt.txt", "a.txt"),
        ("dir/sub/x.trec.bz2", "x"),
    ],
)
def test_run_name_rule(filename, expected):
    assert run_name(filename) == expected


def make_runs(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = [
        write(directory, "b.res", "q1 Q0 d1 1 2 x\n"),
        write(directory, "a.txt.gz", "q1 Q0 d2 1 3 x\n"),
        write(directory, "c.run1", "q1 Q0 d3 1 4 x\n"),
    ]
    write(directory, ".hidden.txt", "this is not a run\n")
    (directory / "subdir").mkdir()
    return paths


def test_directory_reads_sorted_regular_non_hidden_files(tmp_path):
    make_runs(tmp_path / "runs")
    with pytest.warns(PdevalWarning, match=r"skipped 1 hidden .*: \.hidden\.txt"):
        run = read_run_both(tmp_path / "runs")
    assert run.run.tolist() == ["a", "b", "c.run1"]
    assert run.doc_id.tolist() == ["d2", "d1", "d3"]


def test_glob_and_list_sources(tmp_path):
    paths = make_runs(tmp_path / "runs")
    by_glob = read_run_both(str(tmp_path / "runs" / "*"))
    assert by_glob.run.tolist() == ["a", "b", "c.run1"]
    by_list = read_run_both([paths[0], str(paths[1])])
    assert by_list.run.tolist() == ["b", "a"]  # list order is kept
    mixed = read_run([str(tmp_path / "runs" / "a*"), paths[0]])
    assert mixed.run.tolist() == ["a", "b"]


@pytest.mark.filterwarnings("ignore:.*skipped 1 hidden:pdeval.errors.PdevalWarning")
def test_name_override(tmp_path):
    paths = make_runs(tmp_path / "runs")
    assert read_run(paths[0], name="bm25").run.tolist() == ["bm25"]
    named = read_run(tmp_path / "runs", name=["x", "y", "z"])
    assert named.run.tolist() == ["x", "y", "z"]
    with pytest.raises(SchemaError, match="3 files"):
        read_run(tmp_path / "runs", name="one")
    with pytest.raises(SchemaError, match="2 name"):
        read_run(tmp_path / "runs", name=["x", "y"])
    with pytest.raises(PdevalError, match=r"read_run\(\): name=\[''\] is not .*run name"):
        read_run(paths[0], name=[""])


def test_two_files_with_one_name_are_refused(tmp_path):
    first = write(tmp_path, "bm25.txt", "q1 Q0 d1 1 2 x\n")
    second = write(tmp_path, "bm25.res.gz", "q1 Q0 d1 1 2 x\n")
    with pytest.raises(SchemaError) as error:
        read_run(tmp_path)
    assert "'bm25'" in str(error.value) and str(first) in str(error.value) and str(second) in str(error.value)
    with pytest.raises(SchemaError, match="'a'"):
        read_run([first, second], name=["a", "a"])


def test_run_from_tag(tmp_path):
    path = write(tmp_path, "many.txt", "q1 Q0 d1 1 2 bm25\nq1 Q0 d1 1 3 lm\nq1 Q0 d2 2 1 bm25\n")
    run = read_run_both(path, run_from="tag")
    assert run.run.tolist() == ["bm25", "lm", "bm25"]
    # by file the same lines are one run with a repeated document
    with pytest.raises(DuplicateError):
        read_run(path)
    other = write(tmp_path, "other.txt", "q2 Q0 d1 1 2 lm\n")
    with pytest.raises(SchemaError, match="'lm'.*two files"):
        read_run([path, other], run_from="tag")
    with pytest.raises(SchemaError):
        read_run(path, name="x", run_from="tag")


# --------------------------------------------------------------------------- bad input

BAD_RUNS = {
    # name: (content, line, message fragment)
    "five_fields": ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d3 3 0.5\n", 3, "found 5"),
    "three_fields": ("q1 Q0 d1 1 2.0 t\nq1 d2 1.0\n", 2, "found 3"),
    "score_text": ("q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2 high t\n", 3, "'high'"),
    "score_comma": ("q1 Q0 d1 1 2,5 t\n", 1, "'2,5'"),
    "score_nan": ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 NaN t\n", 2, "NaN"),
    "score_hex": ("q1 Q0 d1 1 0x1p3 t\n", 1, "'0x1p3'"),
    "rank_text": ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2.5 1.0 t\n", 2, "rank '2.5'"),
    "swapped": ("q1 Q0 d1 13.72 1 t\n", 1, "rank '13.72'"),  # an integral rank such as 1.0 is accepted
    "rank_overflow": ("q1 Q0 d1 99999999999999999999 1 t\n", 1, "64-bit"),
    "not_utf8": (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\xff2 2 1.0 t\n", 2, "UTF-8"),
    "nul": (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\x002 2 1.0 t\n", 2, "NUL"),
}


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("case", sorted(BAD_RUNS))
def test_bad_run_lines_name_file_and_line(tmp_path, case, engine):
    content, line, fragment = BAD_RUNS[case]
    path = write(tmp_path, f"{case}.txt", content)
    with pytest.raises(ParseError) as error:
        read_run(path, engine=engine)
    assert_names_file_and_line(error, path, line)
    assert fragment in str(error.value)


def test_bad_line_in_second_file_names_that_file(tmp_path):
    good = write(tmp_path, "a.txt", "q1 Q0 d1 1 2 t\n")
    bad = write(tmp_path, "b.txt.gz", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 x t\n")
    with pytest.raises(ParseError) as error:
        read_run([good, bad])
    assert_names_file_and_line(error, bad, 2)


@pytest.mark.parametrize("content", ["", "\n\n  \n", "# only\n# comments\n"])
def test_empty_run_file(tmp_path, content):
    path = write(tmp_path, "empty.txt", content)
    with pytest.raises(ParseError) as error:
        read_run(path)
    assert str(path) in str(error.value)
    assert error.value.path == str(path)


def test_empty_gz_run_file(tmp_path):
    path = write(tmp_path, "empty.txt.gz", "")
    with pytest.raises(ParseError, match=re.escape(str(path))):
        read_run(path)


@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_missing_file(tmp_path, reader):
    path = tmp_path / "nowhere" / "run.txt"
    with pytest.raises(MissingFileError) as error:
        reader(path)
    assert isinstance(error.value, PdevalError)
    assert isinstance(error.value, FileNotFoundError)
    assert str(path) in str(error.value)


def test_missing_sources(tmp_path):
    with pytest.raises(MissingFileError, match="no file matches"):
        read_run(str(tmp_path / "*.nothing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingFileError, match="holds no"):
        read_run(tmp_path / "empty")
    with pytest.raises(PdevalError, match=r"read_run\(\): source=\[\] is not .*the list is empty"):
        read_run([])
    with pytest.raises(MissingFileError, match="directory"):
        read_qrels(tmp_path)
    with pytest.raises(PdevalError, match=r"read_run\(\): source=42 is not a path"):
        read_run(42)


def test_duplicate_documents_in_a_run(tmp_path):
    path = write(tmp_path, "dup.txt", "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq2 Q0 d1 1 2 t\nq1 Q0 d1 3 1 t\n")
    for engine in ("auto", "python"):
        with pytest.raises(DuplicateError) as error:
            read_run(path, engine=engine)
        message = str(error.value)
        assert str(path) in message
        assert "line 4 repeats" in message and "of line 1" in message
        assert "query_id='q1'" in message and "doc_id='d1'" in message
    with pytest.warns(PdevalWarning, match=rf"{re.escape(str(path))}: 1 duplicate run row"):
        first = read_run_both(path, duplicates="first")
    assert first[["query_id", "doc_id", "score"]].values.tolist() == [["q1", "d1", 3.0], ["q1", "d2", 2.0], ["q2", "d1", 2.0]]
    path2 = write(tmp_path, "dup2.txt", "q1 Q0 d1 1 1 t\nq1 Q0 d1 2 5 t\n")
    with pytest.warns(PdevalWarning, match="1 duplicate"):
        best = read_run(path2, duplicates="max")
    assert best.score.tolist() == [5.0]


def test_same_document_in_two_runs_is_not_a_duplicate(tmp_path):
    a = write(tmp_path, "a.txt", "q1 Q0 d1 1 3 t\n")
    b = write(tmp_path, "b.txt", "q1 Q0 d1 1 3 t\n")
    assert len(read_run([a, b])) == 2


BAD_QRELS = {
    "three_fields": ("q1 0 d1 1\nq1 0 d2\n", 2, "found 3"),
    "five_fields": ("q1 0 d1 1\nq1 0 d2 1 extra\n", 2, "found 5"),
    "float": ("q1 0 d1 1\nq1 0 d2 0.5\n", 2, "'0.5'"),
    "text": ("q1 0 d1 1\n\nq1 0 d2 yes\n", 3, "'yes'"),
    "exponent": ("q1 0 d1 1e+8\n", 1, "'1e+8'"),
    "hex": ("q1 0 d1 0x37\n", 1, "'0x37'"),
    "not_utf8": (b"q1 0 d\xfe1 1\n", 1, "UTF-8"),
}


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("case", sorted(BAD_QRELS))
def test_bad_qrels_lines_name_file_and_line(tmp_path, case, engine):
    content, line, fragment = BAD_QRELS[case]
    path = write(tmp_path, f"{case}.qrels", content)
    with pytest.raises(ParseError) as error:
        read_qrels(path, engine=engine)
    assert_names_file_and_line(error, path, line)
    assert fragment in str(error.value)


def test_qrels_integral_floats_and_blank_lines_accepted(tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 d1 1.0\n\nq1 0 d2 2.\n  # note\nq1 0 d3 -1\nq1 0 d4 +0.00\n")
    qrels = read_qrels_both(path)
    assert qrels.relevance.tolist() == [1, 2, -1, 0]
    assert qrels.relevance.dtype == np.int64


def test_conflicting_duplicate_judgments(tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq1 0 d1 0\n")
    for engine in ("auto", "python"):
        with pytest.raises(DuplicateError) as error:
            read_qrels(path, engine=engine)
        message = str(error.value)
        assert str(path) in message and "line 4 repeats" in message and "of line 1" in message
        assert "query_id='q1'" in message and "doc_id='d1'" in message
    with pytest.warns(PdevalWarning, match="1 duplicate qrels row"):
        best = read_qrels(path, duplicates="max")
    assert best.relevance.tolist() == [1, 0, 1]


@pytest.mark.parametrize("content", ["", "# nothing\n\n"])
def test_empty_qrels_file(tmp_path, content):
    path = write(tmp_path, "empty.qrels", content)
    with pytest.raises(ParseError) as error:
        read_qrels(path)
    assert str(path) in str(error.value)


def test_frame_without_score_is_a_schema_error():
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "rank": [1]})
    with pytest.raises(SchemaError) as error:
        as_run(frame)
    assert "'score'" in str(error.value)


def test_bad_engine_and_run_from():
    with pytest.raises(PdevalError, match=r"read_run\(\): engine='fast' is not one of 'auto', 'python'"):
        read_run(TREC / "results.test", engine="fast")
    with pytest.raises(PdevalError, match=r"read_run\(\): run_from='column' is not one of 'file', 'tag'"):
        read_run(TREC / "results.test", run_from="column")
    with pytest.raises(PdevalError, match=r"read_run\(\): duplicates='raise' is not .*now called 'error'"):
        read_run(TREC / "results.test", duplicates="raise")


# --------------------------------------------------------------------------- writing


def sample_run() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run": ["bm25"] * 4 + ["lm.v2"] * 3,
            "query_id": ["q2", "q1", "q1", "q1", "q1", "q1", "q2"],
            "doc_id": ["d1", "doc9", "doc10", "doc2", "d1", "d2", "d#3"],
            "score": [1.0, 1.0, 1.0, 1.0, 0.1 + 0.2, -2.5e-300, 7.0],
        }
    )


def test_write_run_directory_round_trip(tmp_path):
    run = sample_run()
    written = write_run(run, str(tmp_path / "out") + "/")
    assert [p.name for p in written] == ["bm25.txt", "lm.v2.txt"]
    back = read_run_both(tmp_path / "out")
    expected = rank_run(as_run(run))[["run", "query_id", "doc_id", "score", "rank"]]
    pd.testing.assert_frame_equal(back, expected)
    # trec_eval order: ties broken by doc id descending in byte order
    assert back.loc[(back.run == "bm25") & (back.query_id == "q1"), "doc_id"].tolist() == ["doc9", "doc2", "doc10"]
    assert 0.1 + 0.2 in back.score.tolist() and -2.5e-300 in back.score.tolist()  # exact float64
    text = (tmp_path / "out" / "bm25.txt").read_text()
    assert text.splitlines()[0].split() == ["q1", "Q0", "doc9", "1", "1", "bm25"]


def test_write_run_one_file_round_trip_by_tag(tmp_path):
    run = sample_run()
    path = write_run(run, tmp_path / "all.txt.gz")[0]
    assert gzip.decompress(path.read_bytes()).count(b"\n") == len(run)
    back = read_run_both(path, run_from="tag")
    expected = rank_run(as_run(run))[["run", "query_id", "doc_id", "score", "rank"]]
    pd.testing.assert_frame_equal(back, expected)


def test_write_run_compressed_directory(tmp_path):
    write_run(sample_run(), tmp_path / "gz", per_run=True, suffix=".txt.gz")
    back = read_run(tmp_path / "gz")
    assert sorted(back.run.unique()) == ["bm25", "lm.v2"]
    with pytest.raises(SchemaError, match="suffix"):
        write_run(sample_run(), tmp_path / "x", per_run=True, suffix=".run1")
    (tmp_path / "d").mkdir()
    write_run(sample_run(), tmp_path / "d")  # an existing directory: one file per run
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["bm25.txt", "lm.v2.txt"]
    with pytest.raises(SchemaError, match="directory"):
        write_run(sample_run(), tmp_path / "d", per_run=False)


def test_write_run_refuses_what_cannot_be_read_back(tmp_path):
    bad = sample_run().assign(doc_id=["d 1"] + ["d"] * 6)
    with pytest.raises(SchemaError, match="'d 1'"):
        write_run(bad.assign(doc_id=["d 1", "a", "b", "c", "d", "e", "f"]), tmp_path / "x.txt")
    with pytest.raises(SchemaError, match="'#q'"):
        write_run(sample_run().assign(query_id="#q"), tmp_path / "x.txt")
    with pytest.raises(SchemaError, match="file name"):
        write_run(sample_run().assign(run=".hidden"), tmp_path / "dir", per_run=True)
    with pytest.raises(DuplicateError):
        write_run(pd.concat([sample_run(), sample_run()]), tmp_path / "x.txt")
    with pytest.raises(MissingFileError):
        write_run(sample_run(), tmp_path / "no" / "such" / "x.txt")


def test_write_qrels_round_trip(tmp_path):
    qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d#1", "d2", "d1"], "relevance": [2, -1, 0]})
    for name in ("q.txt", "q.txt.gz"):
        path = write_qrels(qrels, tmp_path / name)
        back = read_qrels_both(path)
        pd.testing.assert_frame_equal(back, qrels.astype({"query_id": "str", "doc_id": "str"}))
    assert (tmp_path / "q.txt").read_text().splitlines() == ["q1 0 d#1 2", "q1 0 d2 -1", "q2 0 d1 0"]
    with pytest.raises(SchemaError, match="variant"):
        write_qrels(qrels.assign(level=1), tmp_path / "v.txt")


# any UTF-8 text without the ASCII field separators and NUL (non-ASCII spaces such as U+3000
# and control characters such as U+001C are data, as in trec_eval's C-locale isspace)
ids = st.text(alphabet=st.characters(codec="utf-8", exclude_characters=" \t\n\r\x0b\x0c\x00"), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["r1", "run.2"]),
            ids.filter(lambda s: not s.startswith("#")),
            ids,
            st.floats(allow_nan=False, width=64),
        ),
        min_size=1,
        max_size=30,
        unique_by=lambda row: row[:3],
    )
)
def test_write_read_round_trip_property(tmp_path, rows):
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    target = tmp_path / "prop"
    for old in target.glob("*"):
        old.unlink()
    write_run(run, target, per_run=True)
    back = read_run_both(target)
    expected = rank_run(as_run(run))[["run", "query_id", "doc_id", "score", "rank"]]
    pd.testing.assert_frame_equal(back, expected)


tokens = st.sampled_from(
    ["q1", "q2", "Q0", "0", "d1", "d#2", "#d", "1", "-3", "2.5", ".5", "5.", "1e3", "-1E-2", "+4",
     "inf", "+Infinity", "1e400", "4.9e-324", "NaN", "x", "1.0", "0x10", "1_0", "é", "\x1c", "\r"]
)
separators = st.sampled_from([" ", "\t", "  ", " \t ", "\x0b", "\x0c"])
random_lines = st.lists(st.tuples(tokens, separators), min_size=0, max_size=8).map(
    lambda parts: "".join(token + sep for token, sep in parts)
)
numbers = st.sampled_from(["1", "-3", "2.5", ".5", "1e3", "+4", "inf", "1.0", "0"])
valid_lines = st.builds(
    lambda q, d, r, s, sep, extra: sep.join([q, "Q0", d, r, s, "tag"][: 4 if extra == "qrels" else 6])
    + (sep + "junk" if extra == "junk" else ""),
    st.sampled_from(["q1", "q2"]), st.sampled_from(["d1", "d2", "d#3", "é"]), numbers, numbers,
    separators, st.sampled_from(["", "junk", "qrels"]),
)
lines = st.one_of(random_lines, valid_lines, valid_lines)
qrels_lines = st.builds(
    lambda q, d, r, sep: sep.join([q, "0", d, r]),
    st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(["d1", "d2", "d#3", "é"]),
    st.sampled_from(["1", "-1", "0", "2.0", "+3", "1.5"]), separators,
)
contents = st.one_of(
    st.lists(lines, min_size=1, max_size=6),
    st.lists(st.one_of(qrels_lines, st.sampled_from(["", "  ", "# c", " #c d 1"])), min_size=1, max_size=6),
).map("\n".join)


def outcome(reader, path, engine):
    try:
        return "ok", reader(path, engine=engine, duplicates="first")
    except PdevalError as error:
        return type(error).__name__, str(error)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=contents)
def test_fast_and_python_parsers_agree_on_anything(tmp_path, content):
    path = tmp_path / "fuzz.txt"
    path.write_bytes(content.encode("utf-8"))
    for reader in (read_run, read_qrels):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PdevalWarning)
            fast, slow = outcome(reader, path, "auto"), outcome(reader, path, "python")
        assert fast[0] == slow[0]
        if fast[0] == "ok":
            pd.testing.assert_frame_equal(fast[1], slow[1])
        else:
            assert fast[1] == slow[1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.lists(st.one_of(lines, valid_lines, valid_lines), min_size=1, max_size=30).map("\n".join),
       block_bytes=st.sampled_from([1, 16, 64, 200]), compressed=st.booleans())
def test_a_file_read_in_blocks_reads_as_one_block(tmp_path, content, block_bytes, compressed):
    # big files are parsed block by block (each block by the first parser that accepts it):
    # the frame, and the line numbers of errors, are those of the whole file at once
    path = write(tmp_path, "blocks.txt.gz" if compressed else "blocks.txt", content)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        whole = outcome(read_run, path, "python")
        with mock.patch.object(pdeval.sources.blocks, "BLOCK_BYTES", block_bytes):
            in_blocks = outcome(read_run, path, "auto"), outcome(read_run, path, "python")
    for got in in_blocks:
        assert got[0] == whole[0]
        if got[0] == "ok":
            pd.testing.assert_frame_equal(got[1], whole[1])
        else:
            assert got[1] == whole[1]


def test_a_bad_line_deep_in_a_big_file_is_named_exactly(tmp_path):
    good = "".join(f"q{t} Q0 doc{t}_{d} {d} {1000 - d} run\n" for t in range(30) for d in range(200))
    bad_line = 6000 - 17
    lines_ = good.splitlines(keepends=True)
    lines_[bad_line - 1] = "q5 Q0 broken 1\n"
    path = write(tmp_path, "deep.txt.gz", "".join(lines_))
    with mock.patch.object(pdeval.sources.blocks, "BLOCK_BYTES", 4096):
        with pytest.raises(ParseError) as error:
            read_run(path)
    assert_names_file_and_line(error, path, bad_line)


# --------------------------------------------------------------------------- the shared data

QUIRKY_SHARED = [
    "clef2018-chs-task1/runs/IELAB__IELAB_01.txt.gz",  # column 2 is "0"
    "clef2018-chs-task1/runs/baselines__elastic_BM25f_qe.out.gz",  # column 2 is "q0"
    "clef2018-chs-task1/runs/baselines__terrier_BM25_cli.out.gz",  # tabs, duplicates
    "clef2018-chs-task1/runs/CUNI__CUNI_en.run1.gz",  # ranks from 0, duplicates
    "clef2018-chs-task1/runs/baselines__Base_Bing_all.txt.gz",  # integer scores, short lists
    "clef2018-chs-task1/runs/UEvora__UEvoraIRtask1run1.res.gz",  # a missing topic
]


@needs_shared
@pytest.mark.parametrize("relative", QUIRKY_SHARED)
def test_shared_quirky_runs_both_parsers_agree(relative):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        run = read_run_both(SHARED / relative, duplicates="first")
    assert len(run) > 0


@needs_shared
def test_all_clef2018_runs():
    runs = SHARED / "clef2018-chs-task1" / "runs"
    with pytest.raises(DuplicateError) as error:
        read_run(runs)
    assert "CUNI__CUNI_en.run1.gz" in str(error.value) and "repeats" in str(error.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = read_run(runs, duplicates="first")
    messages = [str(w.message) for w in caught if issubclass(w.category, PdevalWarning)]
    dropped = {re.search(r"/([^/]+\.gz): ", m).group(1): int(re.search(r": (\d+) duplicate", m).group(1)) for m in messages}
    assert dropped == {
        "CUNI__CUNI_en.run1.gz": 1004,
        "CUNI__CUNI_en.run2.gz": 1005,
        "CUNI__CUNI_en.run3.gz": 751,
        "UEvora__UEvoraIRtask1run1.res.gz": 1224,
        "baselines__terrier_BM25_cli.out.gz": 862,
        "baselines__terrier_BM25_gfi.out.gz": 862,
        "baselines__terrier_BM25_noqe.out.gz": 862,
        "baselines__terrier_DirichletLM_noqe.out.gz": 1005,
        "baselines__terrier_TF_IDF_noqe.out.gz": 750,
    }
    assert run.run.nunique() == 24
    assert len(run) == 1_146_652 - sum(dropped.values())
    assert not run.duplicated(["run", "query_id", "doc_id"]).any()
    assert run.groupby("run").query_id.nunique().to_dict()["UEvora__UEvoraIRtask1run1"] == 49


@needs_shared
def test_shared_run_names_are_unique_per_folder():
    for runs in sorted(SHARED.glob("*/runs")):
        files = sorted(p for p in runs.iterdir() if p.is_file())
        names = [run_name(p) for p in files]
        assert len(set(names)) == len(names), runs


@needs_shared
def test_shared_qrels():
    final = read_qrels_both(SHARED / "clef2018-chs-task1" / "qrels.txt")
    partial = read_qrels_both(SHARED / "clef2018-chs-task1" / "aux" / "qrels_partial_20180911.txt")
    assert (len(final), len(partial)) == (26025, 18764)


@pytest.mark.parametrize("data, accepted", [
    ("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 2 t\n", True),
    ("q1\tQ0\td1\t1\t2.5\tt\nq1\tQ0\td2\t2\t2\tt", True),
    ("q1 Q0 d1 1 2.5 t \nq1 Q0 d2 2 2 t \n", True),  # a separator ending every line: ignored
    ("q1 Q0 d1 0x10 2.5 t\n", False),  # Arrow reads hexadecimal integers; the grammar does not
    ("q1 Q0 d1 1 nan t\n", False),
    ("q1  d1 1 2.5 t\n", False),  # five fields and a doubled separator: an empty field
    ("q1 Q0 d1 1 2.5 t\n# comment\n", False),
    ("q1 Q0 d1 1 2.5 t\r\nq1 Q0 d2 2 2 t\r\n", True),  # Windows line ends
    ("q1 Q0 d1 1 2.5 t\rq1 Q0 d2 2 2 t\n", False),  # a lone carriage return is a separator
    ("q1 Q0 d1 1 2.5 t\r", False),
    ("q1 Q0 d1 1 2.5 t\nq1\tQ0 d2 2 2 t\n", False),
    ("q1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2 2 t\n", False),
    ("q1 Q0 d1 1 +2.5 t\nq1 Q0 d1 2 2.5\n", False),
])
def test_the_csv_reader_gets_only_what_it_cannot_misread(data, accepted):
    got = pdeval.sources.runparse.csv_run(data.encode(), want_tag=True)
    assert (got is not None) == accepted
    if accepted:
        expected = pdeval.sources.runparse.python_run(data.encode(), "x", want_tag=True)
        for name in ("query_id", "doc_id", "tag", "score", "rank"):
            assert list(got.fields[name].to_pylist()) == list(expected.fields[name]), name
        assert list(got.line) == list(expected.line)


@pytest.mark.parametrize("column", ["name", "runid", "model"])
def test_a_system_column_not_called_run_is_not_merged(column):
    """Issue: a run frame whose system column is `name`, `runid` or `model` was taken as one
    run, and the duplicate error advised duplicates='first', which merged the systems."""
    from pdeval.errors import ColumnWarning

    run = pd.DataFrame({column: ["a", "a", "b", "b"], "query_id": "1", "doc_id": ["d1", "d2", "d1", "d2"],
                        "score": [2.0, 1.0, 1.0, 2.0]})
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    for policy in ("error", "first", "max"):
        with pytest.warns(ColumnWarning, match=rf"no 'run' column.*\['{column}'\]"):
            with pytest.raises(DuplicateError, match=rf"several systems.*{column!r} differs") as raised:
                pdeval.evaluate(run, qrels, "AP", duplicates=policy)
        assert "Pass duplicates=" not in str(raised.value)
    renamed = pdeval.evaluate(run.rename(columns={column: "run"}), qrels, "AP")
    assert renamed["run"].tolist() == ["a", "b"]


def test_runs_sharing_a_tag_in_one_file_are_never_merged(tmp_path):
    """Issue: --run-from tag --duplicates first merged four runs of one tag into one."""
    text = "".join(f"1 Q0 d1 1 2 same\n1 Q0 d2 2 1 same\n" for _ in range(4))
    path = write(tmp_path, "runs.txt", text)
    for policy in ("error", "first", "max"):
        with pytest.raises(DuplicateError, match=r"several systems.*restarts.*run_from='file'"):
            read_run(path, run_from="tag", duplicates=policy)


def test_a_repeated_document_of_one_ranking_still_follows_the_policy(tmp_path):
    path = write(tmp_path, "run.txt", "1 Q0 d1 1 3 x\n1 Q0 d2 2 2 x\n1 Q0 d1 3 1 x\n")
    with pytest.raises(DuplicateError, match="Pass duplicates="):
        read_run(path)
    with pytest.warns(PdevalWarning, match="1 duplicate run row"):
        assert read_run(path, duplicates="first")["doc_id"].tolist() == ["d1", "d2"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.sampled_from(["1 Q0 d1 1 2.5 tagA", "2 Q0 d2 1 1.0 tagB", "# comment", "", "x y"]),
                      min_size=0, max_size=12),
       end=st.sampled_from(["\n", "\r\n", "\r"]), size=st.integers(1, 60), bom=st.booleans())
def test_the_tail_of_a_file_gives_the_last_run_line_of_the_whole_file(tmp_path, lines, end, size, bom):
    """The runid of the command (the tag of a file's last run line) is read off the file's end:
    the same line as in the whole file, whatever the line ends and where the tail cuts."""
    from pdeval.cli.commands import _last_tag
    from pdeval.sources.blocks import read_bytes, tail_bytes

    path = tmp_path / "run.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + end.join(lines).encode())
    data, whole = tail_bytes(path, size)
    tag = _last_tag(data)
    if tag is None and not whole:
        tag = _last_tag(read_bytes(path))
    assert tag == _last_tag(read_bytes(path))
