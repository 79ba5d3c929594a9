"""Property tests of the measures (MEASURES.md M20) over random rankings and random qrels.

Every example is a small multi-topic collection: qrels with binary or graded levels, ``-1``
(pooled but unjudged) entries, documents absent from the qrels, tied scores (ties are broken
by doc id, descending) and relevant documents the run does not retrieve. Each example is
evaluated with many measures in one ``pdeval.evaluate`` call.

Besides the identities of M20 the file checks the bounds [0, 1] of every measure, that the
prime means judged_only everywhere, and compares the kernels of the new measures with
direct, loop-based implementations written below from the formulas of MEASURES.md.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb
from typing import Callable, Optional

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import pdeval

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-9
ABSENT = "absent"


# ---- random collections -----------------------------------------------------------------------
@st.composite
def collections(draw, graded: bool = False, pooled: bool = True, unjudged_in_run: bool = True, max_docs: int = 12):
    """(run, qrels) frames of 1–3 topics.

    Each candidate document of a topic gets a status (a level, ``-1`` or absent from the
    qrels), whether the run retrieves it (unretrieved qrels documents are common) and a score
    from a small set (many ties).
    """
    levels = [0, 1, 2, 3] if graded else [0, 1]
    statuses: list = list(levels)
    if pooled:
        statuses.append(-1)
    if unjudged_in_run:
        statuses.append(ABSENT)
    n_topics = draw(st.integers(1, 3))
    qrows, rrows = [], []
    for t in range(n_topics):
        qid = f"t{t}"
        docs = draw(
            st.lists(
                st.tuples(st.sampled_from(statuses), st.sampled_from([True, True, True, False]), st.integers(0, 5)),
                min_size=1,
                max_size=max_docs,
            )
        )
        for i, (status, retrieved, score) in enumerate(docs):
            doc = f"d{i}"
            if status != ABSENT:
                qrows.append((qid, doc, int(status)))
            if status == -1 and not unjudged_in_run:
                retrieved = False
            if retrieved or status == ABSENT:
                rrows.append((qid, doc, float(score)))
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(rrows, columns=["query_id", "doc_id", "score"])
    if qrels.empty:  # evaluate needs some qrels
        qrels = pd.DataFrame([("t0", "zz", 0)], columns=["query_id", "doc_id", "relevance"])
    if not set(run["query_id"]) & set(qrels["query_id"]):  # evaluate refuses frames without a shared topic
        run = pd.concat([run, pd.DataFrame([(qrels["query_id"].iloc[0], "zz", 1.0)], columns=["query_id", "doc_id", "score"])])
    return run, qrels


def table(run: pd.DataFrame, qrels: pd.DataFrame, measures: list, **options) -> dict:
    """{(run, [variant,] query_id, canonical measure): value} with undefined = NaN."""
    result = pdeval.evaluate(run, qrels, measures, undefined="nan", **options)
    keys = [c for c in result.columns if c not in ("measure", "value")]
    out = {}
    for row in result.itertuples(index=False):
        row = row._asdict()
        out[tuple(row[k] for k in keys) + (row["measure"],)] = row["value"]
    return out


def canonical(measure: str) -> str:
    return str(pdeval.parse_measure(measure))


def same(a: float, b: float, tol: float = TOL) -> bool:
    """Equal within tol, or both NaN (both undefined)."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return abs(a - b) <= tol


def topic_counts(qrels: pd.DataFrame) -> dict:
    """{query_id: (R, N)} for θ = 1."""
    out = {}
    for qid, group in qrels.groupby("query_id"):
        rel = group["relevance"].to_numpy()
        out[qid] = (int((rel >= 1).sum()), int(((rel >= 0) & (rel < 1)).sum()))
    return out


# ---- M20.1 bpref = bpref_R (R <= N), = bpref_N (R >= N) ----------------------------------------
@SETTINGS
@given(collections())
def test_bpref_is_bpref_R_or_bpref_N(data) -> None:
    run, qrels = data
    values = table(run, qrels, ["Bpref", "bpref_R", "bpref_N"])
    counts = topic_counts(qrels)
    for (_, qid, measure), v in values.items():
        if measure != "Bpref":
            continue
        num_rel, num_nonrel = counts[qid]
        if num_rel <= num_nonrel:
            assert same(v, values[("run", qid, "bpref_R")]), (qid, counts[qid])
        if num_rel >= num_nonrel:
            assert same(v, values[("run", qid, "bpref_N")]), (qid, counts[qid])


