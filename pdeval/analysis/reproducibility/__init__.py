"""Reproducibility (``core``: Breuer et al.'s measures, :func:`pdeval.reproducibility`) and score
standardisation (``standardize``: :func:`pdeval.standardize`, :func:`pdeval.zscore_table`)."""
