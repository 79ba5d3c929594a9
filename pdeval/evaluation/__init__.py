"""One pass of every measure over every run and qrels variant, the result-frame toolkit,
and bounds of scores under the unjudged documents' possible labels."""
