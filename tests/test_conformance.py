"""Conformance with trec_eval: every measure trec_eval also computes must agree per topic.

Two independent references:

* ``pytrec_eval`` (the ``pytrec-eval-terrier`` wheel, built from trec_eval's git tag ``v9.0.8``,
  which holds 9.0.7's code), which orders by
  float32 scores, so pdeval runs with ``score_precision="float32"`` against it; agreement to
  1e-9 per topic on trec_eval's own test files, on the bundled data, and on the real CLEF runs
  beside the repository (skipped where that data is absent);
* trec_eval's own expected outputs (``tests/data/trec_eval/out.test.*``, printed to 4
  decimals by NIST's trec_eval), reproduced with the same options (``-c``, ``-M100``,
  ``-l2`` on qrels with ``-1`` entries).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval

pytrec_eval = pytest.importorskip("pytrec_eval")

HERE = Path(__file__).resolve().parent
TREC_EVAL = HERE / "data" / "trec_eval"
SHARED = HERE.parents[1] / "shared" / "data"

#: pdeval measure -> trec_eval measure
MEASURES = {
    "P@5": "P_5",
    "P@10": "P_10",
    "P@100": "P_100",
    "P@1000": "P_1000",
    "Rprec": "Rprec",
    "AP": "map",
    "AP@10": "map_cut_10",
    "AP@100": "map_cut_100",
    "R@10": "recall_10",
    "R@1000": "recall_1000",
    "RR": "recip_rank",
    "nDCG": "ndcg",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@100": "ndcg_cut_100",
    "Bpref": "bpref",
    "infAP": "infAP",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
}
#: measures that trec_eval evaluates on the condensed list with -J
JUDGED_ONLY = {"AP'": "map", "P'@10": "P_10", "nDCG'": "ndcg", "nDCG'@10": "ndcg_cut_10"}


def pytrec_eval_table(
    run: pd.DataFrame, qrels: pd.DataFrame, names: dict, *, judged_only: bool = False, rel: int = 1
) -> pd.DataFrame:
    """pytrec_eval's per-topic values, as a frame (run, query_id, measure, expected)."""
    judgments: dict = {}
    for query, doc, level in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        judgments.setdefault(query, {})[doc] = int(level)
    evaluator = pytrec_eval.RelevanceEvaluator(
        judgments, set(names.values()), relevance_level=rel, judged_docs_only_flag=judged_only
    )
    rows = []
    for name, frame in run.groupby("run", sort=False):
        ranking: dict = {}
        for query, doc, score in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
            ranking.setdefault(query, {})[doc] = float(score)
        for query, values in evaluator.evaluate(ranking).items():
            for ours, theirs in names.items():
                rows.append((name, query, ours, values[theirs]))
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "expected"])


def canonical_names(result: pd.DataFrame, names: dict, rel) -> pd.DataFrame:
    """Results name a measure with its non-default parameters (AP(rel=2)); map back to the keys."""
    back = {str(pdeval.parse_measure(name, rel=rel)): name for name in names}
    return result.assign(measure=result["measure"].map(back))


def assert_agrees(run, qrels, names=MEASURES, *, judged_only=False, rel=1, tol=1e-9):
    expected = pytrec_eval_table(run, qrels, names, judged_only=judged_only, rel=rel)
    ours = canonical_names(pdeval.evaluate(run, qrels, list(names), score_precision="float32", rel=rel), names, rel)
    merged = expected.merge(ours, on=["run", "query_id", "measure"], how="left", validate="one_to_one")
    assert merged["value"].notna().all(), "pdeval lacks values that pytrec_eval has"
    assert len(ours) == len(expected), "pdeval evaluated topics pytrec_eval did not"
    difference = (merged["value"] - merged["expected"]).abs()
    worst = merged.loc[difference.idxmax()] if len(merged) else None
    assert difference.max() <= tol, f"largest difference {difference.max():.3g} at\n{worst}"
    return len(merged)