# ---- M20.2 RankEff = bpref_N when N > 0 ---------------------------------------------------------
@SETTINGS
@given(collections(graded=True))
def test_rankeff_is_bpref_n(data) -> None:
    run, qrels = data
    values = table(run, qrels, ["RankEff", "bpref_N", "RankEff(unretrieved=ignore)"])
    counts = topic_counts(qrels)
    for (_, qid, measure), v in values.items():
        if measure != "RankEff":
            continue
        num_rel, num_nonrel = counts[qid]
        if num_nonrel > 0:
            assert same(v, values[("run", qid, "bpref_N")])
        else:
            assert np.isnan(v)
        # the unadjusted form never exceeds the adjusted one
        ignore = values[("run", qid, "RankEff(unretrieved=ignore)")]
        assert same(ignore, v) or ignore <= v + 1e-12


# ---- M20.3 binary gains: rpref = bpref variants -------------------------------------------------
BINARY_PAIRS = [
    ("rpref_N", "bpref_N"),
    ("rpref_relative", "bpref_relative"),
    ("rpref_relative2", "AP'"),
    ("npref(n=2)", "bpref_relative"),
    ("npref(n=2, norm=N)", "bpref_N"),
    ("npref(n=2, norm=relative2)", "AP'"),
]


@SETTINGS
@given(collections(graded=False), st.booleans())
def test_binary_rpref_identities(data, as_graded) -> None:
    run, qrels = data
    options = {}
    if as_graded:  # graded levels mapped to gain 1: still binary gains
        qrels = qrels.assign(relevance=np.where(qrels["relevance"] == 1, np.int64(2), qrels["relevance"]))
        options = {"gains": {2: 1}, "rel": 1}
    measures = sorted({m for pair in BINARY_PAIRS for m in pair})
    values = table(run, qrels, measures, **options)
    topics = {key[1] for key in values}
    for qid in topics:
        for graded_name, binary_name in BINARY_PAIRS:
            a = values[("run", qid, canonical(graded_name) if not options else _with_gains(graded_name, options))]
            b = values[("run", qid, canonical(binary_name))]
            assert same(a, b), (qid, graded_name, binary_name, a, b)


def _with_gains(measure: str, options: dict) -> str:
    return str(pdeval.parse_measure(measure, gains=options["gains"]))


# ---- M20.4 Q(β=0) = AP, AP' = AP(condensed list), subAP(p=1) = indAP, indAP = AP without -1 ----
@SETTINGS
@given(collections(graded=True))
def test_ap_family_identities(data) -> None:
    run, qrels = data
    # qrels variant "nopool": the same judgments without the -1 entries (in one evaluate call)
    variants = pd.concat(
        [qrels.assign(sample="pool"), qrels[qrels["relevance"] >= 0].assign(sample="nopool")], ignore_index=True
    )
    judged = qrels[qrels["relevance"] >= 0]
    judged_pairs = set(zip(judged["query_id"], judged["doc_id"]))
    condensed_run = run[[pair in judged_pairs for pair in zip(run["query_id"], run["doc_id"])]]
    both = pd.concat([run.assign(run="full"), condensed_run.assign(run="condensed")], ignore_index=True)
    values = table(both, variants, ["AP", "AP'", "Q(beta=0)", "subAP(p=1)", "indAP", "subAP(p=auto)"])
    for (name, sample, qid, measure), v in values.items():
        key = lambda m: (name, sample, qid, m)  # noqa: E731
        if measure == "AP":
            assert same(values[key("Q(beta=0)")], v)
        if measure == "subAP(p=1)":
            assert same(values[key("indAP")], v)
        if sample == "nopool" and measure == "indAP":
            assert same(values[key("AP")], v)
            assert same(values[key("subAP(p=auto)")], v)  # no pooled entry: p = 1
        if name == "full" and measure == "AP'" and (("condensed", sample, qid, "AP") in values):
            assert same(values[("condensed", sample, qid, "AP")], v)


# ---- M20.5 without unjudged documents in the run, M' = M ---------------------------------------
PRIME_EQUAL = ["AP", "Q", "nDCG", "nDCG@5", "nDCG(dcg=sakai)", "nDCG(dcg=sakai, l=4)", "Q(beta=3)", "P@5", "Rprec"]


