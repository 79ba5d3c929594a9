"""trec_eval in one place: its measure names and nicknames, its output read and written.

* :mod:`.names` -- ``-m`` specifications (``map``, ``P.5,10``, ``official``, ``all_trec``)
  as pdeval measures, the names trec_eval prints and its print order;
* :mod:`.output` -- trec_eval's rows and text (``all`` lines: sums, means, geometric means;
  counts as integers; relstring), :func:`write_trec_eval`;
* :mod:`.reading` -- :func:`read_trec_eval`, trec_eval (or ``pdeval eval``) output as a
  result frame.

``pdeval eval`` (:mod:`pdeval.cli.commands`) prints through this package; nothing here
imports the command line.
"""

from pdeval.integrations.trec_eval.output import trec_eval_name, trec_eval_table, tsv_text, write_trec_eval
from pdeval.integrations.trec_eval.reading import read_trec_eval

__all__ = ["read_trec_eval", "trec_eval_name", "trec_eval_table", "tsv_text", "write_trec_eval"]
