"""The pdeval command: trec_eval-compatible output, options, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pdeval.cli.commands import main
from locations import TESTS

DATA = TESTS / "data" / "trec_eval"


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


# --------------------------------------------------------------------------- trec_eval's own output
# Expected outputs were printed by trec_eval (NIST's out.test* files, or trec_eval 10.0 run with the
# command recorded in tests/data/trec_eval/PROVENANCE.md); pdeval must print the same bytes.

TREC_EVAL_COMMANDS = {
    # file: (arguments as given to trec_eval, qrels, run)
    "out.test.map_P5_10": (["-m", "map", "-m", "P.5,10"], "qrels.test", "results.test"),
    "out.test.q_map_P5_10": (["-q", "-m", "map", "-m", "P.5,10"], "qrels.test", "results.test"),
    "out.test.qc_counts": (["-q", "-c", "-m", "num_q", "-m", "num_ret", "-m", "num_rel_ret", "-m", "map",
                            "-m", "ndcg_cut.10", "-m", "P.20,5"], "qrels.test", "results.trunc"),
    "out.test.J": (["-J", "-m", "map", "-m", "P.10", "-m", "ndcg"], "qrels.rel_level", "results.test"),
    "out.test.ndcg_gains": (["-q", "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.5"], "qrels.rel_level", "results.test"),
}


@pytest.mark.parametrize("files_first", [False, True])
@pytest.mark.parametrize("expected", sorted(TREC_EVAL_COMMANDS))
def test_eval_prints_exactly_what_trec_eval_prints(capsys, expected, files_first):
    options, qrels, run = TREC_EVAL_COMMANDS[expected]
    files = [str(DATA / qrels), str(DATA / run)]
    argv = ["eval"] + (files + options if files_first else options + files)
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out == (DATA / expected).read_text()
    # with -c a qrels topic no run holds is evaluated as empty: pdeval says so, in one line
    overlap = [line for line in captured.err.splitlines() if "evaluated as empty rankings (complete=True)" in line]
    assert captured.err == "".join(line + "\n" for line in overlap)
    assert len(overlap) <= ("-c" in options)  # shown once per calling line (Python's default filter)


def test_map_and_p_at_5_10_the_issue_command(capsys):
    """`pdeval eval -m map -m P.5,10 QRELS RUN` prints trec_eval's lines, names and all line."""
    assert main(["eval", "-m", "map", "-m", "P.5,10", str(DATA / "qrels.test"), str(DATA / "results.test")]) == 0
    assert capsys.readouterr().out == (DATA / "out.test.map_P5_10").read_text()


@pytest.mark.parametrize(
    "expected, options, qrels, run",
    [
        ("out.test", [], "qrels.test", "results.test"),  # trec_eval's default: -m official
        ("out.test.a", ["-m", "all_trec"], "qrels.test", "results.test"),
        ("out.test.aq", ["-m", "all_trec", "-q"], "qrels.test", "results.test"),
        ("out.test.aqc", ["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc"),
        ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
        ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2"], "qrels.rel_level", "results.test"),
    ],
)
def test_nicknames_print_exactly_what_trec_eval_prints(capsys, expected, options, qrels, run):
    """NIST's own commands and outputs: every line, byte for byte (gm_map, iprec_at_recall,
    relstring and the rest of all_trec included); stderr holds at most -c's overlap warning."""
    assert main(["eval", *options, str(DATA / qrels), str(DATA / run)]) == 0
    captured = capsys.readouterr()
    assert captured.out == (DATA / expected).read_text()
    lines = [line for line in captured.err.splitlines() if "evaluated as empty rankings (complete=True)" not in line]
    assert lines == []


def test_refused_trec_eval_measures_say_why(capsys):
    files = [str(DATA / "qrels.test"), str(DATA / "results.test")]
    for spec, reason in (("prefs_simp", "preference judgments"), ("qrels_jg", "judgment groups"), ("map_avgjg", "-R qrels_jg")):
        assert main(["eval", "-m", spec, *files]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and reason in err and spec in err


def test_explicit_parameters_replace_the_nicknames_defaults(capsys):
    files = [str(DATA / "qrels.test"), str(DATA / "results.test")]
    assert main(["eval", "-m", "official", "-m", "P.7", *files]) == 0
    names = [line.split("\t")[0].strip() for line in capsys.readouterr().out.splitlines()]
    assert [n for n in names if n.startswith("P_")] == ["P_7"]
    assert names[-12:-1] == [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]


def test_all_line_sums_counts_and_averages_the_rest(capsys):
    # checked against trec_eval's out.test.qc_counts above; here the rule itself, in csv too
    main(["eval", "-m", "num_q", "-m", "num_ret", "-m", "map", "-q", "--format", "csv",
          str(DATA / "qrels.test"), str(DATA / "results.test")])
    import io

    import pandas as pd

    table = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"query_id": str})
    per_topic = table[table.query_id != "all"]
    total = table[table.query_id == "all"].set_index("measure")["value"]
    assert total["NumRet"] == per_topic[per_topic.measure == "NumRet"].value.sum() == 1500
    assert total["AP"] == pytest.approx(per_topic[per_topic.measure == "AP"].value.mean())
    assert total["num_q"] == 3


