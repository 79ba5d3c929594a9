"""The domains of the parameters the judgment functions share (:mod:`pdeval.common.contract`):
one declaration of ``seed``, ``progress``, ``pooled``, ``removed_as`` and the pool depths,
and the judging order that :func:`pdeval.budget_qrels` reads."""

from __future__ import annotations

from typing import Any

import pandas as pd

from pdeval.common.contract import ALIEN, Callable_, Choice, Domain, Integer, ListOf, MappingOf, Nullable, Refused, Text
from pdeval.common.progress import PROGRESS
from pdeval.common.seeds import SEED

__all__ = ["GROUP", "ORDER_COLUMNS", "OrderFrame", "POOLED", "POOL_DEPTH", "POOL_DEPTHS", "PROGRESS", "REMOVED_AS", "SEED"]

#: ``pooled=``: the runs that built the pool (default every run)
POOLED = Nullable(ListOf(Text("a run name"), unique=True))
#: ``group=``: the unit of a leave-one-out, a mapping run -> group or a function of the run name
GROUP = Nullable(MappingOf(Text("a run name"), Text("a group name") | Integer()) | Callable_("a function run -> group"))
#: ``removed_as=``: how a judgment outside a derived qrels appears (-1, or absent)
REMOVED_AS = Choice("pooled", "absent")
#: ``pool_depth=``: one pool depth
POOL_DEPTH = Integer(1)
#: ``pool_depths=``: a grid of pool depths (one depth stands for a list of one)
POOL_DEPTHS = ListOf(Integer(1), unique=True)


#: the columns of a judging order (:func:`pdeval.judging_order`)
ORDER_COLUMNS = ("strategy", "query_id", "doc_id", "order")


class OrderFrame(Domain):
    """A judging order: a DataFrame with the columns of :data:`ORDER_COLUMNS`, as
    :func:`pdeval.judging_order` returns it."""

    text = f"a judging order (a DataFrame with columns {list(ORDER_COLUMNS)}, from judging_order)"

    def convert(self, value: Any) -> pd.DataFrame:
        if not isinstance(value, pd.DataFrame):
            raise Refused(f"it is a {type(value).__name__}")
        absent = [column for column in ORDER_COLUMNS if column not in value.columns]
        if absent:
            raise Refused(f"it lacks the column(s) {absent}")
        return value

    def outside(self) -> list:
        return [ALIEN, None, pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})]

    def example(self) -> pd.DataFrame:
        return pd.DataFrame({"strategy": ["depth"] * 2, "query_id": ["1", "1"], "doc_id": ["d1", "d2"], "order": [1, 2]})
