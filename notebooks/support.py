"""Small helpers shared by the notebooks (not part of the pdeval package).

* ``FAST`` / :func:`pick`: the environment variable ``PDEVAL_FAST=1`` (set by
  ``tests/test_notebooks.py``) selects reduced sample counts so that every notebook runs in
  seconds; without it the notebooks use the full settings reported in their text.
* :func:`save`: writes a figure as PNG to ``notebooks/figures/`` (or to the folder named by
  ``PDEVAL_FIGURES``, which the test points at a temporary folder).
* :func:`load_cranfield`, :func:`complete_qrels`, :func:`bm25_runs`, :func:`pl2_runs`: the
  Cranfield collection shipped in ``data/cranfield/`` (see its PROVENANCE.md), BM25 runs over it
  made with the ``bm25s`` library and PL2 runs made by :mod:`retrieval`.
* :func:`collection`: a full public collection (downloaded once) with the full settings, the
  bundled CLEF 2018 sample in fast mode; :func:`mirror`: the local copy of the collections.
* :func:`split_topics`: a fixed, seeded split of a topic list into two halves.
* :func:`claims`, :func:`versus`, :func:`check`, :func:`at_least`, :func:`at_most`,
  :func:`not_worse`, :func:`combine`, :func:`identity`, :func:`construction`, :func:`own`,
  :func:`untestable`, :func:`tally`: the "paper vs ours" table every notebook ends with (findings
  and, apart from them, identity checks, by-construction consequences and pdeval's own rows);
  every verdict is computed from the results and states the tolerance that decided it ("no
  difference (paper: X > Y)" where the paper's difference is within it, "undecided" where the
  data cannot decide), and a threshold from a paper is compared with its noise.
* :func:`shared_data`, :func:`read_trec_qrels`, :func:`read_extract`: the real label sets of the
  shared data beside the repository (when present) and the small extracts in ``data/``.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

FAST = os.environ.get("PDEVAL_FAST", "").strip().lower() not in ("", "0", "false", "no")


def pick(full, fast):
    """``full`` normally, ``fast`` under ``PDEVAL_FAST=1``."""
    return fast if FAST else full


def repo_root() -> Path:
    """The repository root: the first parent of this file holding ``pyproject.toml``."""
    here = Path(__file__).resolve().parent
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").exists():
            return folder
    raise FileNotFoundError("pyproject.toml not found above the notebooks folder")


ROOT = repo_root()
FIGURES = Path(os.environ.get("PDEVAL_FIGURES") or ROOT / "notebooks" / "figures")


def save(fig, name: str, dpi: int = 120) -> Path:
    """Save ``fig`` as ``<FIGURES>/<name>.png`` and return the path."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.savefig(path, dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return path


#: collections a reproduction can run on (``PDEVAL_COLLECTION``); ``-top30``: the 30 runs with the
#: highest MAP on the full judgments, as Sakai (2007) used the top 30 runs of each NTCIR collection
COLLECTIONS = ("clef2018-full", "clef2015", "clef2015-top30", "trec-dl21")


def collection(name: str, *, sample: str = "clef2018"):
    """The collection a notebook studies: ``name`` with the full settings, the bundled ``sample``
    under ``PDEVAL_FAST=1``, or the one named by ``PDEVAL_COLLECTION`` (see :data:`COLLECTIONS`).

    Full collections are downloaded once by :func:`pdeval.datasets.load` (verified and cached);
    where the evaluation data kept beside the repository exists (``../shared/data``), it serves
    as the mirror. Duplicate documents dropped by a collection's policy are reported. Returns
    ``(dataset, name)``.
    """
    import pdeval

    name = os.environ.get("PDEVAL_COLLECTION") or name
    if FAST and not os.environ.get("PDEVAL_COLLECTION"):
        return pdeval.datasets.load(sample), sample
    base, _, top = name.partition("-top")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pdeval.errors.PdevalWarning)
        data = pdeval.datasets.load(base, mirror=mirror(), progress=False)
    dropped = [w for w in caught if issubclass(w.category, pdeval.errors.PdevalWarning)]
    if dropped:
        print(f"note: {len(dropped)} runs repeat documents within a topic; the first line of each was kept "
              f"(policy 'first', as pytrec_eval does; trec_eval refuses such runs)")
    if top:
        means = pdeval.summarize(pdeval.evaluate(data.runs, data.qrels, ["AP"]))
        keep = means.nlargest(int(top), "value")["run"]
        data = data._replace(runs=data.runs[data.runs["run"].isin(keep)].reset_index(drop=True))
    groups = identical_runs(data.runs)
    if groups:
        print("note: identical runs (the same documents in the same order on at least 90 % of the topics): "
              + "; ".join(" = ".join(g) for g in groups)
              + ". They stay in the rank correlations, as submitted runs: an identical pair is tied in every "
                "ranking (Kendall's τ_b counts it neither way), but each of its pairs with another run counts twice.")
    return data, name


