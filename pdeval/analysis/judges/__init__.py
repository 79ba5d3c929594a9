"""Labels and judges: label provenance, label sets, grade scales, merging and holes (``labels``),
agreement between label sets (``agreement``) and leaderboards under each label set (``leaderboards``)."""