def test_names_trec_eval_in_every_format(capsys):
    files = [str(DATA / "qrels.test"), str(DATA / "results.test")]
    main(["eval", "-m", "AP", "-m", "P@10", "--format", "json", "--names", "trec_eval", *files])
    assert {row["measure"] for row in json.loads(capsys.readouterr().out)} == {"map", "P_10"}
    main(["eval", "-m", "map", "-m", "P_10", "--format", "csv", *files])
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "run,measure,query_id,value" and [row.split(",")[1] for row in rows[1:]] == ["AP", "P@10"]
    main(["eval", "-m", "map", "--names", "pdeval", *files])
    assert capsys.readouterr().out.split("\t")[0].strip() == "AP"


def test_run_from_tag_evaluates_several_runs_of_one_file(capsys, tmp_path):
    both = tmp_path / "both.txt"
    lines = (DATA / "results.test").read_text().splitlines()
    renamed = [line.rsplit(None, 1)[0] + " OTHER" for line in lines]
    both.write_text("\n".join(lines + renamed) + "\n")
    assert main(["eval", "-m", "map", "--run-from", "tag", str(DATA / "qrels.test"), str(both)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sorted(out) == ["OTHER\tmap                   \tall\t0.1785", "STANDARD\tmap                   \tall\t0.1785"]


def test_runs_sharing_a_tag_are_not_merged_by_a_duplicates_policy(capsys, tmp_path):
    """Issue: --run-from tag --duplicates first merged four runs of one tag into one run."""
    lines = (DATA / "results.test").read_text().splitlines()
    shared = tmp_path / "shared.txt"
    shared.write_text("\n".join(lines * 4) + "\n")
    for policy in ("error", "first"):
        code = main(["eval", "-m", "map", "--run-from", "tag", "--duplicates", policy, str(DATA / "qrels.test"),
                     str(shared)])
        assert code == 2
        err = capsys.readouterr().err
        assert "STANDARD" in err and "several systems" in err and "--run-from file" in err
        assert "--duplicates first|max" not in err


def test_duplicates_policy_reaches_the_qrels(capsys, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text((DATA / "qrels.test").read_text() + "301 0 FBIS3-10082 1\n")
    run = str(DATA / "results.test")
    assert main(["eval", "-m", "map", str(qrels), run]) == 2
    assert main(["eval", "-m", "map", "--duplicates", "first", str(qrels), run]) == 0
    captured = capsys.readouterr()
    assert "map                   \tall\t0.1785" in captured.out
    assert "1 duplicate qrels row(s) dropped" in captured.err


def test_measures_list_fits_100_columns_one_measure_a_line(capsys):
    from pdeval.measures import REGISTRY

    assert main(["measures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    for name, spec in REGISTRY.items():
        mine = [line for line in lines if line.split(" ")[0].split("[")[0].split("@")[0] == name]
        assert len(mine) == 1, name
        assert f"{name}'" in mine[0]  # the prime is listed
        assert all(alias in mine[0] for alias in spec.aliases[:1]) or mine[0].endswith("...")
    assert main(["measures", "AP"]) == 0
    detail = capsys.readouterr().out
    assert "MAP" in detail and "map|map_cut_{k}" in detail and "AP'" in detail


HELP_DEFAULTS = {
    "eval": ["(default: official)", "(default: every document)", "(default: 1)", "(default: tsv)",
             "(default: auto)", "(default: error)", "(default: file)"],
    "measures": ["(default: list all)"],
    "report": ["(default: 10)", "(default: [10, 20, 50])", "(default: 1000)", "(default: 1)",
               "(default: the bundled CLEF eHealth 2018 data)", "(default: Sakai 2007's grid)"],
}


@pytest.mark.parametrize("command", sorted(HELP_DEFAULTS))
def test_every_sub_command_help_shows_defaults(capsys, command):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for default in HELP_DEFAULTS[command]:
        assert default in text


def test_readme_command_lines_parse():
    import re
    import shlex

    from pdeval.cli.commands import _parse_args

    readme = (DATA.parents[2] / "README.md").read_text()
    section = readme.split("## Command line")[1].split("\n## ")[0]
    guide = (DATA.parents[2] / "docs" / "guide" / "cli.md").read_text()  # the command line in full
    commands = [line.split("#")[0] for text in (section, guide)
                for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S)
                for line in block.splitlines() if line.startswith("pdeval ")]
    assert len(commands) >= 8
    for command in commands:
        _parse_args(shlex.split(command)[1:])  # raises on a form the command does not take


def test_measure_parameters_as_nist_tests_them(capsys):
    """NIST's out.test.meas_params: the lines of the measures pdeval has, with their parameters."""
    options = ["-q", "-m", "P.5,7,3", "-m", "recall.20,2000", "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20"]
    assert main(["eval", *options, str(DATA / "qrels.test"), str(DATA / "results.test")]) == 0
    ours = capsys.readouterr().out.splitlines()
    names = {line.split("\t")[0].strip() for line in ours}
    assert names == {"P_3", "P_5", "P_7", "recall_20", "recall_2000", "ndcg_1=3,2=9,4=4.5", "ndcg_cut_10", "ndcg_cut_20"}
    theirs = (DATA / "out.test.meas_params").read_text().splitlines()
    assert ours == [line for line in theirs if line.split("\t")[0].strip() in names]
    # trec_eval reads the cut-off 23.4 as 23 (atol); pdeval does too (NIST's test), and says so
    assert main(["eval", "-m", "ndcg_cut.10,20,23.4", str(DATA / "qrels.test"), str(DATA / "results.test")]) == 0
    captured = capsys.readouterr()
    assert "ndcg_cut_23" in captured.out and "the cut-off 23.4 is read as 23" in captured.err


def test_repeated_families_print_every_cutoff(capsys):
    # trec_eval keeps the first -m P parameters; pdeval prints what was asked, values as trec_eval's
    main(["eval", "-m", "P.10", "-m", "map", "-m", "P.5", str(DATA / "qrels.test"), str(DATA / "results.test")])
    assert capsys.readouterr().out == (DATA / "out.test.map_P5_10").read_text()


def test_one_stderr_line_per_failure_also_after_a_warning(capsys, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text((DATA / "qrels.test").read_text() + "301 0 FBIS3-10082 1\n")
    argv = ["eval", "-m", "map", "--duplicates", "first", str(qrels)]
    assert main(argv + [str(tmp_path / "missing_run.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pdeval eval: error:")
    assert "missing_run.txt" in err and "(after the warning: " in err and "1 duplicate qrels row(s) dropped" in err
    assert main(argv + [str(DATA / "results.test")]) == 0  # success: the warning, one line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pdeval: warning: ") and "1 duplicate qrels row(s) dropped" in err


def test_num_docs_reaches_utility(capsys):
    """trec_eval -N: utility's fourth coefficient counts the nonrelevant documents not retrieved."""
    files = [str(DATA / "qrels.test"), str(DATA / "results.test")]
    assert main(["eval", "-N", "100000", "-m", "utility.1,-1,-2,0.5", *files]) == 0
    value = float(capsys.readouterr().out.split("\t")[-1])
    # over the 3 topics: 131 relevant retrieved, 1,369 nonrelevant retrieved, 430 relevant missed
    expected = (131 - 1369 - 2 * 430 + 0.5 * (3 * 100000 + 131 - 1500 - 561)) / 3
    assert value == pytest.approx(expected, abs=5e-5)
