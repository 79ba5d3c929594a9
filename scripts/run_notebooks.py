#!/usr/bin/env python
"""Execute the notebooks with their full settings and save them with their outputs.

Run by hand from the repository root (the tests run them separately, in fast mode)::

    .venv/bin/python scripts/run_notebooks.py                 # every notebook
    .venv/bin/python scripts/run_notebooks.py rpref pool_bias  # some of them
    .venv/bin/python scripts/run_notebooks.py --fast           # PDEVAL_FAST=1, outputs not saved
    .venv/bin/python scripts/run_notebooks.py rankeff --collection clef2015 --collection trec-dl21

``--collection`` re-runs the reproductions that study a collection (those calling
``support.collection``) on another one (``PDEVAL_COLLECTION``) and saves the executed copy as
``notebooks/collections/<notebook>.<collection>.ipynb`` (figures go to a temporary folder). Every
full run writes its paper-vs-ours verdicts to ``notebooks/verdicts/``, and
``notebooks/REPRODUCTIONS.md`` is rebuilt from all of them: per paper and collection, how many
empirical findings were reproduced, partly reproduced, not, undecided or not testable, and apart
from them how many identity checks, by-construction consequences and pdeval's own rows held; then
the data limits behind verdicts and those of each collection.

The kernel is always this interpreter (``sys.executable``) whatever kernel specs the user has
installed: a temporary ``python3`` kernel spec pointing at it is the only one the kernel
manager sees. Figures go to ``notebooks/figures/`` (full runs only).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"


def execute(path: Path, *, timeout: int = 3600) -> tuple[nbformat.NotebookNode, float]:
    """Execute the notebook at ``path`` in a kernel running ``sys.executable``."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as specs:
        write_kernel_spec(Path(specs) / "python3")
        manager = KernelSpecManager()
        manager.kernel_dirs = [specs]
        manager.ensure_native_kernel = False
        km = KernelManager(kernel_name="python3", kernel_spec_manager=manager)
        client = NotebookClient(
            nb, km=km, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        start = time.perf_counter()
        client.execute()
        elapsed = time.perf_counter() - start
    return nb, elapsed


VERDICTS = NOTEBOOKS / "verdicts"
COPIES = NOTEBOOKS / "collections"
#: the paper each notebook reproduces, for the summary
PAPERS = {
    "alternatives_to_bpref": "Sakai 2007",
    "inferred_ap": "Yilmaz & Aslam 2008",
    "rankeff": "Ahlgren & Grönqvist 2008",
    "rpref": "De Beer & Moens 2006",
    "training_sensitivity": "He, Macdonald & Ounis 2008",
    "pool_bias": "leave-out pooling (Zobel 1998; Buckley et al. 2007)",
    "sampled_judgments": "Yilmaz, Kanoulas & Aslam 2008",
    "leaderboard_nist_vs_gpt4": "SynDL (Rahmani et al. 2024)",
    "label_agreement_llmjudge": "LLMJudge (Rahmani et al. 2024)",
    "label_agreement_rag": "TREC RAG 2025 UMBRELA",
    "many_systems": "Carterette 2012; Sakai 2016, 2018",
    "pool_bias_and_budgets": "Losada et al. 2016, 2017; Webber & Park 2009; Lipani et al. 2015",
    "estimates": "Fröbe et al. 2023; prediction-powered inference (Angelopoulos et al. 2023)",
    "ties": "McSherry & Najork 2008 (tied scores)",
    "llm_judges": "Clarke & Dietz 2024 (LLM judges, meta-evaluation with intervals)",
    "calibration": "estimate's default intervals, left one collection out (Fröbe et al. 2023; Zobel 1998)",
}


#: the data each notebook studies by default
DEFAULT_DATA = {
    "alternatives_to_bpref": "clef2018-full",
    "inferred_ap": "clef2018-full",
    "rankeff": "clef2018-full (and Cranfield)",
    "rpref": "Cranfield, CLEF 2018 sample",
    "training_sensitivity": "Cranfield (BM25, PL2), trec-dl21 (fusion)",
    "pool_bias": "CLEF 2018 sample",
    "sampled_judgments": "CLEF 2018 sample, CDS 2015",
    "leaderboard_nist_vs_gpt4": "trec-dl21",
    "label_agreement_llmjudge": "LLMJudge DL 2023",
    "label_agreement_rag": "TREC RAG 2025",
    "many_systems": "clef2015, trec-dl21",
    "pool_bias_and_budgets": "clef2015, trec-dl21",
    "estimates": "clef2015, trec-dl21, LLMJudge DL 2023",
    "ties": "clef2015, clef2016, clef2018-full, trec-dl21",
    "llm_judges": "trec-dl21, LLMJudge DL 2023, TREC RAG 2025",
    "calibration": "clef2015, clef2016, clef2018-full, trec-dl21 (left out in turn); CLEF 2018 partial qrels; SynDL DL 2021 (never seen)",
}


def studies_a_collection(path: Path) -> bool:
    return "collection(" in path.read_text()


#: marks the first cell of a copy run on another collection (:func:`label_copy`)
COPY_BANNER = "<!-- collection copy -->"


def label_copy(nb: nbformat.NotebookNode, stem: str, collection: str, verdicts: Path) -> nbformat.NotebookNode:
    """Put at the top of a copy run on ``collection`` what its prose cannot say: the text was
    written for the notebook's own run (its numbers and its closing discussion describe that
    run), while every output, and the verdicts repeated here from ``verdicts``, are this
    collection's. A banner from an earlier labelling is replaced."""
    import pandas as pd

    nb.cells = [cell for cell in nb.cells if not (cell.cell_type == "markdown" and cell.source.startswith(COPY_BANNER))]
    table = pd.read_csv(verdicts, keep_default_na=False)
    columns = [c for c in ("paper's finding", "ours", "agrees", "tolerance", "kind", "data limit") if c in table.columns]
    rows = ["| " + " | ".join(c if c != "ours" else "ours on this collection" for c in columns) + " |",
            "|" + "---|" * len(columns)]
    rows += ["| " + " | ".join(str(value).replace("|", "\\|").replace("\n", " ") for value in row) + " |"
             for row in table[columns].itertuples(index=False)]
    text = "\n".join([
        COPY_BANNER,
        f"**This copy of `{stem}.ipynb` runs on `{collection}`.** Every output below, figures and the",
        "verdict table included, is computed on this collection. The text cells were written for the",
        f"notebook's own run ({DEFAULT_DATA.get(stem, 'its default data')}): the title, the numbers they quote and",
        "the closing discussion describe that run, not this one. This collection's verdicts, each with",
        "the tolerance that decided it:",
        "",
        *rows,
        *(["", f"**Data limits of `{collection}`.** {DATA_LIMITS[collection]}"] if collection in DATA_LIMITS else []),
    ])
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))
    return nb