def mirror() -> str | None:
    """The evaluation data kept beside the repository (``../shared/data``) as a mirror for
    :func:`pdeval.datasets.load`, or None where it is absent (the collections are downloaded)."""
    folder = shared_data(".")
    return str(folder.resolve()) if folder is not None else None


def identical_runs(runs: pd.DataFrame, share: float = 0.9) -> list[list[str]]:
    """Groups of (nearly) identical runs: runs that rank the same documents in the same order
    (scores ignored) on at least ``share`` of the topics, largest groups first (single-link);
    runs without a twin are left out."""
    ordered = runs.sort_values(["run", "query_id", "score", "doc_id"], ascending=[True, True, False, True], kind="stable")
    lists = ordered.groupby(["run", "query_id"], sort=True)["doc_id"].agg(lambda d: hash(tuple(d))).unstack("query_id")
    values, names = lists.to_numpy(), list(lists.index)
    same = (values[:, None, :] == values[None, :, :]).mean(axis=2) >= share
    groups, seen = [], set()
    for i, name in enumerate(names):
        if name in seen or same[i].sum() < 2:
            continue
        group, frontier = {i}, [i]
        while frontier:
            j = frontier.pop()
            for k in np.flatnonzero(same[j]):
                if k not in group:
                    group.add(k)
                    frontier.append(k)
        seen.update(names[k] for k in group)
        groups.append(sorted(names[k] for k in group))
    return sorted(groups, key=lambda g: (-len(g), g))


# --------------------------------------------------------------------------------------------
# Cranfield


@dataclass
class Cranfield:
    docs: pd.DataFrame  # doc_id, title, author, bib, text
    queries: pd.DataFrame  # query_id, original_id, text
    qrels: pd.DataFrame  # query_id, doc_id, relevance (1..4; relevant documents only)
    source_docs: pd.DataFrame  # query_id, doc_id: the document each question was written from


def load_cranfield(folder: Path | None = None) -> Cranfield:
    """Read ``data/cranfield/``: documents, queries, graded qrels and source documents."""
    folder = Path(folder) if folder is not None else ROOT / "data" / "cranfield"
    with gzip.open(folder / "docs.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = pd.DataFrame([json.loads(line) for line in handle])
    queries = pd.read_csv(folder / "queries.tsv", sep="\t", dtype=str, keep_default_na=False)
    qrels = pd.read_csv(
        folder / "qrels.txt", sep=" ", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str, "relevance": np.int64},
    ).drop(columns="iteration")
    source = pd.read_csv(folder / "source_docs.tsv", sep="\t", dtype=str)
    return Cranfield(docs, queries, qrels, source)


def complete_qrels(cran: Cranfield) -> pd.DataFrame:
    """The complete-judgment view: every document judged for every query (grade from the qrels,
    0 otherwise), except the query's source document, which is left out."""
    topics = cran.queries["query_id"].to_numpy()
    docs = cran.docs["doc_id"].to_numpy()
    full = pd.DataFrame({"query_id": np.repeat(topics, len(docs)), "doc_id": np.tile(docs, len(topics))})
    full = full.merge(cran.qrels, on=["query_id", "doc_id"], how="left")
    full["relevance"] = full["relevance"].fillna(0).astype(np.int64)
    source = cran.source_docs.assign(_source=True)
    full = full.merge(source, on=["query_id", "doc_id"], how="left")
    return full[full["_source"].isna()].drop(columns="_source").reset_index(drop=True)