@SETTINGS
@given(collections(graded=True, unjudged_in_run=False))
def test_primes_equal_without_unjudged(data) -> None:
    run, qrels = data
    values = table(run, qrels, PRIME_EQUAL + [pdeval.parse_measure(m, judged_only=True) for m in PRIME_EQUAL])
    for measure in PRIME_EQUAL:
        prime = pdeval.parse_measure(measure, judged_only=True)
        for (name, qid, m), v in values.items():
            if m == canonical(measure):
                assert same(values[(name, qid, str(prime))], v), (qid, measure)


# ---- M20.6 SWAP ---------------------------------------------------------------------------------
@st.composite
def swap_cases(draw):
    """One topic with distinct scores, and a (higher NONREL, lower REL) pair of positions."""
    docs = draw(
        st.lists(st.tuples(st.sampled_from([0, 1, -1, ABSENT]), st.booleans()), min_size=2, max_size=14).filter(
            lambda d: any(s == 0 and r for s, r in d) and any(s == 1 and r for s, r in d)
        )
    )
    order = draw(st.permutations(range(len(docs))))
    retrieved = [i for i in order if docs[i][1] or docs[i][0] == ABSENT]
    positions = {i: p for p, i in enumerate(retrieved)}
    pairs = [
        (positions[i], positions[j])
        for i in retrieved
        for j in retrieved
        if docs[i][0] == 0 and docs[j][0] == 1 and positions[i] < positions[j]
    ]
    assume(pairs)
    high, low = draw(st.sampled_from(pairs))
    return docs, retrieved, high, low


@SETTINGS
@given(swap_cases())
def test_swap_property(case) -> None:
    docs, retrieved, high, low = case
    qrels = pd.DataFrame(
        [("q", f"d{i}", s) for i, (s, _) in enumerate(docs) if s != ABSENT], columns=["query_id", "doc_id", "relevance"]
    )
    swapped = list(retrieved)
    swapped[high], swapped[low] = swapped[low], swapped[high]
    rows = []
    for name, ranking in (("before", retrieved), ("after", swapped)):
        rows += [(name, "q", f"d{i}", float(len(ranking) - p)) for p, i in enumerate(ranking)]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    measures = ["AP", "RankEff", "bpref10", "Bpref", "bpref_R", "bpref_N", "AP'", "indAP"]
    values = table(run, qrels, measures)
    for m in ("AP", "RankEff", "AP'", "indAP"):
        assert values[("after", "q", m)] > values[("before", "q", m)] + 1e-12, m
    for m in ("bpref10", "Bpref", "bpref_R", "bpref_N"):  # may stay unchanged, never decrease
        assert values[("after", "q", m)] >= values[("before", "q", m)] - 1e-12, m


# ---- M20.7 subAP and infAP in [0, 1]; infAP non-increasing in c ----------------------------------
C_VALUES = [0.25, 0.5, 1, 1.5, 2, 2.5, 4]


@SETTINGS
@given(collections(), st.booleans())
def test_estimators_bounds_and_infap_monotone_in_c(data, pool_aware) -> None:
    run, qrels = data
    infap = [f"infAP(c={c}, pool_aware={pool_aware})" for c in C_VALUES]
    subap = ["subAP(p=0.1)", "subAP(p=0.3)", "subAP(p=0.5)", "subAP(p=0.9)", "subAP(p=1)", "subAP(p=auto)"]
    values = table(run, qrels, infap + subap)
    topics = {key[1] for key in values}
    for qid in topics:
        series = [values[("run", qid, canonical(m))] for m in infap]
        for c, v in zip(C_VALUES, series):
            if c >= 1 and not np.isnan(v):
                assert -1e-12 <= v <= 1 + 1e-12
        for a, b in zip(series, series[1:]):
            assert same(a, b, 1e-12) or b <= a + 1e-12
        for m in subap:
            v = values[("run", qid, canonical(m))]
            assert np.isnan(v) or -1e-12 <= v <= 1 + 1e-12, (m, v)


