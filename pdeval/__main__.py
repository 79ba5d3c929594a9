"""``python -m pdeval`` runs the ``pdeval`` command."""

import sys

from pdeval.cli.commands import main

sys.exit(main())
