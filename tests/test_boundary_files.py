"""A catalogue of bad and awkward files and command lines (issue: no silent wrong numbers).

Every bad input must end in exit code 2 with exactly one line on stderr that names the file
and line (or the option), and no Python traceback; the reading functions raise the matching
``pdeval.errors`` type with ``path``/``line``. Awkward but valid inputs (CR-only line ends,
``#`` query ids, ranks such as ``1.0``...) must give trec_eval's numbers: the expected output
is trec_eval's own (tests/data/trec_eval, see its PROVENANCE.md).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from pdeval.cli.commands import main
from pdeval.errors import DuplicateError, MeasureError, ParseError, PdevalError, PdevalWarning, SchemaError
from pdeval.sources.io import MissingFileError, read_qrels, read_run

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"
QRELS = DATA / "qrels.test"
RUN = DATA / "results.test"
GOOD_RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"
GOOD_QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


@dataclass
class Case:
    """A bad input: files to write, the command line, and what stderr must name."""

    files: dict  # name -> text or bytes ("{tmp}" in argv is the folder)
    argv: list  # arguments after "pdeval"
    names: list  # fragments stderr must contain (file, "line N", the option...)
    error: Optional[type] = None  # the exception the reading function raises, if a file case
    line: Optional[int] = None  # the line number in that exception
    kind: str = "run"  # which reader raises it: "run" or "qrels"
    extra: dict = field(default_factory=dict)  # keyword arguments of the reader


def run_case(name: str, content, line: Optional[int], fragment: str, error=ParseError) -> Case:
    """A bad run file evaluated against a good qrels file."""
    return Case({"q.txt": GOOD_QRELS, name: content}, ["eval", "{tmp}/q.txt", "{tmp}/" + name],
                [name] + ([f"line {line}"] if line else []) + [fragment], error, line, "run")


def qrels_case(name: str, content, line: Optional[int], fragment: str, error=ParseError) -> Case:
    """A bad qrels file given with a good run file."""
    return Case({name: content, "r.txt": GOOD_RUN}, ["eval", "{tmp}/" + name, "{tmp}/r.txt"],
                [name] + ([f"line {line}"] if line else []) + [fragment], error, line, "qrels")


def option_case(argv: list, *fragments: str) -> Case:
    """A bad command line with good files."""
    return Case({"q.txt": GOOD_QRELS, "r.txt": GOOD_RUN}, argv, list(fragments))


CASES = {
    # ---- run files
    "run_five_fields": run_case("five.txt", GOOD_RUN + "q1 Q0 d3 3 0.5\n", 3, "found 5"),
    "run_three_fields": run_case("three.txt", "q1 Q0 d1 1 2 t\nq1 d2 1.0\n", 2, "found 3"),
    "run_score_text": run_case("score.txt", "q1 Q0 d1 1 high t\n", 1, "'high'"),
    "run_score_comma": run_case("comma.txt", "q1 Q0 d1 1 2,5 t\n", 1, "'2,5'"),
    "run_score_nan": run_case("nan.txt", GOOD_RUN + "q1 Q0 d3 3 nan t\n", 3, "NaN"),
    "run_rank_fraction": run_case("rank.txt", "q1 Q0 d1 2.5 1.0 t\n", 1, "rank '2.5'"),
    "run_rank_and_score_swapped": run_case("swap.txt", "q1 Q0 d1 13.72 1 t\n", 1, "rank '13.72'"),
    "run_rank_overflow": run_case("big.txt", "q1 Q0 d1 99999999999999999999 1 t\n", 1, "64-bit"),
    "run_not_utf8": run_case("latin1.txt", b"q1 Q0 d1 1 2 t\nq1 Q0 d\xe92 2 1 t\n", 2, "UTF-8"),
    "run_nul_byte": run_case("nul.txt", b"q1 Q0 d1 1 2 t\nq1 Q0 d\x002 2 1 t\n", 2, "NUL"),
    "run_empty": run_case("empty.txt", "", None, "is empty"),
    "run_blank_only": run_case("blank.txt", "\n  \n\t\n", None, "is empty"),
    "run_comments_only": run_case("comments.txt", "# produced by x\n# nothing else\n", None, "no run line"),
    "run_is_a_qrels_file": run_case("swapped_qrels.txt", GOOD_QRELS, 1, "looks like a qrels line"),
    "run_duplicate_document": run_case("dup.txt", GOOD_RUN + "q1 Q0 d1 3 0.5 t\n", 3, "repeats", DuplicateError),
    "run_bad_gzip": run_case("bad.txt.gz", b"not gzip data", None, "decompress"),
    "run_cr_only_bad_line": run_case("cr.txt", "q1 Q0 d1 1 2 t\rq1 Q0 d2 x 1 t\r", 2, "rank 'x'"),
    # ---- qrels files
    "qrels_three_fields": qrels_case("q3.txt", "q1 0 d1 1\nq1 d2 1\n", 2, "found 3"),
    "qrels_five_fields": qrels_case("q5.txt", "q1 0 d1 1 extra\n", 1, "found 5"),
    "qrels_relevance_fraction": qrels_case("qf.txt", "q1 0 d1 1.5\n", 1, "would silently read it as 1"),
    "qrels_relevance_text": qrels_case("qt.txt", GOOD_QRELS + "q1 0 d3 yes\n", 3, "'yes'"),
    "qrels_empty": qrels_case("qe.txt", "", None, "is empty"),
    "qrels_comments_only": qrels_case("qc.txt", "# nothing judged\n", None, "no judgment line"),
    "qrels_is_a_run_file": qrels_case("swapped_run.txt", GOOD_RUN, 1, "looks like a run line"),
    "qrels_conflicting_judgments": qrels_case("qd.txt", GOOD_QRELS + "q1 0 d1 0\n", 3, "conflicting", DuplicateError),
    "qrels_identical_duplicate": qrels_case("qi.txt", GOOD_QRELS + "q1 0 d1 1\n", 3, "same relevance", DuplicateError),
    "qrels_nul_byte": qrels_case("qn.txt", b"q1 0 d\x001 1\n", 1, "NUL"),
    # ---- missing files
    "missing_run": Case({"q.txt": GOOD_QRELS}, ["eval", "{tmp}/q.txt", "{tmp}/nope.txt"], ["nope.txt", "not found"],
                        MissingFileError, None, "run"),
    "missing_qrels": Case({"r.txt": GOOD_RUN}, ["eval", "{tmp}/nope.qrels", "{tmp}/r.txt"], ["nope.qrels", "not found"],
                          MissingFileError, None, "qrels"),
    "empty_run_directory": Case({"q.txt": GOOD_QRELS, "runs/.hidden": GOOD_RUN}, ["eval", "{tmp}/q.txt", "{tmp}/runs"],
                                ["runs", "no (non-hidden) file"], MissingFileError),
    "glob_matches_nothing": Case({"q.txt": GOOD_QRELS}, ["eval", "{tmp}/q.txt", "{tmp}/*.run"], ["*.run", "no file matches"],
                                 MissingFileError),
    "qrels_is_a_directory": Case({"qd/x.txt": GOOD_QRELS, "r.txt": GOOD_RUN}, ["eval", "{tmp}/qd", "{tmp}/r.txt"],
                                 ["qd", "is a directory"], MissingFileError, None, "qrels"),
    "run_name_clash": Case({"q.txt": GOOD_QRELS, "runs/a.txt": GOOD_RUN, "runs/a.res": GOOD_RUN},
                           ["eval", "{tmp}/q.txt", "{tmp}/runs"], ["a.txt", "a.res", "run name 'a'"], SchemaError),
    "tag_in_two_files": Case({"q.txt": GOOD_QRELS, "a.txt": GOOD_RUN, "b.txt": GOOD_RUN},
                             ["eval", "--run-from", "tag", "{tmp}/q.txt", "{tmp}/a.txt", "{tmp}/b.txt"],
                             ["a.txt", "b.txt", "'t'"], SchemaError, None, "run", {"run_from": "tag"}),
    "no_topic_in_common": Case({"q.txt": "051 0 d1 1\n", "r.txt": "51 Q0 d1 1 2 t\n"},
                               ["eval", "{tmp}/q.txt", "{tmp}/r.txt"], ["q.txt", "r.txt", "'051'", "'51'"]),
    # ---- the command line
    "unknown_measure": option_case(["eval", "-m", "bperf", "{tmp}/q.txt", "{tmp}/r.txt"], "-m bperf", "Did you mean"),
    "refused_measure": option_case(["eval", "-m", "prefs_simp", "{tmp}/q.txt", "{tmp}/r.txt"], "-m prefs_simp", "computes it from -R prefs"),
    "bad_cutoff_list": option_case(["eval", "-m", "P.5,x", "{tmp}/q.txt", "{tmp}/r.txt"], "-m P.5,x", "cut-offs"),
    "zero_cutoff": option_case(["eval", "-m", "P.0", "{tmp}/q.txt", "{tmp}/r.txt"], "-m P.0", "positive"),
    "ndcg_gain_for_level_0": option_case(["eval", "-m", "ndcg.0=2,1=3", "{tmp}/q.txt", "{tmp}/r.txt"],
                                         "-m ndcg.0=2,1=3", "level 0"),
    "ndcg_gains_not_pairs": option_case(["eval", "-m", "ndcg.1,2", "{tmp}/q.txt", "{tmp}/r.txt"], "-m ndcg.1,2",
                                        "level=gain"),
    "parameters_on_map": option_case(["eval", "-m", "map.5", "{tmp}/q.txt", "{tmp}/r.txt"], "-m map.5"),
    "parameters_on_num_q": option_case(["eval", "-m", "num_q.5", "{tmp}/q.txt", "{tmp}/r.txt"], "-m num_q.5"),
    "measure_parameter_type": option_case(["eval", "-m", "infAP(c=abc)", "{tmp}/q.txt", "{tmp}/r.txt"],
                                          "-m infAP(c=abc)"),
    "unknown_measure_parameter": option_case(["eval", "-m", "AP(x=1)", "{tmp}/q.txt", "{tmp}/r.txt"],
                                             "-m AP(x=1)", "unknown parameter"),
    "cutoff_on_measure_without": option_case(["eval", "-m", "Bpref@10", "{tmp}/q.txt", "{tmp}/r.txt"],
                                             "-m Bpref@10", "takes no @cutoff"),
    "old_form_two_measures_after_one_m": option_case(["eval", "{tmp}/q.txt", "{tmp}/r.txt", "-m", "AP", "P@10"],
                                                     "'P@10' is not a file", "-m AP -m P@10"),
    "depth_not_a_number": option_case(["eval", "-M", "x", "{tmp}/q.txt", "{tmp}/r.txt"], "-M/--depth", "'x'"),
    "depth_zero": option_case(["eval", "-M0", "{tmp}/q.txt", "{tmp}/r.txt"], "-M/--depth", "positive"),
    "rel_not_a_number": option_case(["eval", "-l", "two", "{tmp}/q.txt", "{tmp}/r.txt"], "-l/--rel", "'two'"),
    "format_unknown": option_case(["eval", "--format", "xml", "{tmp}/q.txt", "{tmp}/r.txt"], "--format", "'xml'"),
    "duplicates_unknown": option_case(["eval", "--duplicates", "some", "{tmp}/q.txt", "{tmp}/r.txt"], "--duplicates"),
    "unknown_option": option_case(["eval", "--bogus", "{tmp}/q.txt", "{tmp}/r.txt"], "--bogus"),
    "no_files": option_case(["eval", "-m", "map"], "qrels, runs"),
    "qrels_but_no_run": option_case(["eval", "{tmp}/q.txt"], "runs"),
    "no_command": option_case([], "command"),
    "unknown_command": option_case(["evaluate"], "'evaluate'"),
    "measures_unknown_name": option_case(["measures", "bperf"], "pdeval measures bperf", "Did you mean"),
    "report_without_out": option_case(["report"], "--out"),
    "report_qrels_without_runs": option_case(["report", "--qrels", "{tmp}/q.txt", "--out", "{tmp}/rep"],
                                             "--qrels", "--runs"),
    "report_samples_zero": option_case(["report", "--samples", "0", "--out", "{tmp}/rep"], "--samples", "positive"),
}


def materialise(case: Case, tmp_path: Path) -> list:
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        if name.endswith(".gz") and isinstance(content, str):
            data = gzip.compress(data)
        path.write_bytes(data)
    return [arg.replace("{tmp}", str(tmp_path)) for arg in case.argv]


def assert_one_line_error(err: str, fragments: list) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"stderr must be one line, got {lines!r}"
    line = lines[0]
    assert line.startswith("pdeval") and ": error: " in line, line
    assert "Traceback" not in err and "internal error" not in line, line
    for fragment in fragments:
        assert fragment in line, f"{fragment!r} not in {line!r}"


def test_the_catalogue_holds_at_least_thirty_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_line_on_stderr_with_exit_code_2(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PDEVAL_DEBUG", "1")  # an unexpected exception fails the test instead of hiding
    case = CASES[name]
    argv = materialise(case, tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_one_line_error(captured.err, case.names)


FILE_CASES = sorted(name for name, case in CASES.items() if case.error is not None)


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("name", FILE_CASES)
def test_bad_files_raise_the_error_type_naming_file_and_line(name, engine, tmp_path):
    case = CASES[name]
    argv = materialise(case, tmp_path)
    files = [arg for arg in argv[1:] if not arg.startswith("-") and arg != "tag"]
    with pytest.raises(case.error) as raised:
        if case.kind == "qrels":
            read_qrels(files[0], engine=engine)
        else:
            read_run(files[1:], engine=engine, **case.extra)
    assert isinstance(raised.value, PdevalError)
    message = str(raised.value)
    assert " ".join(message.split()) == message.replace("\n", " ")  # one line
    for fragment in case.names:
        assert fragment in message
    if case.line is not None and isinstance(raised.value, ParseError):
        assert raised.value.line == case.line and Path(raised.value.path).name == case.names[0]


@pytest.mark.parametrize("name", ["run_five_fields", "depth_not_a_number", "no_command", "missing_qrels"])
def test_a_real_process_exits_2_without_traceback(name, tmp_path):
    argv = materialise(CASES[name], tmp_path)
    done = subprocess.run([sys.executable, "-m", "pdeval", *argv], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 2
    assert done.stdout == ""
    assert_one_line_error(done.stderr, CASES[name].names)


def test_an_unexpected_exception_is_one_line_unless_debugging(tmp_path, capsys, monkeypatch):
    import pdeval.cli.commands as cli

    def broken(args):
        raise RuntimeError("something\nbroke")

    monkeypatch.setattr(cli, "_measures", broken)
    monkeypatch.delenv("PDEVAL_DEBUG", raising=False)
    assert main(["measures"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError: something broke" in err
    monkeypatch.setenv("PDEVAL_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["measures"])


# --------------------------------------------------------------------------- awkward but valid


def trec_eval_expected() -> str:
    return (DATA / "out.test.map_P5_10").read_text()  # trec_eval -m map -m P.5,10 qrels.test results.test


def evaluate_variant(tmp_path: Path, capsys, run_bytes: bytes, qrels_bytes: Optional[bytes] = None,
                     name: str = "results.test"):
    run = tmp_path / name
    run.write_bytes(run_bytes)
    qrels = QRELS
    if qrels_bytes is not None:
        qrels = tmp_path / "qrels.test"
        qrels.write_bytes(qrels_bytes)
    code = main(["eval", "-m", "map", "-m", "P.5,10", str(qrels), str(run)])
    return code, capsys.readouterr()


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"])
def test_cr_and_crlf_line_ends_give_trec_eval_numbers(tmp_path, capsys, ending):
    run = RUN.read_bytes().replace(b"\n", ending)
    qrels = QRELS.read_bytes().replace(b"\n", ending)
    code, captured = evaluate_variant(tmp_path, capsys, run, qrels)
    assert code == 0 and captured.out == trec_eval_expected()
    assert len(read_run(tmp_path / "results.test")) == 1500  # every line, not 1 of 1500
    assert len(read_qrels(tmp_path / "qrels.test")) == 3681


def test_cr_only_small_file_reads_every_row(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"q1 Q0 d1 1 3 t\rq1 Q0 d2 2 2 t\rq1 Q0 d3 3 1 t\r")
    for engine in ("auto", "python"):
        assert read_run(path, engine=engine).doc_id.tolist() == ["d1", "d2", "d3"]


def test_hash_query_id_in_a_run_is_read_not_skipped(tmp_path, capsys):
    path = tmp_path / "r.txt"
    path.write_text("#1 Q0 d1 1 3 t\nq1 Q0 d2 1 2 t\n")
    for engine in ("auto", "python"):
        run = read_run(path, engine=engine)
        assert run.query_id.tolist() == ["#1", "q1"]
    # with trec_eval's files: a '#' topic the qrels do not hold changes nothing
    code, captured = evaluate_variant(tmp_path, capsys, RUN.read_bytes() + b"#301 Q0 FBIS3-10082 1 99.0 STANDARD\n")
    assert code == 0 and captured.out == trec_eval_expected()


def test_comment_lines_in_a_run_are_skipped_with_a_one_line_warning(tmp_path, capsys):
    code, captured = evaluate_variant(tmp_path, capsys, b"# made by a script\n" + RUN.read_bytes())
    assert code == 0 and captured.out == trec_eval_expected()
    warnings_ = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warnings_) == 1 and "skipped 1 line(s) starting with '#'" in warnings_[0] and "line 1" in warnings_[0]
    with pytest.warns(PdevalWarning, match="skipped 1 line"):
        read_run(tmp_path / "results.test")


def test_integral_float_ranks_are_accepted(tmp_path, capsys):
    lines = RUN.read_text().splitlines()
    floats = []
    for line in lines:
        fields = line.split()
        fields[3] = fields[3] + ".0"
        floats.append(" ".join(fields))
    code, captured = evaluate_variant(tmp_path, capsys, ("\n".join(floats) + "\n").encode())
    assert code == 0 and captured.out == trec_eval_expected()
    assert read_run(tmp_path / "results.test", engine="python")["rank"].iloc[0] == int(lines[0].split()[3])


def test_byte_order_mark_and_blank_lines(tmp_path, capsys):
    run = b"\xef\xbb\xbf" + RUN.read_bytes().replace(b"\n", b"\n\n")
    code, captured = evaluate_variant(tmp_path, capsys, run)
    assert code == 0 and captured.out == trec_eval_expected()


def test_identical_duplicate_judgments_follow_the_policy(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(GOOD_QRELS + "q1 0 d1 1\n")
    with pytest.raises(DuplicateError) as raised:
        read_qrels(path)
    assert "conflicting" not in str(raised.value) and "line 3 repeats" in str(raised.value)
    with pytest.warns(PdevalWarning, match="1 duplicate qrels row"):
        assert len(read_qrels(path, duplicates="first")) == 2


def test_measure_errors_keep_their_type(tmp_path):
    from pdeval.integrations.trec_eval import names

    for spec in ("bperf", "P.5,x", "map.5"):
        with pytest.raises(MeasureError, match=f"-m {spec}"):
            names.select([spec])
