"""`python -m hspc_gen` is `hspc-gen`."""

import sys

from hspc_gen.cli.main import main

sys.exit(main())
