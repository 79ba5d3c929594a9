"""System rankings compared: the coefficients (``coefficients``), rank correlation between result
frames (``correlation``), agreement of ranked lists (``ranked_lists``: RBO, Kendall's tau union)
and the sensitivity of training to the measure (``training``)."""
