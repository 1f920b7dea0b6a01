"""``python -m posenc_helpers.configs CONFIG.json``: explain a model's positions (see :func:`main`)."""

import sys

from posenc_helpers.configs import main

sys.exit(main())
