"""Every worked example of MEASURES.md Part I, evaluated through ``pdeval.evaluate``.

Inputs are written out here (Examples A–D of MEASURES.md 0.8 and the special examples under
M5, M8 and M14); expected values are MEASURES.md's, as fractions where it gives one. Values
MEASURES.md does not list (marked "hand") are computed by hand in the comment next to them.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import MeasureError

TOL = 1e-9


def frames(qrels: dict, run: dict, qid: str = "q") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, qrels) frames of one topic from {doc: level} and {doc: score}."""
    q = pd.DataFrame([(qid, d, r) for d, r in qrels.items()], columns=["query_id", "doc_id", "relevance"])
    r = pd.DataFrame([(qid, d, float(s)) for d, s in run.items()], columns=["query_id", "doc_id", "score"])
    return r, q


# MEASURES.md 0.8, Example A: binary, one ABSENT pair (u1, u2), one POOLED doc (d7), a tie d3/d4.
EXAMPLE_A = frames(
    dict(d1=1, d2=0, d3=1, d4=0, d5=1, d6=0, d7=-1, d8=0, d9=1, d10=0),
    dict(d2=9, d1=8, u1=7, d7=6, d3=5, d4=5, d5=4, u2=3, d6=2, d8=1),
    "q1",
)
# Example B: graded (levels = gains 3/2/1), x and y ABSENT, h unretrieved.
EXAMPLE_B = frames(
    dict(a=3, b=2, c=2, d=1, e=0, f=0, g=0, h=1),
    dict(e=0.9, b=0.8, x=0.7, a=0.6, f=0.5, d=0.4, y=0.3, c=0.2, g=0.1),
    "t2",
)
# Example C: pooled-unjudged p1 and absent u1 above the first relevant document.
EXAMPLE_C = frames(dict(r1=1, r2=1, n1=0, p1=-1, p2=-1), dict(p1=6, u1=5, r1=4, n1=3, r2=2, p2=1), "q3")

# Example D2 (N = 0); D1 and D3 are in the edge-case tests at the end.
EXAMPLE_D2 = frames(dict(r1=1, r2=1), dict(u1=3, r1=2, u2=1), "D2")

EXAMPLES = {"A": EXAMPLE_A, "B": EXAMPLE_B, "C": EXAMPLE_C, "D2": EXAMPLE_D2}


def value(example, measure: str, **options) -> float:
    run, qrels = example
    result = pdeval.evaluate(run, qrels, [measure], undefined="nan", **options)
    assert len(result) == 1, result
    return float(result["value"].iloc[0])


