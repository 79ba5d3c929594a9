"""Compact letter display of all-pairs comparisons (Piepho 2004, J. Comput. Graph. Stat.).

Runs are sorted by mean, best first; two runs share a letter exactly when they are not
significantly different. For Tukey's HSD (both methods) a pair is significant exactly when
``|diff|`` exceeds one threshold, so the runs that are not significantly different from
each other form *consecutive* groups in the order of the means: each letter is a maximal
block of consecutive runs with no significant pair inside. Other tests (e.g. a corrected
:func:`pdeval.compare`) can give patterns no consecutive blocks express; then the display
would misstate them and :class:`~pdeval.errors.PdevalError` says so.
"""

from __future__ import annotations

import string
from typing import Iterator, Optional

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError, SchemaError

__all__ = ["compact_letter_display", "letters_for", "pair_groups"]

SYMBOLS = string.ascii_lowercase + string.ascii_uppercase
_PAIR_COLUMNS = ("run_a", "run_b", "mean_a", "mean_b", "significant")


def pair_groups(pairs: pd.DataFrame, measure: Optional[str] = None) -> Iterator[tuple[dict, list, np.ndarray, np.ndarray]]:
    """Per (measure, variant) group of an all-pairs frame: ``(keys, runs, means, significant)``
    with runs sorted by mean (best first) and ``significant`` a symmetric m x m bool matrix."""
    missing = [c for c in _PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise SchemaError(
            f"an all-pairs frame (tukey_hsd or compare without baselines) needs column(s) {missing}; "
            f"it has {list(pairs.columns)}"
        )
    if measure is not None:
        if measure not in set(pairs["measure"]):
            raise SchemaError(f"measure {measure!r} is not in the pairs; they have {sorted(set(pairs['measure']))}")
        pairs = pairs[pairs["measure"] == measure]
    columns = list(pairs.columns)
    keys = columns[: columns.index("run_a")]  # measure and variant keys come first
    for key, part in pairs.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        names = pd.concat([part["run_a"], part["run_b"]])
        means = pd.concat([part["mean_a"], part["mean_b"]]).groupby(names.to_numpy(), sort=False).first()
        means = means.sort_values(ascending=False, kind="stable")
        runs = list(means.index)
        m = len(runs)
        if len(part) != m * (m - 1) // 2:
            raise SchemaError(f"{dict(zip(keys, key))}: the pairs are not all {m * (m - 1) // 2} pairs of {m} runs")
        position = pd.Series(np.arange(m), index=runs)
        a = position[part["run_a"]].to_numpy()
        b = position[part["run_b"]].to_numpy()
        significant = np.zeros((m, m), dtype=bool)
        significant[a, b] = significant[b, a] = part["significant"].to_numpy(bool)
        yield dict(zip(keys, key)), runs, means.to_numpy(), significant


def letters_for(significant: np.ndarray) -> list[str]:
    """Letters of runs sorted by mean; see the module docstring."""
    m = significant.shape[0]
    upper = np.triu(significant, k=1)
    # nearest earlier run significantly different from run j (-1 if none)
    rows = np.where(upper, np.arange(m)[:, None], -1)
    nearest = rows.max(axis=0)
    # end[i]: the last j such that runs i..j hold no significant pair
    block = np.maximum.accumulate(np.where(np.arange(m)[None, :] > np.arange(m)[:, None], nearest[None, :], -1), axis=1)
    end = (block < np.arange(m)[:, None]).sum(axis=1) - 1
    shares = np.arange(m)[None, :] <= end[:, None]
    if (np.triu(shares, 1) != np.triu(~significant, 1)).any():
        raise PdevalError(
            "the significant pairs are not consecutive in the order of the means, so a letter "
            "display would misstate them; draw pdeval.report.figures.significance_matrix instead"
        )
    starts = np.flatnonzero(np.r_[True, end[1:] > end[:-1]])
    if starts.size > len(SYMBOLS):
        raise PdevalError(f"{starts.size} letter groups are more than the {len(SYMBOLS)} letters available")
    member = (np.arange(m)[None, :] >= starts[:, None]) & (np.arange(m)[None, :] <= end[starts][:, None])
    return ["".join(SYMBOLS[g] for g in np.flatnonzero(member[:, i])) for i in range(m)]


def compact_letter_display(pairs: pd.DataFrame, measure: Optional[str] = None) -> pd.DataFrame:
    """Letters per run from an all-pairs comparison frame (:func:`pdeval.tukey_hsd` output).

    Returns one row per (measure, variant, run), best mean first: ``rank`` (1 = best),
    ``run``, ``mean``, ``letters`` (runs sharing a letter are not significantly different).
    """
    frames = []
    for keys, runs, means, significant in pair_groups(pairs, measure):
        frames.append(
            pd.DataFrame(
                {**{k: [v] * len(runs) for k, v in keys.items()}, "rank": np.arange(1, len(runs) + 1),
                 "run": runs, "mean": means, "letters": letters_for(significant)}
            )
        )
    return pd.concat(frames, ignore_index=True)