def bm25_runs(cran: Cranfield, b_values: Sequence[float], *, k1: float = 1.2, depth: int = 1000) -> pd.DataFrame:
    """BM25 runs (the ``bm25s`` library, Lucene IDF) for every b in ``b_values``.

    Documents are indexed by their ``text`` field (which repeats the title), lower-cased and
    split by ``bm25s``'s tokeniser with its English stopword list, without stemming. Each query
    keeps its top ``depth`` documents with a positive score (a document sharing no term with the
    query is not retrieved). Returns a run frame ``run, b, query_id, doc_id, score``; ``run`` is
    ``"BM25"`` and ``b`` tells the systems apart (pass ``by="b"`` to :func:`pdeval.evaluate`).
    """
    with warnings.catch_warnings():  # bm25s imports tqdm.auto, which warns without ipywidgets
        warnings.simplefilter("ignore")
        import bm25s

    corpus = bm25s.tokenize(cran.docs["text"].tolist(), stopwords="en", show_progress=False)
    queries = bm25s.tokenize(cran.queries["text"].tolist(), stopwords="en", show_progress=False, return_ids=False)
    doc_ids = cran.docs["doc_id"].to_numpy()
    topic_ids = cran.queries["query_id"].to_numpy()
    k = min(depth, len(doc_ids))
    frames = []
    for b in b_values:
        model = bm25s.BM25(k1=k1, b=float(b))
        model.index(corpus, show_progress=False)
        found, scores = model.retrieve(queries, k=k, show_progress=False, n_threads=1)
        frame = pd.DataFrame(
            {
                "run": "BM25",
                "b": float(b),
                "query_id": np.repeat(topic_ids, k),
                "doc_id": doc_ids[found.ravel()],
                "score": scores.ravel().astype(np.float64),
            }
        )
        frames.append(frame[frame["score"] > 0])
    return pd.concat(frames, ignore_index=True)


def pl2_runs(cran: Cranfield, c_values: Sequence[float], *, depth: int = 1000) -> pd.DataFrame:
    """PL2 runs (:mod:`retrieval`, Terrier's form of Amati & van Rijsbergen's PL2) for every c in
    ``c_values``.

    The terms are exactly those :func:`bm25_runs` indexes (``bm25s``'s tokeniser, English stopwords,
    no stemming), so BM25 and PL2 differ only in their weighting. Each query keeps its top ``depth``
    documents among those sharing a term with it. Returns a run frame ``run, c, query_id, doc_id,
    score``; ``run`` is ``"PL2"`` and ``c`` tells the systems apart.
    """
    from retrieval import pl2_scores, term_matrix, top_k

    with warnings.catch_warnings():  # bm25s imports tqdm.auto, which warns without ipywidgets
        warnings.simplefilter("ignore")
        import bm25s

    def tokens(texts):
        return bm25s.tokenize(texts, stopwords="en", show_progress=False, return_ids=False)

    docs, vocabulary = term_matrix(tokens(cran.docs["text"].tolist()))
    queries, _ = term_matrix(tokens(cran.queries["text"].tolist()), vocabulary)
    doc_ids = cran.docs["doc_id"].to_numpy()
    topic_ids = cran.queries["query_id"].to_numpy()
    frames = []
    for c in c_values:
        query, doc, score = top_k(*pl2_scores(docs, queries, float(c)), depth)
        frames.append(pd.DataFrame({"run": "PL2", "c": float(c), "query_id": topic_ids[query],
                                    "doc_id": doc_ids[doc], "score": score}))
    return pd.concat(frames, ignore_index=True)


