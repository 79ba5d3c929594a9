"""Preference judgments and trec_eval 10.0's ``prefs_*`` measures (``-R prefs``, ``-R qrels_prefs``).

A preference file (trec_eval's ``prefs`` format) holds lines ``qid jg jsg docno rel_level``:
within a judgment sub-group (jsg) of a judgment group (jg), a document with a higher
``rel_level`` is preferred to one with a lower level; a jg with one jsg is a complete
ordering by levels (its "equivalence classes"), a jg with several jsgs a partial order
closed under transitivity (a > b in one jsg and b > c in another give a > c). Different
jgs (users, assessors) may contradict each other. Level 0 means nonrelevant. A qrels file
read as preferences (``qrels_prefs``: the jg is the second column, one jsg) gives the
preferences of graded judgments: every document preferred to every document of a lower grade.

For a ranking, a preference a > b is *fulfilled* when a is ranked above b; it is "retrieved"
when both are retrieved, "implied" when one is (fulfilled if that one is a), and "not
occurring" when neither is (never fulfilled). The measures (Carterette & Bennett, "Evaluation
measures for preference judgments", SIGIR 2008; Buckley's trec_eval implementation, whose
counting rules and quirks are followed here) are:

=========================  ====================================================================
``prefs_num_prefs_poss``   preferences of every jg (fulfilled or not), summed
``prefs_num_prefs_ful``    fulfilled preferences (retrieved and implied)
``prefs_num_prefs_ful_ret`` fulfilled preferences with both documents retrieved
``prefs_simp``             fulfilled / possible over every preference of the topic
``prefs_pair``             per document pair with a preference, the share of the jgs whose
                           preference the ranking fulfils, averaged over the pairs
``prefs_avgjg``            fulfilled / possible per jg, averaged over the jgs
``prefs_avgjg_Rnonrel``    as prefs_avgjg with the number of nonrelevant documents of each jg
                           set to its number of relevant ones R (like bpref)
``*_ret``, ``*_imp``       the same over retrieved pairs only / retrieved and implied pairs
=========================  ====================================================================

The measures are registered (:mod:`pdeval.measures.preference_judgments`, with their
definitions and papers) and counted for every run, topic and jg at once
(:mod:`pdeval.measures.preference_counts`); this module is trec_eval's entry to them.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import pandas as pd

from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Nullable, contract
from pdeval.frames.domains import Frame
from pdeval.integrations.trec_eval.preference_files import (PREFS_COLUMNS, PreferenceFrame, qrels_prefs, read_prefs,
                                                            read_qrels_prefs)
from pdeval.measures.preference_counts import evaluate_prepared
from pdeval.measures.preference_judgments import PREFERENCE_MEASURES
from pdeval.measures.preference_structure import Preferences

__all__ = ["PREFERENCE_MEASURES", "PREFS_COLUMNS", "PreferenceFrame", "Preferences", "evaluate_prepared",
           "evaluate_preferences", "qrels_prefs", "read_prefs", "read_qrels_prefs"]

PathLike = Union[str, "os.PathLike[str]"]


@contract(run=Frame("run"), prefs=PreferenceFrame(), measures=Nullable(ListOf(Choice(*PREFERENCE_MEASURES))),
          depth=Nullable(Integer(1)), complete=Boolean())
def evaluate_preferences(
    run: pd.DataFrame,
    prefs: pd.DataFrame,
    measures: Optional[Sequence[str]] = None,
    *,
    depth: Optional[int] = None,
    complete: bool = False,
) -> pd.DataFrame:
    """trec_eval 10.0's preference measures (``prefs_*``) of every run and topic.

    A preference a > b of a judgment group is fulfilled when the run ranks a above b (a
    retrieved and b not counts as fulfilled, "implied"; neither retrieved as possible but
    not fulfilled). ``prefs_simp`` = fulfilled / possible over a topic's preferences,
    ``prefs_avgjg`` the same per judgment group averaged over the groups, ``prefs_pair`` the
    share of groups whose preference on a pair the run follows averaged over the pairs,
    ``prefs_avgjg_Rnonrel`` counts at most R nonrelevant documents per group (as bpref); the
    ``_ret`` forms count only pairs with both documents retrieved, the ``_imp`` forms those
    with at least one (Carterette & Bennett, "Evaluation measures for preference judgments",
    SIGIR 2008; trec_eval's m_prefs_*.c, whose counting rules are followed, quirks included).

    Parameters
    ----------
    run : DataFrame
        A run frame (``run``, ``query_id``, ``doc_id``, ``score``); documents are ranked by
        score, ties by doc_id ascending, as trec_eval's preference measures rank them.
    prefs : DataFrame
        A preference frame (:func:`read_prefs`, :func:`qrels_prefs`).
    measures : list of str, optional
        Names from :data:`PREFERENCE_MEASURES` (default: all, trec_eval's ``-m all_prefs``).
    depth : int, optional
        trec_eval ``-M``: keep the first ``depth`` documents of each ranking.
    complete : bool, default False
        Every topic of the preferences, a run lacking it scoring as an empty ranking
        (trec_eval ``-c``); otherwise the topics the run and the preferences share.

    Returns
    -------
    DataFrame
        ``run``, ``query_id``, ``measure``, ``value``: one row per run, topic and measure.

    See Also
    --------
    read_prefs : read trec_eval's preference format.
    qrels_prefs : the preferences of graded qrels.

    Examples
    --------
    >>> run = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]})
    >>> result = pdeval.evaluate_preferences(run, pdeval.qrels_prefs(qrels), ["prefs_simp", "prefs_num_prefs_poss"])
    >>> result.round(4)
       run query_id               measure   value
    0  run        1            prefs_simp  0.6667
    1  run        1  prefs_num_prefs_poss  3.0000
    """
    names = list(measures) if measures is not None else list(PREFERENCE_MEASURES)
    return evaluate_prepared(Preferences(prefs), run, names, depth=depth, complete=complete)