#: what each collection cannot give, said beside its tallies (the notebooks print the numbers)
DATA_LIMITS = {
    "clef2018-full": "CLEF eHealth 2018, the 24 runs 1,000 deep. It holds (nearly) identical runs: CUNI run2 = the "
                     "terrier DirichletLM baseline (the same lists), CUNI run1 differs from them in a handful of rows "
                     "(MAP 0.2751 vs 0.2752), CUNI run3 likewise from the terrier TF_IDF baseline (0.2588 "
                     "vs 0.2586), and IELAB 03 = IELAB 04. They stay in the rank correlations, as the submitted runs "
                     "they are: an identical pair is tied in every ranking, so Kendall's τ_b counts it neither "
                     "concordant nor discordant, but each of its pairs with another run counts twice. Yilmaz & "
                     "Aslam's complete set is the depth-15 pool of the runs (98.4 % judged, 123 judgments per topic "
                     "(median)); a random 1 % of it keeps 1-2 judged documents per topic, 5 % about 6, 10 % about "
                     "12. Its shallowest pool (depth 1) holds 8.4 % of the set, so the paper's τ ≈ 0.9 at ≈ 5 % "
                     "judged cannot be read off a depth pool.",
    "clef2015": "CLEF eHealth 2015, all 68 runs (FDUSGInfo runs 6 = 7 = 8 and 9 = 10, LIMSI runs 4 = 5 identical "
                "on at least 90 % of the topics; kept, as for CLEF 2018). No pool of these runs is 98 % judged: "
                "Yilmaz & Aslam's \"complete\" set is the depth-5 pool, only 65 % judged, its holes counted "
                "nonrelevant; too incomplete to stand for complete judgments, so the inferred_ap findings are "
                "not testable here (numbers shown, no verdict). That set holds 66 judgments per topic (median), and 4 "
                "of its topics no relevant document (left out of the inferred_ap study: a random sample must "
                "hold one); a random 1 % of it keeps one judged document per topic, 10 % about 7.",
    "clef2015-top30": "CLEF eHealth 2015, the 30 runs with the highest MAP. Yilmaz & Aslam's \"complete\" set "
                      "is the depth-5 pool, 91 % judged, its holes counted nonrelevant (verdicts given, with that "
                      "caveat). That set holds only 28 judgments per topic (median), and 6 of its topics no relevant "
                      "document (left out of the inferred_ap study); a random 1-5 % of it keeps one judged "
                      "document per topic (at most 3), 10 % about 3. The depth-1 pool already holds about a "
                      "quarter of it, so the paper's judged share at depth 4 (≈ 5 %) "
                      "cannot be reached with depth pools.",
    "trec-dl21": "TREC DL 2021 passage runs as distributed: 100 deep, so every measure is computed on the top "
                 "100, a pool deeper than 100 adds nothing, and Yilmaz & Aslam's complete set is the depth-10 pool "
                 "(98.9 % judged, 144 judgments per topic (median); a random 1 % keeps 1-2 per topic, 5 % about "
                 "7). Its depth-1 pool holds 13.9 % of that set, so τ at the paper's ≈ 5 % cannot be read off a "
                 "depth pool.",
}

