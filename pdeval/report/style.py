"""What the report's figures share: labels, colours, axes and checks of the frames they draw.

Every figure of :mod:`pdeval.report.figures` and :mod:`pdeval.report.run_figures` builds on
these pieces, so that a measure keeps one colour, a percentage axis stays within 0-100 and a
variant key reads the same way in every title.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import pandas as pd
import seaborn as sns

from pdeval.evaluation.results import summarize
from pdeval.errors import SchemaError

#: axis labels of the statistics of :func:`pdeval.rank_correlation`
METHOD_LABELS = {
    "tau_a": "Kendall's τ_a",
    "tau_b": "Kendall's τ_b",
    "tau_ap": "AP correlation τ_AP",
    "spearman": "Spearman's ρ",
    "pearson": "Pearson's r",
    "rms": "RMS error",
}

#: x-axis labels of the usual variant keys
KEY_LABELS = {
    "level": "judgments kept (% of the full qrels)",
    "depth": "pool depth (documents per run and topic)",
}

#: count columns of summary frames (not keys)
COUNT_COLUMNS = ("n_topics", "n_skipped", "topics", "undefined")

Spread = Union[str, tuple, None]
Palette = Optional[Mapping[str, object]]
STYLE = "whitegrid"
BAND_ALPHA = 0.12


def measure_palette(measures: Sequence[str]) -> dict:
    """One colour per measure, in the order given: seaborn's ``tab10`` (``husl`` beyond 10)."""
    names = list(dict.fromkeys(measures))
    colours = sns.color_palette("tab10" if len(names) <= 10 else "husl", len(names))
    return dict(zip(names, colours))


def palette_for(palette: Palette, order: Sequence[str]) -> dict:
    """``palette`` completed for every measure of ``order`` (missing ones get the default)."""
    if palette is None:
        return measure_palette(order)
    missing = [m for m in order if m not in palette]
    if missing:
        raise SchemaError(f"the palette has no colour for measure(s) {missing}")
    return {m: palette[m] for m in order}


def percent_axis(ax, axis: str) -> None:
    """Keep a percentage axis within 0-100 (seaborn's margins would run past either end)."""
    low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
    inverted = low > high
    low, high = sorted((low, high))
    low, high = max(0.0, low), min(100.0, high)
    limits = (high, low) if inverted else (low, high)
    (ax.set_xlim if axis == "x" else ax.set_ylim)(*limits)


def wrap_label(name: object, width: int = 32) -> str:
    """A long run name broken over lines of at most ``width`` characters, at ``_``/``-``/``.`` if possible."""
    text = str(name)
    lines = []
    while len(text) > width:
        cut = max(text.rfind(sep, 1, width) for sep in ("_", "-", ".", "+"))
        cut = cut + 1 if cut > 0 else width
        lines.append(text[:cut])
        text = text[cut:]
    return "\n".join(lines + [text])


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SchemaError(f"{what} needs column(s) {missing}; the frame has {list(frame.columns)}")


def level_axis(ax, values: Sequence[float], key: str) -> None:
    """Ticks at the levels present (when few), full judgments on the left for ``level``."""
    values = sorted(pd.unique(pd.Series(values).dropna()))
    if 1 < len(values) <= 12:
        ax.set_xticks(values)
        ax.set_xticklabels([f"{v:g}" for v in values])
    if key == "level":
        if not ax.xaxis_inverted():
            ax.invert_xaxis()
        percent_axis(ax, "x")


def spread_label(spread: Spread, samples: int) -> str:
    if spread is None or samples < 2:
        return ""
    if spread == ("pi", 100):
        return f"band: range over {samples} samples"
    if spread == "sd":
        return f"band: ±1 sd over {samples} samples"
    return f"band: {spread} over {samples} samples"


def means_of(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-system means of a per-topic result frame, or the frame itself if already means."""
    if "query_id" in frame.columns:
        return summarize(frame)
    require_columns(frame, ["run", "measure", "value"], "a system-means frame")
    return frame.drop(columns=[c for c in COUNT_COLUMNS if c in frame.columns])


def measure_order(frame: pd.DataFrame, measures: Optional[Sequence[str]]) -> list[str]:
    """The measures to draw, in the given order (default: order of first appearance)."""
    present = list(pd.unique(frame["measure"]))
    if measures is None:
        return present
    missing = [m for m in measures if m not in present]
    if missing:
        raise SchemaError(f"measure(s) {missing} are not in the frame; it has {present}")
    return list(measures)


def variant_keys(frame: pd.DataFrame, exclude: Sequence[str]) -> list[str]:
    """Columns other than ``exclude``, ``measure``, ``value`` and count columns."""
    skip = set(exclude) | {"measure", "value", *COUNT_COLUMNS}
    return [c for c in frame.columns if c not in skip]


#: how a variant key and its value read in a title ("10 % of judgments", "depth-20 pool")
VARIANT_PHRASES = {
    "level": "{:g} % of judgments",
    "depth": "depth-{:g} pool",
    "sample": "sample {}",
}


def variant_text(keys: Sequence[str], values: Sequence[object]) -> str:
    """The variant ``keys`` = ``values`` as words, e.g. ``"10 % of judgments, sample 2"``; keys
    without a phrase of :data:`VARIANT_PHRASES` read ``"key value"``."""
    parts = []
    for key, value in zip(keys, values):
        phrase = VARIANT_PHRASES.get(key)
        try:
            parts.append(phrase.format(float(value) if "g}" in phrase else value) if phrase else f"{key} {value}")
        except (TypeError, ValueError):
            parts.append(f"{key} {value}")
    return ", ".join(parts)


def coinciding(data: pd.DataFrame, x: str, y: str, order: Sequence[str], by: Sequence[str] = ()) -> list[list[str]]:
    """Groups of measures (two or more, in ``order``) whose lines are the same in every panel:
    the same ``x`` positions and ``y`` values within 1e-12. One line of such a group hides the
    others, so a figure names the group in a note."""
    series = {}
    for measure in order:
        part = data[data["measure"] == measure].sort_values([*by, x], kind="stable")
        series[measure] = (part[[*by, x]].astype(str).agg("|".join, axis=1).tolist() if len(part) else [],
                           part[y].to_numpy(float))
    groups: list[list[str]] = []
    for measure in order:
        keys, values = series[measure]
        for group in groups:
            other_keys, other_values = series[group[0]]
            if keys == other_keys and len(values) and (abs(values - other_values) <= 1e-12).all():
                group.append(measure)
                break
        else:
            groups.append([measure])
    return [group for group in groups if len(group) > 1]


def coinciding_note(groups: list[list[str]]) -> str:
    """``"AP, infAP and AP' coincide: one line hides the others"`` for each group of
    :func:`coinciding`, joined with '; '."""
    texts = []
    for group in groups:
        names = ", ".join(group[:-1]) + " and " + group[-1]
        hidden = "the other" if len(group) == 2 else "the others"
        texts.append(f"{names} coincide: one line hides {hidden}")
    return "; ".join(texts)