def split_topics(topics: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """Shuffle ``topics`` (sorted first) with ``seed`` and cut them into two halves A and B."""
    ordered = sorted(set(map(str, topics)), key=lambda t: (len(t), t))
    order = np.random.default_rng(seed).permutation(len(ordered))
    shuffled = [ordered[i] for i in order]
    half = (len(shuffled) + 1) // 2
    return sorted(shuffled[:half], key=lambda t: (len(t), t)), sorted(shuffled[half:], key=lambda t: (len(t), t))


# --------------------------------------------------------------------------------------------
# label sets: the shared data beside the repository, or the extracts in data/


def shared_data(name: str) -> Path | None:
    """``../shared/data/<name>`` next to the repository if it exists (full runs), else None."""
    folder = ROOT.parent / "shared" / "data" / name
    return folder if folder.is_dir() else None


def read_trec_qrels(path) -> pd.DataFrame:
    """A four-column TREC qrels file (``query_id iteration doc_id relevance``) as a qrels frame."""
    return pd.read_csv(
        path, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str, "relevance": np.int64},
    ).drop(columns="iteration")


def read_extract(name: str, file: str = "labels.tsv.gz") -> pd.DataFrame:
    """A table of ``data/<name>/`` (see its PROVENANCE.md), ids as strings."""
    return pd.read_csv(ROOT / "data" / name / file, sep="\t", dtype={"query_id": str, "doc_id": str, "run": str})


# --------------------------------------------------------------------------------------------
# paper vs ours


@dataclass(frozen=True)
class Verdict:
    """Does our result agree with a finding of the paper, and by which rule was that decided?

    ``outcome`` is ``"yes"``, ``"no"``, ``"no difference"`` (the difference the paper reports
    is absent: within the stated tolerance), ``"mixed"`` (some parts yes, some no),
    ``"partly"`` (some parts yes, the others no difference), ``"undecided"`` (the rule cannot
    reach a decision with the data: the value lies within the noise of the paper's threshold,
    or a non-inferiority test has no power) or ``"not testable"`` (the data cannot test the
    finding; ``tolerance`` says why). ``claim`` is the paper's direction (e.g.
    ``"RankEff > bpref-10"``), ``tolerance`` says how the comparison was decided. ``kind`` is
    one of :data:`KINDS`: ``"finding"`` (an empirical result of the paper, which the data could
    contradict), ``"identity"`` (a theorem, definition or property that can fail only through a
    bug), ``"construction"`` (a finding that follows mechanically from the set-up, e.g. unjudged
    documents scored nonrelevant under random reduction: it can hardly fail, so it is counted
    apart) or ``"own"`` (a test of pdeval's own extension or of a target set by the project, not
    of the paper's method and claim). ``limit`` names the data limit that drives a
    not-reproduced verdict (empty: none).
    """

    outcome: str
    claim: str = ""
    tolerance: str = ""
    kind: str = "finding"
    paper: str = ""  # another paper the row belongs to (empty: the notebook's own)
    limit: str = ""  # the data limit behind a not-reproduced verdict

    def __str__(self) -> str:
        if self.outcome in ("no difference", "undecided") and self.claim:
            return f"{self.outcome} (paper: {self.claim})"
        return self.outcome

    def as_(self, kind: str | None = None, *, limit: str | None = None, paper: str | None = None) -> "Verdict":
        """The same verdict with another ``kind`` (one of :data:`KINDS`), data ``limit`` or ``paper``."""
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        return replace(self, kind=self.kind if kind is None else kind,
                       limit=self.limit if limit is None else limit, paper=self.paper if paper is None else paper)


#: the kinds of verdict rows, each counted apart in the tallies
KINDS = ("finding", "identity", "construction", "own")

#: differences this small are floating-point ties, never a win (see :func:`versus`)
FLOAT_TIE = 1e-12


