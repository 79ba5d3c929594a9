"""Statistics that keep topics paired: Tukey's HSD (randomised and parametric), ANOVA with
Sakai's effect sizes, topic-set-size design, and the compact letter display. The paired two-run tests, discriminative
power and swap rates are in :mod:`pdeval.analysis.statistics.significance`."""

from pdeval.analysis.statistics.anova import Anova, anova
from pdeval.analysis.statistics.letters import compact_letter_display
from pdeval.analysis.statistics.topic_set_size import topic_set_size
from pdeval.analysis.statistics.tukey import tukey_hsd

__all__ = ["Anova", "anova", "compact_letter_display", "topic_set_size", "tukey_hsd"]
