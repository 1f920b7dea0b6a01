"""``python -m posenc_helpers.configs CONFIG.json``: explain a model's positions (see :func:`.cli.main`)."""

import sys

from posenc_helpers.configs.cli import main

sys.exit(main())
