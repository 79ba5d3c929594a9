"""Statistics that keep topics paired: Tukey's HSD (randomised and parametric), ANOVA with
Sakai's effect sizes, topic-set-size design and the compact letter display; beside them the
paired two-run tests (``significance``), discriminative power (``bootstrap``), swap rates
(``swaps``) and the runs x topics score matrices they share (``scores``)."""

from pdeval.analysis.statistics.anova import Anova, anova
from pdeval.analysis.statistics.letters import compact_letter_display
from pdeval.analysis.statistics.topic_set_size import topic_set_size
from pdeval.analysis.statistics.tukey import tukey_hsd

__all__ = ["Anova", "anova", "compact_letter_display", "topic_set_size", "tukey_hsd"]
