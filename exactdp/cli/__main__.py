import sys

from exactdp.cli import main

sys.exit(main())
