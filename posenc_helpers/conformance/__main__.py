"""``python -m posenc_helpers.conformance KIND MODULE:FUNCTION ...``: see :func:`~posenc_helpers.conformance.main`."""

import sys

from posenc_helpers.conformance import main

sys.exit(main())
