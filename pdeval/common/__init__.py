"""Helpers every layer may use: option checks, progress bars, threads, Arrow chunks.

Nothing here knows a frame, a measure or a file format; only :mod:`pdeval.errors` is below.
"""