# ---- bounds of every measure, and primes = judged_only ------------------------------------------
BOUNDED = [
    "P@3", "Rprec", "AP", "AP@3", "R@3", "RR", "nDCG", "nDCG@3", "Bpref", "Bpref(variant=legacy)", "infAP",
    "Judged@3", "bpref10", "bpref10(denominator=fixed)", "bpref10(denominator=legacy)", "bpref_R", "bpref_N",
    "RankEff", "RankEff(unretrieved=ignore)", "bpref_relative", "indAP", "subAP(p=0.3)", "subAP(p=auto)",
    "rpref_N", "rpref_relative", "rpref_relative2", "npref", "npref(n=3, norm=N)", "npref(n=8, norm=relative2)",
    "npref(n=2)", "Q", "Q(beta=0)", "Q(beta=5)", "nDCG(dcg=sakai)", "nDCG(dcg=sakai, l=3, base=3)",
    "rpref_N(gain_max=5)",
]
COUNTS = ["NumRet", "NumRel", "NumRelRet"]


@SETTINGS
@given(collections(graded=True))
def test_every_measure_in_unit_interval(data) -> None:
    run, qrels = data
    measures = BOUNDED + [pdeval.parse_measure(m, judged_only=True) for m in BOUNDED]
    values = table(run, qrels, measures)
    for key, v in values.items():
        assert np.isnan(v) or -1e-12 <= v <= 1 + 1e-12, (key, v)


@SETTINGS
@given(collections(graded=True))
def test_prime_is_judged_only_and_the_condensed_list(data) -> None:
    """For every list measure M: M' = M(judged_only=True) = M on the run without unjudged docs."""
    run, qrels = data
    judged = qrels[qrels["relevance"] >= 0]
    judged_pairs = set(zip(judged["query_id"], judged["doc_id"]))
    condensed_run = run[[pair in judged_pairs for pair in zip(run["query_id"], run["doc_id"])]]
    both = pd.concat([run.assign(run="full"), condensed_run.assign(run="condensed")], ignore_index=True)
    measures = BOUNDED + COUNTS
    primes = [pdeval.parse_measure(m, judged_only=True) for m in measures]
    # complete=True: a topic whose condensed list is empty is evaluated as an empty ranking
    values = table(both, qrels, measures + primes, complete=True)
    judged_only = table(run, qrels, measures, judged_only=True, complete=True)
    for measure, prime in zip(measures, primes):
        name, prime_name = canonical(measure), str(prime)
        assert prime_name.split("(")[0].split("@")[0].endswith("'")
        for (which, qid, m), v in values.items():
            if which != "full" or m != prime_name:
                continue
            assert same(judged_only[("run", qid, prime_name)], v), (measure, qid)
            if not condensed_run.empty:  # else there is no "condensed" system to compare with
                assert same(values[("condensed", qid, name)], v), (measure, qid)


# ---- independent loop-based implementations ------------------------------------------------------
def trec_sorted(items: list) -> list:
    """Doc ids by score descending, ties by doc id descending (MEASURES.md 0.3)."""
    by_doc = sorted(items, key=lambda x: x[0], reverse=True)
    return [d for d, _ in sorted(by_doc, key=lambda x: -x[1])]


class Topic:
    """One topic's ranked judgments and qrels, θ = 1, default gains (gain = level)."""

    def __init__(self, ranking: list, qrels: dict, gain_max: int):
        self.levels = [qrels.get(d, -2) for d in ranking]  # -2 absent, -1 pooled
        self.judged = [v for v in qrels.values() if v >= 0]
        self.pooled = sum(1 for v in qrels.values() if v < 0)
        self.R = sum(1 for v in self.judged if v >= 1)
        self.N = sum(1 for v in self.judged if v == 0)
        self.G = gain_max


def ref_bpref10(t: Topic) -> Optional[Fraction]:
    if t.R == 0:
        return None
    K = t.R + 10
    total, na = Fraction(0), 0
    for v in t.levels:
        if v >= 1:
            total += 1 if na == 0 else 1 - Fraction(min(na, K), min(t.N, K))
        elif v == 0:
            na += 1
    return total / t.R


def ref_bpref_r(t: Topic) -> Optional[Fraction]:
    if t.R == 0:
        return None
    total, na = Fraction(0), 0
    for v in t.levels:
        if v >= 1:
            total += 1 - Fraction(min(t.R, na), t.R)
        elif v == 0:
            na += 1
    return total / t.R


def ref_rankeff(t: Topic, ignore: bool = False) -> Optional[Fraction]:
    """Ahlgren & Grönqvist: I(d) = judged nonrelevant ranked below d (unretrieved ones below)."""
    if t.R == 0 or t.N == 0:
        return None
    retrieved_nonrel = sum(1 for v in t.levels if v == 0)
    unretrieved_nonrel = 0 if ignore else t.N - retrieved_nonrel
    total = Fraction(0)
    for i, v in enumerate(t.levels):
        if v >= 1:
            below = sum(1 for w in t.levels[i + 1 :] if w == 0) + unretrieved_nonrel
            total += Fraction(below, t.N)
    return total / t.R