CASES = [
    # ---- M1 P@k
    ("A", "P@1", 0), ("A", "P@5", F(1, 5)), ("A", "P@10", F(3, 10)), ("A", "P@20", F(3, 20)),
    ("B", "P@5", F(2, 5)), ("B", "P@20", F(1, 5)), ("C", "P@5", F(2, 5)),
    # ---- M2 Rprec
    ("A", "Rprec", F(1, 4)), ("B", "Rprec", F(2, 5)), ("C", "Rprec", 0),
    # ---- M3 AP
    ("A", "AP", F(53, 168)), ("B", "AP", F(2, 5)), ("C", "AP", F(11, 30)),
    # ---- M4 Bpref
    ("A", "Bpref", F(7, 16)), ("B", "Bpref", F(2, 5)), ("C", "Bpref", F(1, 2)),
    # ---- M5 bpref10
    ("A", "bpref10", F(1, 2)), ("A", "bpref10(denominator=fixed)", F(37, 56)),
    ("B", "bpref10", F(2, 5)), ("B", "bpref10(denominator=fixed)", F(18, 25)),
    ("C", "bpref10", F(1, 2)), ("C", "bpref10(denominator=fixed)", F(23, 24)),
    # hand: A, legacy: min(N_ret = 4 (d2, d4, d6, d8), R+10) = 4; terms 1-1/4, 1-2/4, 1-2/4 -> 7/16
    ("A", "bpref10(denominator=legacy)", F(7, 16)),
    # ---- M6 bpref_R
    ("A", "bpref_R", F(7, 16)), ("B", "bpref_R", F(14, 25)), ("C", "bpref_R", F(3, 4)),
    # ---- M7 bpref_N
    ("A", "bpref_N", F(1, 2)), ("B", "bpref_N", F(2, 5)), ("C", "bpref_N", F(1, 2)),
    # ---- M8 RankEff
    ("A", "RankEff", F(1, 2)), ("B", "RankEff", F(2, 5)), ("C", "RankEff", F(1, 2)),
    # hand: A, ignore: I(d) = N_ret - na(d) = 4-1, 4-2, 4-2 over N = 5 -> (3+2+2)/5/4 = 7/20
    ("A", "RankEff(unretrieved=ignore)", F(7, 20)),
    # hand: C, ignore: N_ret = N = 1, so as adjusted -> 1/2
    ("C", "RankEff(unretrieved=ignore)", F(1, 2)),
    # ---- M9 bpref_relative
    ("A", "bpref_relative", F(5, 24)), ("B", "bpref_relative", F(8, 25)), ("C", "bpref_relative", F(1, 4)),
    # ---- M10 AP'
    ("A", "AP'", F(2, 5)), ("B", "AP'", F(73, 150)), ("C", "AP'", F(5, 6)),
    # ---- M10b indAP (alias indAP_pool)
    ("A", "indAP", F(7, 20)), ("B", "indAP", F(2, 5)), ("C", "indAP", F(1, 2)),
    ("A", "indAP_pool", F(7, 20)), ("C", "indAP_pool", F(1, 2)),
    # ---- M11–M13 rpref (A is binary, so = bpref_N, bpref_relative, AP')
    ("B", "rpref_N", F(3, 5)), ("A", "rpref_N", F(1, 2)),
    ("B", "rpref_relative", F(5, 18)), ("A", "rpref_relative", F(5, 24)),
    ("B", "rpref_relative2", F(133, 270)), ("A", "rpref_relative2", F(2, 5)), ("C", "rpref_relative2", F(5, 6)),
    # ---- M14 n-pref (relative by default)
    ("B", "npref(n=2)", F(3, 10)), ("B", "npref(n=3)", F(5, 16)), ("B", "npref(n=4)", F(5, 18)),
    ("B", "npref", F(5, 18)), ("B", "npref(n=8)", 0.2809523810), ("B", "npref(n=2, norm=N)", F(2, 3)),
    # ---- M15 subAP
    ("A", "subAP(p=0.5)", F(3, 8)), ("A", "subAP(p=0.25)", F(31, 80)), ("A", "subAP(p=1)", F(7, 20)),
    ("B", "subAP(p=0.5)", 0.4421428571), ("C", "subAP(p=0.5)", F(2, 3)),
    # ---- M16 infAP
    ("A", "infAP", 0.3472236574), ("A", "infAP(pool_aware=false)", 0.3789697354),
    ("B", "infAP", 0.4000009500),
    ("C", "infAP", F(1, 2)), ("C", "infAP(c=2)", F(1, 2)), ("C", "infAP(c=1)", 0.5833340833),
    ("C", "infAP(c=1.5)", 0.5277781528), ("C", "infAP(c=2.5)", 0.4833329583),
    ("C", "infAP(pool_aware=false)", F(19, 30)),
    # hand: C, c = 1, ε = 0.5: r1 (k = 3, d = 1, r = n = 0): 1/3 + (1/3)·(0.5/0.5) = 2/3;
    # r2 (k = 5, d = 3, r = n = 1): 1/5 + (3/5)·(1.5/2.5) = 14/25; (2/3 + 14/25)/2 = 46/75
    ("C", "infAP(c=1, eps=0.5)", F(46, 75)),
    # hand: C, c = 2: (r + ε)/(r + n + 2ε) = 1/2 both at r = n = 0 and r = n = 1, for any ε
    ("C", "infAP(eps=0.3)", F(1, 2)),
    ("D2", "infAP", F(1, 4)),
    # ---- M17 Q and Q'
    ("B", "Q", F(16549, 35700)), ("B", "Q'", F(18, 35)), ("B", "Q(beta=0)", F(2, 5)), ("B", "Q(beta=3)", 0.4910542399),
    ("A", "Q", F(159, 440)), ("A", "Q'", F(5, 12)), ("C", "Q", 0.4857142857), ("C", "Q'", F(9, 10)),
    # ---- M18 nDCG (Sakai)
    ("B", "nDCG(dcg=sakai)", 0.6330895574), ("B", "nDCG'(dcg=sakai)", 0.7086751303),
    ("B", "nDCG(dcg=sakai, l=5)", 0.4866155648), ("B", "nDCG'(dcg=sakai, l=5)", 0.6011045033),
    ("B", "nDCG(dcg=sakai, base=10)", F(8, 9)),
    # an @k cutoff lowers l to min(l, k): the l = 5 values again
    ("B", "nDCG(dcg=sakai)@5", 0.4866155648), ("B", "nDCG'(dcg=sakai)@5", 0.6011045033),
    ("A", "nDCG(dcg=sakai)", 0.5567228049), ("A", "nDCG'(dcg=sakai)", 0.6166463990),
    ("A", "nDCG(dcg=sakai, l=5)", 0.3193939432),
    ("C", "nDCG(dcg=sakai)", 0.5308031558), ("C", "nDCG'(dcg=sakai)", 0.8154648768),
    # ---- M19 nDCG (trec_eval)
    ("A", "nDCG", 0.5154852516), ("A", "nDCG@5", 0.2463023887),
    ("B", "nDCG", 0.5824641582), ("B", "nDCG@5", 0.4200897878), ("C", "nDCG", 0.5437713092),
]


