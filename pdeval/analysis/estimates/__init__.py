"""Estimates with intervals of the scores runs would get if their unjudged documents were judged:
the estimator (``core``: :func:`pdeval.estimate`), its priors (``label_priors``, ``unique_priors``:
:func:`pdeval.unique_factors`), the measures recomputed on many label draws at once (``resampled``)
and prediction-powered inference (``ppi``)."""
