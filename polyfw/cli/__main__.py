"""`python -m polyfw.cli ...`: the `polyfw` command."""
import sys

from .main import main

if __name__ == "__main__":  # imported (a walk over every module) it runs nothing
    sys.exit(main())