@pytest.mark.parametrize("example, measure, expected", CASES, ids=[f"{e}-{m}" for e, m, _ in CASES])
def test_worked_example(example: str, measure: str, expected) -> None:
    assert value(EXAMPLES[example], measure) == pytest.approx(float(expected), abs=TOL)


def test_worked_examples_in_one_call() -> None:
    """The same values come out when every measure of a topic is evaluated in one call."""
    for name, example in EXAMPLES.items():
        cases = {m: float(v) for e, m, v in CASES if e == name}
        run, qrels = example
        result = pdeval.evaluate(run, qrels, list(cases), undefined="nan")
        got = dict(zip(result["measure"], result["value"]))
        for measure, expected in cases.items():
            canonical = str(pdeval.parse_measure(measure))
            assert got[canonical] == pytest.approx(expected, abs=TOL), (name, measure)


def test_prime_is_judged_only() -> None:
    """``M'`` and ``judged_only=True`` mean the same (MEASURES.md 0.4), e.g. AP' of A = 2/5."""
    assert value(EXAMPLE_A, "AP", judged_only=True) == pytest.approx(0.4, abs=TOL)
    assert value(EXAMPLE_B, "Q", judged_only=True) == pytest.approx(18 / 35, abs=TOL)
    assert value(EXAMPLE_B, "nDCG(dcg=sakai)", judged_only=True) == pytest.approx(0.7086751303, abs=TOL)


def test_tie_order() -> None:
    """MEASURES.md 0.3: equal scores order doc9, doc2, doc10 (byte order descending): AP = 1/3."""
    example = frames(dict(doc10=1, doc2=0, doc9=0), dict(doc9=1.0, doc10=1.0, doc2=1.0))
    assert value(example, "AP") == pytest.approx(1 / 3, abs=TOL)