# ---- trec_eval's own test files -------------------------------------------------------------
@pytest.fixture(scope="module")
def trec_test_run():
    return pdeval.read_run(TREC_EVAL / "results.test")


@pytest.fixture(scope="module")
def trec_test_qrels():
    return pdeval.read_qrels(TREC_EVAL / "qrels.test")


def test_pytrec_eval_on_trec_eval_test_files(trec_test_run, trec_test_qrels):
    assert assert_agrees(trec_test_run, trec_test_qrels) == 3 * len(MEASURES)


def test_pytrec_eval_judged_only_on_trec_eval_test_files(trec_test_run):
    # qrels.rel_level has -1 entries and graded levels: the condensed list drops them
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.rel_level")
    assert_agrees(trec_test_run, qrels, JUDGED_ONLY, judged_only=True)


def test_pytrec_eval_relevance_level_two_with_pooled_entries(trec_test_run):
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.rel_level")
    assert_agrees(trec_test_run, qrels, rel=2)


def read_trec_eval_output(path: Path) -> pd.DataFrame:
    """trec_eval's ``-q`` output: measure, topic (or all), value."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return pd.DataFrame(rows, columns=["measure", "query_id", "expected"])


def expected_values(path: Path, names: dict) -> pd.DataFrame:
    table = read_trec_eval_output(path)
    table = table[table["measure"].isin(set(names.values())) & (table["query_id"] != "all")]
    back = {theirs: ours for ours, theirs in names.items()}
    return table.assign(measure=table["measure"].map(back), expected=table["expected"].astype(float))


@pytest.mark.parametrize(
    "output, run_file, qrels_file, options",
    [
        ("out.test.aq", "results.test", "qrels.test", {}),
        ("out.test.aqc", "results.trunc", "qrels.test", {"complete": True}),
        ("out.test.aqcM", "results.trunc", "qrels.test", {"complete": True, "depth": 100}),
        ("out.test.aql", "results.test", "qrels.rel_level", {"rel": 2}),
    ],
)
def test_trec_eval_expected_outputs(output, run_file, qrels_file, options):
    expected = expected_values(TREC_EVAL / output, MEASURES)
    run = pdeval.read_run(TREC_EVAL / run_file)
    qrels = pdeval.read_qrels(TREC_EVAL / qrels_file)
    ours = canonical_names(pdeval.evaluate(run, qrels, list(MEASURES), **options), MEASURES, options.get("rel"))
    merged = expected.merge(ours, on=["query_id", "measure"], how="left")
    assert merged["value"].notna().all()
    assert len(merged) == len(ours)
    # trec_eval prints 4 decimals (counts as integers)
    assert np.allclose(merged["value"], merged["expected"], rtol=0, atol=5.01e-5)


def test_complete_evaluates_topics_missing_from_the_run():
    run = pdeval.read_run(TREC_EVAL / "results.trunc")
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.test")
    plain = pdeval.evaluate(run, qrels, "AP")
    complete = pdeval.evaluate(run, qrels, "AP", complete=True)
    missing = set(complete["query_id"]) - set(plain["query_id"])
    assert missing and (complete.loc[complete["query_id"].isin(missing), "value"] == 0).all()


# ---- the bundled data (always present) --------------------------------------------------------
def test_pytrec_eval_on_bundled_clef2018():
    data = pdeval.datasets.load("clef2018")
    assert assert_agrees(data.runs, data.qrels) > 0
    assert_agrees(data.runs, data.partial_qrels, JUDGED_ONLY, judged_only=True)


# ---- the real CLEF data beside the repository ------------------------------------------------
def clean_runs(folder: str) -> pd.DataFrame:
    """Every run of a shared data folder that has no duplicate documents (trec_eval rejects those)."""
    root = SHARED / folder
    if not root.exists():
        pytest.skip(f"the shared evaluation data ({root}) is not available on this machine")
    frames = []
    for path in sorted((root / "runs").iterdir()):
        try:
            frames.append(pdeval.read_run(path))
        except pdeval.errors.DuplicateError:
            continue
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("folder", ["clef2018-chs-task1", "clef2016-chs-task2"])
def test_pytrec_eval_on_real_clef_runs(folder):
    run = clean_runs(folder)
    qrels_file = next(p for p in (SHARED / folder).glob("qrels*") if p.is_file())
    qrels = pdeval.read_qrels(qrels_file)
    assert run["run"].nunique() >= 10
    assert_agrees(run, qrels)
    assert_agrees(run, qrels, JUDGED_ONLY, judged_only=True)


# ---- the trec_eval 10.0 binary, built from ../shared/tools -------------------------------------
# ``pdeval eval`` must print what trec_eval prints, byte for byte, for the default measures and
# -m all_trec, with -q, -c, -J, -l 2 and -M 100: on trec_eval's own test files, on the bundled copy
# of them, on random cases, and on real CLEF 2015 and DL 2021 runs.
import contextlib  # noqa: E402
import io  # noqa: E402
import subprocess  # noqa: E402

TREC_TESTS = SHARED / "trec_eval-tests" / "test"

#: option sets every input is compared under
OPTION_SETS = [
    [],  # -m official
    ["-m", "all_trec"],
    ["-q", "-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec"],
    ["-q", "-J", "-m", "all_trec"],
    ["-q", "-l", "2", "-m", "all_trec"],
    ["-q", "-M", "100", "-m", "all_trec"],
]


def pdeval_cli(options: list, qrels: Path, run: Path) -> str:
    from pdeval.cli.commands import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["eval", *options, str(qrels), str(run)])
    assert code == 0, err.getvalue()
    return out.getvalue()


def assert_same_output(binary: Path, options: list, qrels: Path, run: Path) -> bool:
    """Compare the outputs; False (nothing compared) where trec_eval 10 refuses the input: a
    qrels topic without a ranking and no -c ("result qid ... not found in qrels"), which
    pdeval evaluates over the topics the run holds (as trec_eval 9 did)."""
    theirs = subprocess.run([str(binary), *options, str(qrels), str(run)], capture_output=True, text=True, timeout=600)
    if theirs.returncode != 0 and "not found in qrels" in theirs.stderr and "-c" not in options:
        return False
    assert theirs.returncode == 0, theirs.stderr
    ours = pdeval_cli(options, qrels, run)
    if ours != theirs.stdout:
        mine, other = ours.splitlines(), theirs.stdout.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(mine, other)) if a != b), min(len(mine), len(other)))
        raise AssertionError(
            f"trec_eval {' '.join(options)} {qrels.name} {run.name}: line {first + 1} differs: "
            f"pdeval {mine[first:first + 1]} trec_eval {other[first:first + 1]} ({len(mine)} vs {len(other)} lines)"
        )
    return True


TREC_TEST_PAIRS = [
    ("qrels.test", "results.test"),
    ("qrels.test", "results.trunc"),
    ("qrels.rel_level", "results.test"),
    ("qrels.test.with-comments", "results.test"),
    ("qrels.comment.test", "results.comment.test"),
    ("qrels-302.test", "results-302.test"),
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: " ".join(o) or "official")
@pytest.mark.parametrize("qrels, run", TREC_TEST_PAIRS)
def test_cli_prints_what_trec_eval_10_prints_on_its_test_files(trec_eval_binary, qrels, run, options):
    if not TREC_TESTS.exists():
        pytest.skip(f"trec_eval's test files ({TREC_TESTS}) are not available on this machine")
    if not assert_same_output(trec_eval_binary, options, TREC_TESTS / qrels, TREC_TESTS / run):
        pytest.skip("trec_eval 10 refuses a qrels topic without a ranking unless -c is given")


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: " ".join(o) or "official")
@pytest.mark.parametrize("qrels, run", [("qrels.test", "results.test"), ("qrels.rel_level", "results.test"),
                                        ("qrels.test", "results.trunc")])
def test_cli_prints_what_trec_eval_10_prints_on_the_bundled_files(trec_eval_binary, qrels, run, options):
    if not assert_same_output(trec_eval_binary, options, TREC_EVAL / qrels, TREC_EVAL / run):
        pytest.skip("trec_eval 10 refuses a qrels topic without a ranking unless -c is given")


def random_case(seed: int, folder: Path) -> tuple[Path, Path]:
    """A small random qrels file (levels -1..3, some topics without relevant documents) and run
    (ties, short lists, documents the qrels lack, topics the qrels lack)."""
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines = [], []
    for topic in range(1, int(rng.integers(2, 6)) + 1):
        docs = [f"d{j}" for j in range(int(rng.integers(5, 40)))]
        judged = rng.choice(len(docs), size=int(rng.integers(1, len(docs) + 1)), replace=False)
        for j in judged:
            qrels_lines.append(f"{topic} 0 {docs[j]} {int(rng.choice([-1, 0, 0, 1, 1, 2, 3]))}")
        if rng.random() < 0.15:
            continue  # a qrels topic without a ranking (-c)
        retrieved = rng.choice(len(docs), size=int(rng.integers(1, len(docs) + 1)), replace=False)
        scores = rng.integers(0, 6, size=len(retrieved)) / 2  # ties
        for rank, (j, score) in enumerate(zip(retrieved, scores)):
            run_lines.append(f"{topic} Q0 {docs[j]} {rank} {score} rnd")
    run_lines.append("99 Q0 x 1 1.0 rnd")  # a topic the qrels lack
    qrels, run = folder / f"qrels{seed}.txt", folder / f"run{seed}.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    run.write_text("\n".join(run_lines) + "\n")
    return qrels, run


@pytest.mark.parametrize("seed", range(12))
def test_cli_prints_what_trec_eval_10_prints_on_random_cases(trec_eval_binary, tmp_path, seed):
    qrels, run = random_case(seed, tmp_path)
    compared = 0
    for options in OPTION_SETS[2:] + [["-q", "-J", "-c", "-l", "2", "-M", "10", "-m", "all_trec", "-m", "dcg",
                                       "-m", "ideal_dcg", "-m", "yaap", "-m", "relstring.30"]]:
        compared += assert_same_output(trec_eval_binary, options, qrels, run)
    assert compared >= 2


def real_runs(folder: str, pattern: str, count: int, tmp_path: Path) -> list:
    root = SHARED / folder / "runs"
    if not root.exists():
        pytest.skip(f"the shared evaluation data ({root}) is not available on this machine")
    import gzip

    chosen = sorted(root.glob(pattern))[:: max(1, len(list(root.glob(pattern))) // count)][:count]
    paths = []
    for path in chosen:  # trec_eval reads plain text only
        plain = tmp_path / path.name.replace(".gz", "")
        plain.write_bytes(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())
        paths.append(plain)
    return paths


@pytest.mark.parametrize("options", [[], ["-q", "-m", "all_trec"], ["-q", "-c", "-J", "-m", "all_trec"]],
                         ids=lambda o: " ".join(o) or "official")
def test_cli_prints_what_trec_eval_10_prints_on_clef_2015(trec_eval_binary, tmp_path, options):
    qrels = SHARED / "clef2015-chs-task2" / "qrels" / "qrels.eng.clef2015.qtest.graded.txt"
    for run in real_runs("clef2015-chs-task2", "*.gz", 4, tmp_path):
        assert_same_output(trec_eval_binary, options, qrels, run)


@pytest.mark.parametrize("options", [[], ["-q", "-m", "all_trec"], ["-q", "-l", "2", "-M", "100", "-m", "all_trec"]],
                         ids=lambda o: " ".join(o) or "official")
def test_cli_prints_what_trec_eval_10_prints_on_dl_2021(trec_eval_binary, tmp_path, options):
    qrels = SHARED / "trec-dl21" / "qrels-pass.dl21.human.txt"
    for run in real_runs("trec-dl21", "*.gz", 3, tmp_path):
        assert_same_output(trec_eval_binary, options, qrels, run)
