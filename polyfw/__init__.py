"""What users call: solve, the scipy drop-in, compare, the CLI and the tuning table.

The application layer sits above the generators: tiling <- schedules <- codegen <- polyfw.
"""
from .compare import compare
from .scipy_api import floyd_warshall
from .solve import NegativeCycleError, solve, tuning_table

__all__ = ["NegativeCycleError", "compare", "floyd_warshall", "solve", "tuning_table"]