def test_example_a_ignores_the_rank_column() -> None:
    """Example A's run file lists d3 before d4; the scores tie and "d4" > "d3" puts d4 first."""
    run, qrels = EXAMPLE_A
    run = run.assign(rank=np.arange(1, len(run) + 1))
    assert value((run, qrels), "AP") == pytest.approx(53 / 168, abs=TOL)


# ---- M5: the SWAP failure of bpref-10 (Ahlgren & Grönqvist 2008, Prop. 3) ------------------
def test_swap_failure_of_bpref10() -> None:
    qrels = {"r": 1, **{f"n{i:02d}": 0 for i in range(1, 13)}}
    before = {**{f"n{i:02d}": 100 - i for i in range(1, 13)}, "r": 1}  # n01..n12, r
    after = {**{f"n{i:02d}": 100 - i for i in range(1, 12)}, "r": 50, "n12": 1}  # n01..n11, r, n12
    measures = ["bpref10", "RankEff", "AP"]
    values = []
    for run in (before, after):
        r, q = frames(qrels, run)
        result = pdeval.evaluate(r, q, measures, undefined="nan")
        values.append(dict(zip(result["measure"], result["value"])))
    assert values[0]["bpref10"] == pytest.approx(0, abs=TOL)
    assert values[1]["bpref10"] == pytest.approx(0, abs=TOL)
    assert values[0]["RankEff"] == pytest.approx(0, abs=TOL)
    assert values[1]["RankEff"] == pytest.approx(1 / 12, abs=TOL)
    assert values[0]["AP"] == pytest.approx(1 / 13, abs=TOL)
    assert values[1]["AP"] == pytest.approx(1 / 12, abs=TOL)


# ---- M8: Ahlgren & Grönqvist's M1/M2 example --------------------------------------------------
@pytest.mark.parametrize(
    "run, adjusted, ignore",
    [
        (dict(r1=6, r2=5, n1=4, n2=3, n3=2, n4=1), 1.0, 1.0),  # M1: all six, REL at ranks 1-2
        (dict(r1=6, r2=5, n1=4, n2=3), 1.0, 0.5),  # M2: REL at 1-2 then 2 NONREL: (2/4 + 2/4)/2
    ],
    ids=["M1", "M2"],
)
def test_rankeff_paper_example(run: dict, adjusted: float, ignore: float) -> None:
    example = frames(dict(r1=1, r2=1, n1=0, n2=0, n3=0, n4=0), run)
    assert value(example, "RankEff") == pytest.approx(adjusted, abs=TOL)
    assert value(example, "RankEff(unretrieved=below)") == pytest.approx(adjusted, abs=TOL)
    assert value(example, "RankEff(unretrieved=ignore)") == pytest.approx(ignore, abs=TOL)


# ---- M14: partition values --------------------------------------------------------------------
def test_npref_partitions_recover_rpref_at_n4() -> None:
    """n = 4 recovers φ = 1, 2/3, 1/3 of Example B exactly, so npref(4) = rpref_relative = 5/18."""
    assert value(EXAMPLE_B, "npref(n=4)") == pytest.approx(value(EXAMPLE_B, "rpref_relative"), abs=1e-12)
    assert value(EXAMPLE_B, "npref(n=4, norm=N)") == pytest.approx(0.6, abs=TOL)
    assert value(EXAMPLE_B, "npref(n=4, norm=relative2)") == pytest.approx(133 / 270, abs=TOL)


def test_npref_boundary_goes_up() -> None:
    """n = 3: b and c (φ = 2/3, 3·2/3 = 2 exactly) go to partition 2 (value 1), not 1.

    Hand: values a, b, c -> 1; d, h -> 1/2; e, f, g -> 0; R' = 3 + 2·(1/2) = 4. Condensed
    e(0) b(1) a(1) f(0) d(1/2) c(1) g(0): b: 1·(1 − 1/1) = 0; a: 1·(1 − 1/2) = 1/2;
    d: ½·(1 − 2/4) = 1/4; c: 1·(1 − (1 + 1 + ½)/5) = 1/2; total 5/4 / 4 = 5/16 = 0.3125.
    """
    assert value(EXAMPLE_B, "npref(n=3)") == pytest.approx(5 / 16, abs=TOL)


