"""Sources: files (TREC runs and qrels, sampled qrels, prels, Parquet and Arrow IPC) read
into canonical frames, and canonical frames written back.

One module per concern, each importing only those listed before it: ``tables`` (Parquet /
Arrow IPC files and in-memory objects), ``paths`` (paths, directories, patterns, run names),
``blocks`` (decompression into blocks of lines), ``tokens`` (fields of lines: Arrow and
Python paths), ``checks`` (a file's frame validated, naming the file), ``runparse`` and
``runs`` (run files), ``sampled`` (sample_eval qrels, statAP prels), ``qrels`` (qrels files),
``writers``; ``io`` gathers the public readers and writers and documents the rules.
"""
