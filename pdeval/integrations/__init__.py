"""pdeval in the IR ecosystem: outbound conversions and other tools' entry points.

One module per peer:

* :mod:`.arrow` -- results (and any frame) as Polars DataFrames or pyarrow Tables
  (``output="polars"`` / ``"arrow"`` of :func:`pdeval.evaluate`);
* :mod:`.ir_measures` -- pdeval measures as ir_measures measures (so in
  ``ir_measures.calc_aggregate`` and PyTerrier's ``pt.Experiment``);
* :mod:`.pyterrier` -- ``pt.Experiment``-compatible test callables and
  :func:`~.pyterrier.experiment`, PyTerrier's experiment table from pdeval's paired tests;
* :mod:`.ranx` -- :func:`~.ranx.to_ranx` (and :func:`~.ranx.from_ranx`);
* :mod:`.trec_eval` -- trec_eval's measure names, nicknames and output, read and written.

The inbound direction (Polars, Arrow, ranx objects, ir_datasets records, ir_measures measure
objects taken wherever pdeval takes a frame or a measure) lives in the lowest layer that needs
it: :mod:`pdeval.frames.foreign` and :mod:`pdeval.measures.foreign`. The peers are imported
only when an object of theirs is met.
"""
