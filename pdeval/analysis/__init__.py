"""Analyses of result frames: correlation of rankings, significance, many-system statistics,
automatic-label agreement and training experiments."""
