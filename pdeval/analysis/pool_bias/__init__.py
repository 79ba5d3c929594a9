"""Pool bias: corrected scores for runs outside the pool (``correction``:
:func:`pdeval.pool_bias_correction`, :func:`pdeval.leave_out_bias`, :func:`pdeval.bias_summary`),
their array kernels (``kernels``), and the leave-out qrels they are judged on (``leave_out``:
:func:`pdeval.leave_out_pooling`): the leave-one-out pool experiments in one place."""