#: data limits of a notebook's substitutes for the paper's data (beside the collection's own)
DATA_LIMITS.update({
    "clef2018-full": DATA_LIMITS["clef2018-full"] + " R ≈ N: 27 of its 50 topics have more relevant than "
                     "nonrelevant judged documents (the paper's NTCIR topics far fewer), so the measures that "
                     "cut at N (bpref_N, rpref_N) differ little from those cutting at R, and RankEff, which "
                     "counts nonrelevant documents, tracks MAP: the cause of the not-reproduced bpref_N/rpref_N "
                     "and RankEff-vs-MAP rows. Its judgments have two relevance grades (1, 2) against NTCIR's "
                     "three (S, A, B), so Sakai's graded measures (Q′, nDCG′) have less grading to use.",
    "Cranfield": "He, Macdonald & Ounis trained BM25 and PL2 on TREC collections with pooled judgments; the "
                 "reproduction substitutes Cranfield (1,400 documents, 225 queries, about 7 relevant documents "
                 "per query, judgments complete), so at the smallest completeness levels a training sample "
                 "keeps one relevant document per query, and the second collection substitutes a linear "
                 "fusion weight of two TREC DL 2021 runs for a retrieval model's parameter.",
})


def write_summary() -> Path:
    """``notebooks/REPRODUCTIONS.md``: per paper, notebook and collection, the tally of its
    empirical findings (reproduced, partly, not, not testable) and, apart from them, of its
    identity checks (theorems and properties that hold by construction); then the data limits
    per collection. The same table goes into the docs' reproductions page (and the README, if
    it has the markers) between the ``reproductions`` markers."""
    sys.path.insert(0, str(NOTEBOOKS))
    import pandas as pd
    from support import tally

    header = ("| paper | notebook | collection | findings | reproduced | partly | not | undecided | not testable "
              "| identity checks (held) | by construction (held) | pdeval's own (held) |")
    lines = ["# Reproductions: findings reproduced per paper and collection", "",
             "Generated by `scripts/run_notebooks.py` from the paper-vs-ours tables of the full runs",
             "(`notebooks/verdicts/`). The counts are over the papers' *empirical findings* only, each",
             "under the paper it belongs to. Counted apart from them: *identity checks* (theorems,",
             "definitions and properties that hold by construction, e.g. AP′ = bpref_relative2 or the swap",
             "property of RankEff: they can fail only through a bug); *by construction* (findings that follow",
             "mechanically from the set-up, e.g. MAP falling when unjudged documents are scored nonrelevant",
             "under random reduction: they can hardly fail); *pdeval's own* rows (tests of pdeval's",
             "extensions or of targets the project set, e.g. the `unique` prior, not of the paper's method",
             "and claim). *partly*: some parts of a finding hold, others do not or show no difference",
             "beyond the stated tolerance; *not*: the finding does not hold or its difference is within the",
             "tolerance; *undecided*: the rule cannot reach a decision with the data (a value within the",
             "noise of the paper's threshold, a non-inferiority test without power); *not testable*: the",
             "collection cannot test it (the verdict says why; a check of any kind that cannot be tested",
             "counts here, as a finding, not as a check that failed). Every verdict states the paper's claim, the",
             "compared quantity and its tolerance, and the data limit that drives a not-reproduced verdict.", "",
             header, "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    limited = []
    for csv in sorted(VERDICTS.glob("*.csv")):
        stem, _, coll = csv.stem.partition(".")
        table = pd.read_csv(csv, keep_default_na=False)
        papers = table["paper"].replace("", PAPERS.get(stem, stem)) if "paper" in table.columns else \
            pd.Series(PAPERS.get(stem, stem), index=table.index)
        link = f"collections/{stem}.{coll}.ipynb" if coll else f"{stem}.ipynb"
        collection_name = coll or DEFAULT_DATA.get(stem, "")
        for paper in dict.fromkeys(papers):
            c = tally(table[papers == paper])
            lines.append(f"| {paper} | [{stem}]({link}) | {collection_name} | {c['findings']} | "
                         f"{c['reproduced']} | {c['partly']} | {c['not']} | {c['undecided']} | {c['untested']} | "
                         f"{c['checks']} ({c['checks_held']}) | {c['construction']} ({c['construction_held']}) | "
                         f"{c['own']} ({c['own_held']}) |")
        if "data limit" in table.columns:
            for row in table[table["data limit"] != ""].itertuples(index=False):
                limited.append(f"* [{stem}]({link}) on {collection_name}: *{row[0]}* — **{row[2]}**: {row[-1]}")
    if limited:
        lines += ["", "## Data limits behind verdicts", ""] + limited
    lines += ["", "## Data limits per collection", ""]
    lines += [f"* **{name}**: {text}" for name, text in DATA_LIMITS.items()]
    path = NOTEBOOKS / "REPRODUCTIONS.md"
    path.write_text("\n".join(lines) + "\n")
    start, end = "<!-- reproductions:start -->", "<!-- reproductions:end -->"
    for page, prefix in ((REPO / "README.md", "notebooks/"), (REPO / "docs" / "guide" / "reproductions.md", "../notebooks/")):
        text = page.read_text()
        if start in text and end in text:
            table = [line.replace("](", "](" + prefix) if line.startswith(("| ", "* [")) and "](" in line else line
                     for line in lines[lines.index(header):]]
            head, rest = text.split(start, 1)
            page.write_text(head + start + "\n" + "\n".join(table) + "\n" + end + rest.split(end, 1)[1])
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="notebook names (without .ipynb); default: all")
    parser.add_argument("--fast", action="store_true", help="PDEVAL_FAST=1; the notebooks are not saved")
    parser.add_argument("--collection", action="append", default=[],
                        help="run the collection-studying notebooks on this collection instead (repeatable)")
    args = parser.parse_args(argv)
    paths = [NOTEBOOKS / f"{n.removesuffix('.ipynb')}.ipynb" for n in args.names] or sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.fast:
        os.environ["PDEVAL_FAST"] = "1"
        os.environ.setdefault("PDEVAL_FIGURES", tempfile.mkdtemp(prefix="pdeval-figures-"))
    else:
        os.environ.pop("PDEVAL_FAST", None)
        os.environ.pop("PDEVAL_FIGURES", None)
        VERDICTS.mkdir(exist_ok=True)
    jobs = [(path, None) for path in paths] if not args.collection else [
        (path, name) for path in paths if studies_a_collection(path) for name in args.collection]
    total = 0.0
    for path, name in jobs:
        stem = path.stem + (f".{name}" if name else "")
        if name:
            os.environ["PDEVAL_COLLECTION"] = name
            os.environ["PDEVAL_FIGURES"] = tempfile.mkdtemp(prefix="pdeval-figures-")
        if not args.fast:
            os.environ["PDEVAL_VERDICTS"] = str(VERDICTS / f"{stem}.csv")
        nb, elapsed = execute(path)
        total += elapsed
        if not args.fast:
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            target = COPIES / f"{stem}.ipynb" if name else path
            if name:
                nb = label_copy(nb, path.stem, name, VERDICTS / f"{stem}.csv")
            target.parent.mkdir(exist_ok=True)
            nbformat.write(nb, target)
        print(f"{stem}: {elapsed:.1f} s", flush=True)
    print(f"total: {total:.1f} s")
    if not args.fast:
        print(f"summary: {write_summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