def test_gains_and_gain_max() -> None:
    """``gains=`` maps levels to gains; ``gain_max=`` overrides G (it only enters N')."""
    # gains {1:1, 2:1, 3:1} make B binary: rpref_N = bpref_N = 2/5, rpref_relative2 = AP'.
    assert value(EXAMPLE_B, "rpref_N(gains={1:1,2:1,3:1})") == pytest.approx(0.4, abs=TOL)
    assert value(EXAMPLE_B, "rpref_relative2(gains={1:1,2:1,3:1})") == pytest.approx(73 / 150, abs=TOL)
    assert value(EXAMPLE_B, "rpref_N", gains={1: 1, 2: 1, 3: 1}) == pytest.approx(0.4, abs=TOL)
    # Hand: gain_max = 6 gives φ = a 1/2, b = c 1/3, d = h 1/6; R' = 3/2, N' = 8 - 3/2 = 13/2.
    # The penalties do not depend on G (b 1, a 4/3, d 2, c 5/2), so with cg_I = 9
    # rpref_N = (1/9)[2(1 − 2/13) + 3(1 − 8/39) + 1(1 − 4/13) + 2(1 − 5/13)] = (8 − 2)/9 = 2/3
    assert value(EXAMPLE_B, "rpref_N(gain_max=6)") == pytest.approx(2 / 3, abs=TOL)
    # the relative variants do not depend on G
    assert value(EXAMPLE_B, "rpref_relative(gain_max=6)") == pytest.approx(5 / 18, abs=TOL)
    # Q with gains {1:1, 2:1, 3:1} and β = 0 is AP
    assert value(EXAMPLE_B, "Q(beta=0, gains={1:1,2:5,3:9})") == pytest.approx(0.4, abs=TOL)


def test_gain_max_below_the_largest_gain_is_an_error() -> None:
    with pytest.raises(MeasureError, match="gain_max"):
        value(EXAMPLE_B, "rpref_N(gain_max=2)")


# ---- Example D: edge cases (complete=True, undefined="nan") ------------------------------------
D_MEASURES = {
    # measure: (D1 R=0, D2 N=0, D3 empty run)
    "P@5": (0, F(1, 5), 0),
    "Rprec": (None, F(1, 2), 0),
    "AP": (None, F(1, 4), 0),
    "AP'": (None, F(1, 2), 0),
    "Bpref": (None, F(1, 2), 0),
    "bpref10": (None, F(1, 2), 0),  # hand: D2 N = 0, every term 1 -> 1/2
    "bpref10(denominator=fixed)": (None, F(1, 2), 0),  # hand: na = 0 -> term 1
    "bpref_R": (None, F(1, 2), 0),  # hand: na = 0 -> 1/2
    "bpref_N": (None, F(1, 2), 0),
    "RankEff": (None, None, None),  # N = 0 in D2 and D3 (qrels {z1: 1}): undefined
    "bpref_relative": (None, 0, 0),
    "indAP": (None, F(1, 4), 0),  # hand: no pooled entries -> = AP
    "subAP(p=0.5)": (None, F(3, 8), 0),  # hand: r1 at k = 2, u1 above: ½·1/1 + ½·1/2 = 3/4; /2
    "subAP(p=auto)": (None, F(1, 4), 0),  # hand: no pooled entries -> p = 1 -> indAP
    "infAP": (None, F(1, 4), 0),
    "rpref_N": (None, F(1, 2), 0),  # hand: N' = 0 -> term φ = 1 for r1; R' = 2
    "rpref_relative": (None, 0, 0),  # hand: r1 at condensed rank 1 is skipped
    "rpref_relative2": (None, F(1, 2), 0),  # hand: r1 at r' = 1: 1·(1 − 0/1); /2
    "npref": (None, 0, 0),  # hand: as rpref_relative
    "Q": (None, F(1, 4), 0),  # hand: r1 at r = 2: (1 + 1)/(cg_I(2) = 2 + 2) = 1/2; /2
    "Q'": (None, F(1, 2), 0),  # hand: r1 at r' = 1: (1 + 1)/(1 + 1) = 1; /2
    "nDCG(dcg=sakai)": (None, F(1, 2), 0),  # hand: 1·disc(2) = 1 over ideal 1 + 1
    "nDCG'(dcg=sakai)": (None, F(1, 2), 0),
    "nDCG": (None, (1 / math.log2(3)) / (1 + 1 / math.log2(3)), 0),  # hand: trec discount
}


