"""Analyses of result frames and label sets.

``scores`` (runs x topics score matrices), ``coefficients`` and ``correlation`` (comparing
system rankings), ``significance`` (paired tests between runs), ``bootstrap``
(discriminative power), ``swaps`` (swap rates), ``statistics/`` (Tukey HSD, ANOVA, topic set
size), ``labels`` (provenance, merging, grade scales, holes), ``agreement`` (kappa, alpha),
``leaderboards`` (rankings under each label set), ``experiments`` (training sensitivity) and
``bundle`` (the result objects that show their summary table)."""
