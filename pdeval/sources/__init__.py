"""Sources: files (TREC runs and qrels, sampled qrels, prels, Parquet and Arrow IPC) read
into canonical frames, and canonical frames written back."""
