"""Statistics that keep topics paired: Tukey's HSD (randomised and parametric), ANOVA with
Sakai's effect sizes, topic-set-size design, and the compact letter display. The paired two-run tests, discriminative
power and swap rates are in :mod:`pdeval.significance`."""

from .anova import Anova, anova
from .letters import compact_letter_display
from .topic_set_size import topic_set_size
from .tukey import tukey_hsd

__all__ = ["Anova", "anova", "compact_letter_display", "topic_set_size", "tukey_hsd"]
