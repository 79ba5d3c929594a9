"""Analyses of result frames and label sets, one subpackage per concern.

``estimates`` (the estimate with intervals, its priors, prediction-powered inference),
``pool_bias`` (corrections for runs outside the pool), ``judges`` (label sets, provenance,
agreement, leaderboards under each label set), ``rankings`` (rank correlation, its
coefficients, ranked-list agreement, training sensitivity), ``statistics`` (paired tests,
discriminative power, swap rates, score matrices, Tukey HSD, ANOVA, topic-set size) and
``reproducibility`` (Breuer et al.'s measures, score standardisation); ``bundle`` holds the
result frames that carry further views.
"""
