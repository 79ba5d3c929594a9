"""Two leaderboards side by side: the systems of each compared group aligned with the reference's.

:func:`align_means` turns per-system means (:func:`pdeval.summarize`) of the compared groups
and of the reference into ``(groups, systems)`` arrays over the systems sorted by name, and
applies the policy for systems present on one side only (``missing=``):

``'error'``
    raise a :class:`~pdeval.errors.SchemaError` naming the first group and systems;
``'warn'`` (default)
    leave them out of that comparison, with one counted :class:`~pdeval.errors.PdevalWarning`;
``'skip'``
    leave them out silently;
``'fill'``
    a reference system without a value in the group gets ``fill_value`` (default 0, the
    TREC Auto-Judge meta-evaluation's ``default`` policy: a run the judge did not score is
    ranked as if it scored 0); a system of the group without a reference value is left out.

The systems are sorted by name, so ties in an estimate are broken by name wherever a
coefficient needs an order (``tau_gap``), as the Auto-Judge meta-evaluation does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from pdeval.errors import PdevalWarning, SchemaError

__all__ = ["Aligned", "MISSING_POLICIES", "MissingPolicy", "align_means", "sorted_names"]

#: the values of ``missing=`` for systems present on one side only
MISSING_POLICIES = ("warn", "error", "skip", "fill")

MissingPolicy = Literal["warn", "error", "skip", "fill"]


@dataclass
class Aligned:
    """The compared groups (``keys``: ``measure``, the ``by`` columns, ``reference``), the
    systems (sorted by name), the ``(groups, systems)`` means of each group (``est``) and of its
    reference (``ref``), and ``mask`` (the systems each comparison uses, after the policy)."""

    keys: pd.DataFrame
    systems: np.ndarray
    est: np.ndarray
    ref: np.ndarray
    mask: np.ndarray
    ref_row: np.ndarray
    ref_keys: pd.DataFrame
    est_raw: np.ndarray


def sorted_names(values) -> np.ndarray:
    """Distinct names in ascending order (by their text when they do not compare)."""
    names = pd.Series(values).drop_duplicates().tolist()
    try:
        names = sorted(names)
    except TypeError:
        names = sorted(names, key=str)
    return np.array(names, dtype=object)


def _wide(frame: pd.DataFrame, columns: list[str], system: str, systems: np.ndarray):
    """Group codes (in sorted key order), the key table and the (groups, systems) means."""
    codes = frame.groupby(columns, sort=True, dropna=False, observed=True).ngroup().to_numpy()
    first = np.unique(codes, return_index=True)[1]
    keys = frame.iloc[first][columns].reset_index(drop=True)
    wide = np.full((len(first), systems.size), np.nan)
    column = pd.Index(systems).get_indexer(frame[system].astype(object))
    wide[codes, column] = pd.to_numeric(frame["value"], errors="coerce").to_numpy(np.float64)
    return keys, wide


def align_means(est: pd.DataFrame, ref: pd.DataFrame, *, system: str, by: list[str], shared: list[str],
                missing: str, fill_value: float, where: str) -> Aligned:
    """Align the means ``est`` (with a ``reference`` column naming the reference measure of each
    row) with the reference means ``ref`` (matched on ``reference`` and the ``shared`` columns)."""
    systems = sorted_names(pd.concat([est[system], ref[system]], ignore_index=True))
    keys, est_w = _wide(est, ["measure", *by, "reference"], system, systems)
    ref_keys, ref_w = _wide(ref, ["measure", *shared], system, systems)
    link = keys.merge(ref_keys.rename(columns={"measure": "reference"}).assign(_row=np.arange(len(ref_keys))),
                      on=["reference", *shared], how="left")
    if link["_row"].isna().any():
        bad = link.loc[link["_row"].isna()].iloc[0]
        raise SchemaError(
            f"the reference has no values for measure {bad['reference']!r}"
            + (f" and {dict((k, bad[k]) for k in shared)}" if shared else "")
        )
    ref_row = link["_row"].to_numpy(np.int64)
    ref_g = ref_w[ref_row]
    in_est, in_ref = np.isfinite(est_w), np.isfinite(ref_g)
    only_est, only_ref = in_est & ~in_ref, in_ref & ~in_est
    if missing == "error" and (only_est.any() or only_ref.any()):
        g = int(np.flatnonzero(only_est.any(axis=1) | only_ref.any(axis=1))[0])
        label = f"measure {keys['measure'].iloc[g]!r}" + (f", {dict(keys.loc[g, by])}" if by else "")
        raise SchemaError(
            f"{where} ({label}): {int(only_est[g].sum())} system(s) of the result lack a reference value "
            f"(first: {list(systems[only_est[g]][:3])}) and {int(only_ref[g].sum())} reference system(s) lack "
            f"a result value (first: {list(systems[only_ref[g]][:3])}); pass missing='warn', 'skip' or 'fill'"
        )
    if missing == "warn" and (only_est.any() or only_ref.any()):
        lost_est, lost_ref = systems[only_est.any(axis=0)], systems[only_ref.any(axis=0)]
        warnings.warn(
            f"{where}: {lost_est.size} system(s) of the result had no reference value (first: "
            f"{sorted(map(str, lost_est))[:3]}) and {lost_ref.size} reference system(s) no result value (first: "
            f"{sorted(map(str, lost_ref))[:3]}); each statistic uses the common systems (see n_runs)",
            PdevalWarning, stacklevel=3,
        )
    mask = in_ref if missing == "fill" else in_est & in_ref
    filled = np.where(only_ref, fill_value, est_w) if missing == "fill" else est_w
    return Aligned(keys, systems, filled, ref_g, mask, ref_row, ref_keys, est_w)
