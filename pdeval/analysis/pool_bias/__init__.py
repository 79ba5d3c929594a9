"""Pool bias: corrected scores for runs outside the pool (``correction``:
:func:`pdeval.pool_bias_correction`, :func:`pdeval.leave_out_bias`, :func:`pdeval.bias_summary`)
and their array kernels (``kernels``)."""