def versus(a, b, *, tol: float, claim: str, noise: bool = True, se: float | None = None) -> Verdict:
    """Is ``a`` larger than ``b`` by more than the tolerance? The paper claims ``a > b``.

    Single numbers: ``"yes"`` if ``a - b > tol``, ``"no"`` if ``a - b < -tol``, else
    ``"no difference"``. Arrays of paired values (one per sample, e.g. the same reduced qrels
    scored by two measures): the mean paired difference is compared with ``tol`` plus two
    standard errors of the mean difference (``noise=False`` leaves the standard errors out),
    so a difference within the sampling noise is never a win. ``se``: the standard error of
    the difference of two single numbers (e.g. over topics), added twice to the tolerance in the
    same way. An empirical finding needs a positive ``tol`` (the paper reproductions never pass
    0; exact relations are :func:`identity` checks), and a difference that exceeds the tolerance
    by no more than :data:`FLOAT_TIE` is a tie (floating-point noise never decides a verdict).
    """
    a, b = np.atleast_1d(np.asarray(a, dtype=float)), np.atleast_1d(np.asarray(b, dtype=float))
    d = a - b
    margin, rule = float(tol) + FLOAT_TIE, f"|difference| > {tol:.3g}"
    if d.size > 1 and noise:
        se_ = float(d.std(ddof=1) / np.sqrt(d.size))
        margin += 2 * se_
        rule = f"mean paired difference > {tol:.3g} + 2 SE ({d.size} samples)"
    elif se is not None:
        margin += 2 * float(se)
        rule = f"|difference| > {tol:.3g} + 2 SE (SE {float(se):.3g})"
    mean = float(d.mean())
    outcome = "yes" if mean > margin else ("no" if mean < -margin else "no difference")
    return Verdict(outcome, claim, rule)


def _standard_error(value, se):
    """The mean of ``value`` and its standard error: ``se`` if given, else from the samples."""
    values = np.atleast_1d(np.asarray(value, dtype=float))
    if se is None:
        se = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else 0.0
    return float(values.mean()), float(se)


def at_least(value, limit: float, *, claim: str, se: float | None = None, what: str = "value") -> Verdict:
    """Is ``value`` at least ``limit`` (a threshold taken from a paper), given its noise?

    ``value`` is one number with its standard error ``se`` (e.g. over the topics or runs) or an
    array of samples (the standard error of their mean is used). ``"yes"`` if
    ``value - 2 SE >= limit``, ``"no"`` if ``value + 2 SE < limit``, else ``"undecided"`` (the
    data cannot tell the value from the threshold). Without noise (``se=0`` and one number) it is
    a plain comparison, and the tolerance says so.
    """
    mean, se_ = _standard_error(value, se)
    if se_ == 0:
        return Verdict("yes" if mean >= limit - FLOAT_TIE else "no", claim, f"{what} {mean:.3g} ≥ {limit:.3g} (no noise term)")
    low, high = mean - 2 * se_, mean + 2 * se_
    outcome = "yes" if low >= limit - FLOAT_TIE else ("no" if high < limit - FLOAT_TIE else "undecided")
    return Verdict(outcome, claim, f"{what} {mean:.3g} ± 2 SE ({se_:.2g}) vs {limit:.3g}")


def at_most(value, limit: float, *, claim: str, se: float | None = None, what: str = "value") -> Verdict:
    """Is ``value`` at most ``limit``, given its noise? The mirror of :func:`at_least`."""
    mean, se_ = _standard_error(value, se)
    verdict = at_least(-mean, -limit, claim=claim, se=se_, what=what)
    if se_ == 0:
        return replace(verdict, tolerance=f"{what} {mean:.3g} ≤ {limit:.3g} (no noise term)")
    return replace(verdict, tolerance=f"{what} {mean:.3g} ± 2 SE ({se_:.2g}) vs {limit:.3g}")


