"""Statistics that keep topics paired: Tukey's HSD (randomised and parametric), ANOVA with
Sakai's effect sizes, and topic-set-size design. The paired two-run tests, discriminative
power and swap rates are in :mod:`pdeval.significance`."""

from .anova import Anova, anova
from .topic_set_size import topic_set_size
from .tukey import tukey_hsd

__all__ = ["Anova", "anova", "topic_set_size", "tukey_hsd"]
