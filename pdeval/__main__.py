"""``python -m pdeval`` runs the ``pdeval`` command."""

import sys

from .cli import main

sys.exit(main())
