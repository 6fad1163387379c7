"""``python -m dsasim.cli`` is the ``dsasim`` command."""

import sys

from dsasim.cli import main

sys.exit(main())
