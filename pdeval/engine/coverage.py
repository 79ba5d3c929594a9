"""Does a run meet its qrels? Topic overlap and judged documents, checked before measuring.

trec_eval 9 evaluates a run on the topics it shares with the qrels and says nothing about the
others, so a run whose topic ids are written differently from the qrels' (``051`` vs ``51``,
``51.0`` vs ``51``) or qrels of another collection give an empty or all-zero result without a
word. :func:`check_coverage` keeps trec_eval's values but speaks:

* no shared topic at all: :class:`~pdeval.errors.OverlapError`, showing a few ids of each side
  and the likely cause (:func:`likely_cause`);
* topics on one side only, or runs lacking some of the evaluated topics: one
  :class:`~pdeval.errors.OverlapWarning` with the counts;
* a run with no judged document in its (depth-cut) rankings: an :class:`OverlapWarning`
  naming it (its AP, nDCG, ... are 0 because nothing was judged, not because it is bad).

Silence them with ``warnings.simplefilter("ignore", pdeval.errors.OverlapWarning)``.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import numpy as np

from pdeval.errors import OverlapError, OverlapWarning, warn

__all__ = ["check_coverage", "likely_cause"]


def _shown(ids: Sequence[str], n: int = 5) -> str:
    ids = list(ids)
    return ", ".join(repr(i) for i in ids[:n]) + (f", ... ({len(ids)} in all)" if len(ids) > n else "")


def _number(text: str) -> Optional[str]:
    try:
        value = float(text)
    except ValueError:
        return None
    return repr(value) if np.isfinite(value) else None


#: what :func:`likely_cause` says when no normalisation makes the ids meet
ANOTHER_COLLECTION = "the qrels are probably of another collection or topic set than the run (or the run of another one)"


def likely_cause(run_topics: Sequence[str], qrels_topics: Sequence[str]) -> str:
    """Why two sets of topic ids that should match do not: leading zeros, number formatting,
    letter case, a prefix, or (when no normalisation makes them meet) qrels of another
    collection (:data:`ANOTHER_COLLECTION`)."""
    run_topics, qrels_topics = [str(t) for t in run_topics], [str(t) for t in qrels_topics]
    tests = [
        (lambda t: t.lstrip("0") or "0", "leading zeros (e.g. '051' vs '51'): write the ids the same way on both sides"),
        (_number, "number formatting (e.g. '51.0' vs '51'): convert both id columns to the same strings"),
        (str.lower, "letter case: the ids differ only in upper/lower case"),
        (lambda t: re.sub(r"\D", "", t) or None, "a prefix or suffix around the numbers (e.g. 'q51' vs '51')"),
    ]
    for normalise, cause in tests:
        run_set = {normalise(t) for t in run_topics} - {None}
        if run_set & ({normalise(t) for t in qrels_topics} - {None}):
            return cause
    return ANOTHER_COLLECTION


def check_coverage(ranked, judgments, *, complete: bool, depth: Optional[int]) -> None:
    """Raise or warn as the module says, for a :class:`~pdeval.evaluation.core.RankedRun` built
    against a :class:`~pdeval.evaluation.core.JudgmentIndex`. Vectorised: a few bincounts."""
    n_systems, n_topics = len(ranked.systems), ranked.n_topics
    lengths = np.diff(ranked.offsets).reshape(n_systems, n_topics)
    retrieved = lengths.sum(axis=0) > 0
    position = ranked.run_topic_position
    run_only = ranked.run_topics[position < 0]
    if not retrieved.any():
        raise OverlapError(
            "the run and the qrels share no topic, so nothing can be evaluated. "
            f"Run topics: {_shown(sorted(map(str, ranked.run_topics)))}; "
            f"qrels topics: {_shown(sorted(map(str, judgments.topics)))}. "
            f"Likely cause: {likely_cause(ranked.run_topics, judgments.topics)}."
        )
    qrels_only = judgments.topics[~retrieved]
    lacking = int(((lengths == 0) & retrieved).any(axis=1).sum())
    if len(run_only) or len(qrels_only) or lacking:
        parts = []
        if len(run_only):
            parts.append(f"{len(run_only)} run topic(s) are not in the qrels and are not evaluated "
                         f"({_shown(sorted(map(str, run_only)), 3)})")
        if len(qrels_only):
            fate = "evaluated as empty rankings (complete=True)" if complete else "not evaluated"
            parts.append(f"{len(qrels_only)} qrels topic(s) are in no run and are {fate} "
                         f"({_shown(sorted(map(str, qrels_only)), 3)})")
        if len(run_only) and len(qrels_only):
            cause = likely_cause(run_only, qrels_only)
            if cause != ANOTHER_COLLECTION:
                parts.append(f"some run-only and qrels-only topics differ only by {cause}")
        if lacking:
            fate = ("they score 0 on those, as with trec_eval -c" if complete else
                    "their means are over fewer topics; complete=True scores a missing topic 0 (trec_eval -c)")
            parts.append(f"{lacking} of {n_systems} run(s) lack some of the {int(retrieved.sum())} evaluated "
                         f"topics ({fate})")
        warn(
            f"{int(retrieved.sum())} topic(s) evaluated; " + "; ".join(parts) + ".",
            OverlapWarning,
        )
    judged = judgments.judged_pair[ranked.pair[ranked.known_rows]]
    system = ranked.known_groups[judged] // max(n_topics, 1)
    has_judged = np.bincount(system, minlength=n_systems) > 0
    unjudged = ~has_judged & (lengths.sum(axis=1) > 0)
    if unjudged.any():
        names = [" ".join(map(str, row)) for row in ranked.systems[unjudged].itertuples(index=False)]
        where = f"its top {depth}" if depth is not None else "its rankings"
        warn(
            f"{len(names)} run(s) have no judged document in {where} ({_shown(names, 3)}): "
            "their measures are 0 (or undefined) because nothing they retrieved was judged. "
            "Check that the run and the qrels use the same document ids.",
            OverlapWarning,
        )
