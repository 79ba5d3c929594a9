"""Judgments made incomplete or designed: reduction, pooling, sampling designs."""
