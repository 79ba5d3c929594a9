"""Labels and judges: label provenance, label sets, grade scales, merging and holes (``labels``),
agreement between label sets (``agreement``; per topic with the TREC Auto-Judge measures:
``qrels_agreement``) and leaderboards under each label set (``leaderboards``)."""
