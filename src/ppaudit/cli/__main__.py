"""``python -m ppaudit.cli``: the ``ppaudit`` command (:func:`ppaudit.cli.main`)."""

import sys

from . import main

sys.exit(main())
