"""Schedule exploration, its roles named as TVM's MetaSchedule separates them.

space: the candidates, read from the families' and the target's declarations (Space, Candidate);
strategies: how candidates are proposed (the STRATEGIES registry); model: the cost model that
ranks them (Model); runners: where a proved candidate runs (Runner, RunHere, Problem, Outcome);
search: the driver that proves, runs, times and records (explore, Exploration); store: the
results and searches that outlive a run (Store, Record, StoredSearch); axes: the narrowed values
checked (check_axes); budget: a run's time and candidate budgets (Budget); compare: two stores'
measurements side by side (compare_stores); plots: its pictures; mpi: the runner of a collective
target (Team, serve); mutants: orders beyond the families.
"""
from .axes import check_axes
from .budget import Budget
from .compare import compare_stores
from .model import Model, calibration_for, predict, ranked
from .runners import Outcome, Problem, Recipe, Runner, RunHere, first_difference, machine
from .search import (Exploration, Progress, Tuned, best_line, explore, measure, model_for, proved, quality_line,
                     refusal_of, table, tune)
from .space import Candidate, Space, build_candidate, default_families, label
from .store import DEFAULT_STORE, DamagedStoreError, Record, Store, StoredSearch
from .strategies import STRATEGIES, Search, Strategy, find_strategy, order_candidates, refine, register

__all__ = ["Budget", "Candidate", "DEFAULT_STORE", "DamagedStoreError", "Exploration", "Model", "Outcome", "Problem",
           "Progress", "Recipe", "Record", "RunHere", "Runner", "STRATEGIES", "Search", "Space", "Store",
           "StoredSearch", "Strategy", "Tuned", "best_line", "build_candidate", "check_axes", "compare_stores",
           "default_families", "explore", "find_strategy", "first_difference", "label", "machine", "calibration_for",
           "measure", "model_for", "order_candidates", "predict", "proved", "quality_line", "ranked", "refine",
           "refusal_of", "register", "table", "tune"]