def ref_bpref_relative(t: Topic) -> Optional[Fraction]:
    if t.R == 0:
        return None
    condensed = [v for v in t.levels if v >= 0]
    total = Fraction(0)
    for r, v in enumerate(condensed, start=1):
        if v >= 1 and r > 1:
            count = sum(1 for w in condensed[:r] if w >= 1)
            total += 1 - Fraction(r - count, r - 1)
    return total / t.R


def ref_ap(levels: list, R: int) -> Optional[Fraction]:
    if R == 0:
        return None
    total, count = Fraction(0), 0
    for k, v in enumerate(levels, start=1):
        if v >= 1:
            count += 1
            total += Fraction(count, k)
    return total / R


def ref_indap(t: Topic) -> Optional[Fraction]:
    return ref_ap([v for v in t.levels if v != -1], t.R)


def ref_subap(t: Topic, p: Fraction) -> Optional[Fraction]:
    if t.R == 0:
        return None
    kept = [v for v in t.levels if v != -1]
    total = Fraction(0)
    for k, v in enumerate(kept):
        if v >= 1:
            above = kept[: k + 1]
            r = sum(1 for w in above if w >= 1)
            n = sum(1 for w in above if w == 0)
            nd = sum(1 for w in above if w == -2)
            total += sum(comb(nd, i) * p**i * (1 - p) ** (nd - i) * Fraction(r, r + n + i) for i in range(nd + 1))
    return total / t.R


def ref_rpref(t: Topic, norm: str, phi: Callable[[int], Fraction]) -> Optional[Fraction]:
    """rpref on the condensed list with relevance values phi(level) (Sakai 2007, eqs. 2–8, 19)."""
    r_prime = sum((phi(v) for v in t.judged), Fraction(0))
    n_prime = sum((1 - phi(v) for v in t.judged), Fraction(0))
    if r_prime == 0:
        return None
    condensed = [phi(v) for v in t.levels if v >= 0]
    total = Fraction(0)
    for r, value in enumerate(condensed, start=1):
        if value == 0:
            continue
        penalty = sum(((value - w) / value for w in condensed[: r - 1] if w < value), Fraction(0))
        if norm == "N":
            total += value * (1 - (penalty / n_prime if n_prime else 0))
        elif norm == "relative":
            if r > 1:
                total += value * (1 - penalty / (r - 1))
        else:
            total += value * (1 - penalty / r)
    return total / r_prime