def _example_d(undefined: str) -> pd.DataFrame:
    d1 = frames(dict(e1=0, e2=0), dict(e1=2, u=1), "D1")
    d2 = frames(dict(r1=1, r2=1), dict(u1=3, r1=2, u2=1), "D2")
    d3_qrels = pd.DataFrame([("D3", "z1", 1)], columns=["query_id", "doc_id", "relevance"])
    run = pd.concat([d1[0], d2[0]], ignore_index=True)
    qrels = pd.concat([d1[1], d2[1], d3_qrels], ignore_index=True)
    result = pdeval.evaluate(run, qrels, list(D_MEASURES), complete=True, undefined=undefined)
    return result.pivot(index="measure", columns="query_id", values="value")


def test_example_d_undefined_nan() -> None:
    table = _example_d("nan")
    for measure, expected in D_MEASURES.items():
        row = table.loc[str(pdeval.parse_measure(measure))]
        for topic, want in zip(["D1", "D2", "D3"], expected):
            got = row[topic]
            if want is None:
                assert np.isnan(got), (measure, topic, got)
            else:
                assert got == pytest.approx(float(want), abs=TOL), (measure, topic)


def test_example_d_undefined_zero() -> None:
    table = _example_d("zero")
    for measure, expected in D_MEASURES.items():
        row = table.loc[str(pdeval.parse_measure(measure))]
        for topic, want in zip(["D1", "D2", "D3"], expected):
            assert row[topic] == pytest.approx(0.0 if want is None else float(want), abs=TOL), (measure, topic)


# ---- parameter validation ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "measure",
    [
        "subAP",  # p is required
        "subAP(p=0)",
        "subAP(p=1.5)",
        "subAP(p=-0.2)",
        "subAP(p=half)",
        "npref(n=1)",
        "npref(n=2.5)",
        "Q(beta=-1)",
        "nDCG(dcg=sakai, base=1)",
        "nDCG(dcg=sakai, l=0)",
        "infAP(c=0)",
    ],
)
def test_invalid_parameters_raise(measure: str) -> None:
    with pytest.raises((MeasureError, ValueError)):
        value(EXAMPLE_A, measure)


@pytest.mark.parametrize(
    "measure, canonical",
    [
        ("subAP(p=0.3)", "subAP(p=0.3)"),
        ("subAP(p=auto)", "subAP(p=auto)"),
        ("bpref10(denominator=min)", "bpref10"),
        ("bpref10(denominator=legacy)", "bpref10(denominator=legacy)"),
        ("RankEff(unretrieved=below)", "RankEff"),
        ("npref(n=4, norm=relative)", "npref"),
        ("npref(n=2, norm=n)", "npref(n=2,norm=N)"),
        ("Q(beta=1)", "Q"),
        ("q'", "Q'"),
        ("indAP_pool", "indAP"),
        ("bpref_allnonrel", "bpref_N"),
        ("rpref_relative2(gain_max=3)", "rpref_relative2(gain_max=3)"),
    ],
)
def test_canonical_names(measure: str, canonical: str) -> None:
    assert str(pdeval.parse_measure(measure)) == canonical