def not_worse(a, b, *, margin: float, claim: str, se: float | None = None) -> Verdict:
    """Non-inferiority: is ``a`` at most ``margin`` below ``b``? (The paper claims ``a ≳ b``.)

    With paired samples (arrays) or a standard error ``se`` of the difference: ``"yes"`` if the
    mean difference minus two standard errors is above ``-margin``, ``"no"`` if the mean
    difference plus two standard errors is below ``-margin``, else ``"undecided"``: the test
    has no power to decide (e.g. an exact tie whose two standard errors exceed the margin).
    """
    a, b = np.atleast_1d(np.asarray(a, dtype=float)), np.atleast_1d(np.asarray(b, dtype=float))
    mean, se_ = _standard_error(a - b, se)
    outcome = ("yes" if mean - 2 * se_ > -margin - FLOAT_TIE else
               "no" if mean + 2 * se_ < -margin - FLOAT_TIE else "undecided")
    size = f", {(a - b).size} samples" if (a - b).size > 1 else ""
    return Verdict(outcome, claim, f"non-inferiority: mean difference {mean:+.3g} ± 2 SE ({se_:.2g}{size}) vs -{margin:.3g}")


def identity(condition: bool, *, tolerance: str, claim: str = "", paper: str = "") -> Verdict:
    """A check of a theorem, definition or property (it holds by construction unless there is a
    bug): ``"yes"`` if ``condition`` holds. Kept apart from the findings in the tallies;
    ``paper`` names the paper it belongs to when that is not the notebook's."""
    return Verdict("yes" if bool(condition) else "no", claim, tolerance, kind="identity", paper=paper)


def construction(verdict: Verdict, why: str) -> Verdict:
    """A finding that follows mechanically from the set-up (``why`` says how), counted apart from
    the findings as identities are."""
    return replace(verdict, kind="construction", tolerance=f"{verdict.tolerance}; by construction: {why}".lstrip("; "))


def own(verdict: Verdict, what: str) -> Verdict:
    """A row that tests pdeval's own extension or a target the project set (``what`` says which),
    not the paper's method and claim: reported as pdeval's row, in its own count."""
    return replace(verdict, kind="own", paper="pdeval", tolerance=f"{verdict.tolerance}; pdeval's own: {what}".lstrip("; "))


def untestable(reason: str, *, claim: str = "") -> Verdict:
    """The data cannot test the finding (``reason`` says why): neither reproduced nor not."""
    return Verdict("not testable", claim, reason)


def check(condition: bool | None = None, *, tolerance: str = "", claim: str = "", paper: str = "",
          value=None, limit: float | None = None, se: float | None = None, what: str = "value") -> Verdict:
    """A verdict from a condition computed with an explicit threshold, named in ``tolerance``.

    With ``value=`` and ``limit=`` instead of a condition: is the value at least the limit given
    its standard error ``se`` (or the samples' standard error): yes / no / undecided, as
    :func:`at_least`.
    """
    if condition is None:
        if value is None or limit is None:
            raise TypeError("check() needs a condition, or value= and limit=")
        verdict = at_least(value, limit, claim=claim, se=se, what=what)
        return replace(verdict, paper=paper, tolerance="; ".join(t for t in (verdict.tolerance, tolerance) if t))
    return Verdict("yes" if bool(condition) else "no", claim, tolerance, paper=paper)


#: what each outcome says about a claim's parts (a nested "mixed" holds a yes and a no)
_ATOMS = {"yes": {"yes"}, "no": {"no"}, "no difference": {"no difference"}, "mixed": {"yes", "no"},
          "partly": {"yes", "no difference"}, "undecided": {"undecided"}}