def ref_npref(t: Topic, n: int, norm: str) -> Optional[Fraction]:
    return ref_rpref(t, norm, lambda v: Fraction(min((n * max(v, 0)) // t.G, n - 1), n - 1) if t.G else Fraction(0))


def ref_q(t: Topic, beta: Fraction) -> Optional[Fraction]:
    ideal = sorted((v for v in t.judged if v > 0), reverse=True)
    if not ideal:
        return None
    total, cg, count = Fraction(0), 0, 0
    for r, v in enumerate(t.levels, start=1):
        g = max(v, 0)
        cg += g
        count += g > 0
        if g > 0:
            cg_ideal = sum(ideal[: min(r, len(ideal))])
            total += Fraction(beta * cg + count) / (beta * cg_ideal + r)
    return total / len(ideal)


def ref_ndcg_sakai(t: Topic, base: float = 2.0, cutoff: int = 1000) -> Optional[float]:
    ideal = sorted((v for v in t.judged if v > 0), reverse=True)

    def disc(r: int) -> float:
        return 1.0 if r <= base else 1.0 / math.log(r, base)

    ideal_dcg = sum(g * disc(r) for r, g in enumerate(ideal[:cutoff], start=1))
    if ideal_dcg == 0:
        return None
    return sum(max(v, 0) * disc(r) for r, v in enumerate(t.levels[:cutoff], start=1)) / ideal_dcg


REFERENCES: dict[str, Callable[[Topic], object]] = {
    "bpref10": ref_bpref10,
    "bpref_R": ref_bpref_r,
    "RankEff": ref_rankeff,
    "RankEff(unretrieved=ignore)": lambda t: ref_rankeff(t, ignore=True),
    "bpref_relative": ref_bpref_relative,
    "indAP": ref_indap,
    "subAP(p=0.3)": lambda t: ref_subap(t, Fraction(3, 10)),
    "subAP(p=auto)": lambda t: ref_subap(t, Fraction(len(t.judged), len(t.judged) + t.pooled)) if t.judged else None,
    "rpref_N": lambda t: ref_rpref(t, "N", lambda v: Fraction(max(v, 0), t.G) if t.G else Fraction(0)),
    "rpref_relative": lambda t: ref_rpref(t, "relative", lambda v: Fraction(max(v, 0), t.G) if t.G else Fraction(0)),
    "rpref_relative2": lambda t: ref_rpref(t, "relative2", lambda v: Fraction(max(v, 0), t.G) if t.G else Fraction(0)),
    "npref(n=3)": lambda t: ref_npref(t, 3, "relative"),
    "npref(n=4, norm=N)": lambda t: ref_npref(t, 4, "N"),
    "npref(n=5, norm=relative2)": lambda t: ref_npref(t, 5, "relative2"),
    "Q": lambda t: ref_q(t, Fraction(1)),
    "Q(beta=2.5)": lambda t: ref_q(t, Fraction(5, 2)),
    "nDCG(dcg=sakai)": ref_ndcg_sakai,
    "nDCG(dcg=sakai, base=3, l=4)": lambda t: ref_ndcg_sakai(t, 3.0, 4),
}


@SETTINGS
@given(collections(graded=True, max_docs=10))
def test_kernels_match_loop_implementations(data) -> None:
    run, qrels = data
    values = table(run, qrels, list(REFERENCES))
    gain_max = max(int(qrels["relevance"].max()), 0)
    for qid in set(run["query_id"]) & set(qrels["query_id"]):
        topic_qrels = dict(zip(*qrels[qrels["query_id"] == qid][["doc_id", "relevance"]].to_numpy().T))
        topic_run = run[run["query_id"] == qid]
        ranking = trec_sorted(list(zip(topic_run["doc_id"], topic_run["score"])))
        topic = Topic(ranking, {d: int(v) for d, v in topic_qrels.items()}, gain_max)
        for measure, reference in REFERENCES.items():
            want = reference(topic)
            got = values[("run", qid, canonical(measure))]
            if want is None:
                assert np.isnan(got), (qid, measure, got)
            else:
                assert got == pytest.approx(float(want), abs=TOL), (qid, measure, ranking, topic_qrels)


# ---- the binomial expectation of subAP: exact fractions, large nd --------------------------------
@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 60),
    st.integers(0, 300),
    st.fractions(min_value=Fraction(1, 1000), max_value=1, max_denominator=1000),
)
def test_expected_inverse_matches_exact_fractions(a, nd, p) -> None:
    from pdeval.measures.estimators import expected_inverse

    exact = sum(comb(nd, i) * p**i * (1 - p) ** (nd - i) * Fraction(1, a + i) for i in range(nd + 1))
    got = expected_inverse(np.array([a]), np.array([nd]), np.array([float(p)]))[0]
    assert abs(got - float(exact)) <= 1e-12 * float(exact) + 1e-300


def _exact_fixed_point(a: int, nd: int, p: Fraction, digits: int = 80) -> Fraction:
    """Σ_i C(nd,i) p^i (1−p)^(nd−i) / (a+i) in integer arithmetic, to 10^-digits (floor)."""
    num, den = p.numerator, p.denominator
    scale = 10**digits
    total = sum(comb(nd, i) * num**i * (den - num) ** (nd - i) * scale // (a + i) for i in range(nd + 1))
    return Fraction(total // den**nd, scale)


def test_expected_inverse_large_nd_and_vectorised() -> None:
    """nd in the thousands, many rows in one call, against exact integer arithmetic (rel. 1e-12)."""
    from pdeval.measures.estimators import expected_inverse

    cases = [(1, 3000, Fraction(1, 3)), (2, 2500, Fraction(1, 1000)), (700, 1500, Fraction(9, 10)), (1, 2000, Fraction(1, 100000))]
    a = np.array([c[0] for c in cases])
    nd = np.array([c[1] for c in cases])
    p = np.array([float(c[2]) for c in cases])
    got = expected_inverse(a, nd, p)
    for (ai, ndi, pi), g in zip(cases, got):
        exact = float(_exact_fixed_point(ai, ndi, pi))
        assert abs(g - exact) <= 1e-12 * exact
