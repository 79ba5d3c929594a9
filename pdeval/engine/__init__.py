"""The engine: ids packed into integers, trec_eval's ordering, the judgment index, segments.

It turns canonical run and qrels frames into sorted arrays with group offsets that the
measure kernels read; it knows no file format, no adapter and no measure.
"""
