"""Helpers every layer may use: option checks, the seed and progress options, threads, Arrow chunks.

Nothing here knows a frame, a measure or a file format; only :mod:`pdeval.errors` is below.
"""
