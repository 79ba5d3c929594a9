"""Presentation: seaborn figures from result frames, and the whole study as an HTML report."""