def combine(verdicts, *, claim: str = "") -> Verdict:
    """One verdict for a claim made of several comparisons (see :func:`versus`).

    ``verdicts``: a sequence of verdicts, or a mapping ``{part: verdict}`` naming the parts; then
    the tolerance says which parts failed (``failed: part (no)``). All yes: yes; yes and no (a
    nested ``mixed`` included): mixed; yes and no difference only: partly; no yes: no (or no
    difference); an undecided part with no failing part: undecided. A not testable part makes the
    whole not testable. The kind is kept when all parts share it; the data limits are joined.
    """
    named = dict(verdicts) if isinstance(verdicts, dict) else None
    verdicts = list(named.values()) if named is not None else list(verdicts)
    found = set().union(*(_ATOMS.get(v.outcome, {v.outcome}) for v in verdicts))
    rules = list(dict.fromkeys(v.tolerance for v in verdicts if v.tolerance))
    claims_ = list(dict.fromkeys(v.claim for v in verdicts if v.claim))
    claim = claim or "; ".join(claims_)
    kinds = {v.kind for v in verdicts}
    kind = kinds.pop() if len(kinds) == 1 else "finding"
    limit = "; ".join(dict.fromkeys(v.limit for v in verdicts if v.limit))
    if "not testable" in found:
        return Verdict("not testable", claim, "; ".join(dict.fromkeys(v.tolerance for v in verdicts if v.outcome == "not testable")),
                       kind=kind, limit=limit)
    failing = found - {"yes"}
    if not failing:
        outcome = "yes"
    elif "no" in found:
        outcome = "mixed" if "yes" in found else "no"
    elif "undecided" in found:
        outcome = "undecided"
    elif "yes" in found:
        outcome = "partly"
    else:
        outcome = "no difference"
    if named is not None:
        failed = [f"{part} ({v})" for part, v in named.items() if v.outcome != "yes"]
        rules = [f"{part}: {v.tolerance}" for part, v in named.items() if v.tolerance]
        if failed:
            rules.insert(0, "failed: " + ", ".join(failed))
    return Verdict(outcome, claim, "; ".join(rules), kind=kind, limit=limit)


def claims(rows: Sequence[tuple[str, str, Verdict]]) -> pd.DataFrame:
    """A table ``paper's finding | ours | agrees | tolerance`` from (claim, numbers, verdict) triples.

    Every verdict is a :class:`Verdict` from :func:`versus`, :func:`check` or :func:`combine`,
    computed from the results (so the table stays true when sample counts change) and naming
    the rule that decided it. Sets pandas' ``display.max_colwidth`` to None so that the
    sentences are shown whole.
    """
    for claim, _, verdict in rows:
        if not isinstance(verdict, Verdict):
            raise TypeError(f"the verdict of {claim!r} must be a Verdict stating its tolerance")
    pd.set_option("display.max_colwidth", None)
    table = pd.DataFrame([(c, o, str(v), v.tolerance, v.kind, v.paper, v.limit if v.outcome != "yes" else "")
                          for c, o, v in rows],
                         columns=["paper's finding", "ours", "agrees", "tolerance", "kind", "paper", "data limit"])
    if os.environ.get("PDEVAL_VERDICTS"):  # scripts/run_notebooks.py collects the verdicts of full runs
        table.to_csv(os.environ["PDEVAL_VERDICTS"], index=False)
    return table


def tally(table: pd.DataFrame) -> dict[str, int]:
    """Counts over the empirical findings: reproduced (``yes``), partly (``partly``, ``mixed``),
    not (``no``, ``no difference``), undecided and not testable; and apart from them the identity
    checks (``kind == "identity"``), the by-construction consequences (``"construction"``) and
    pdeval's own rows (``"own"``), each with how many of them held. A row the collection cannot
    test counts as a not-testable finding whatever its kind (a check that was not run neither held
    nor failed). A table without a ``kind`` column holds findings only."""
    kind = table["kind"] if "kind" in table.columns else pd.Series("finding", index=table.index)
    untestable = table["agrees"].str.startswith("not testable")
    kind = kind.replace("", "finding").where(~untestable, "finding")
    outcome = table["agrees"].str.split(" ").str[0]
    found = outcome[kind == "finding"]
    untested = untestable[kind == "finding"]
    undecided = found == "undecided"
    counts = {"findings": int(len(found)),
              "reproduced": int((found == "yes").sum()),
              "partly": int(found.isin(["partly", "mixed"]).sum()),
              "not": int((~found.isin(["yes", "partly", "mixed"]) & ~untested & ~undecided).sum()),
              "undecided": int(undecided.sum()),
              "untested": int(untested.sum())}
    for name, key in (("checks", "identity"), ("construction", "construction"), ("own", "own")):
        rows = outcome[kind == key]
        counts[name] = int(len(rows))
        counts[f"{name}_held"] = int((rows == "yes").sum())
    return counts
