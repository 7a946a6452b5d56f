#!/usr/bin/env bash
# What a user of the published package gets: build the wheel from the project's files alone, install
# it (not editable) into a fresh virtual environment, and use it from outside the source tree.
# `make test` runs this first; an editable install hides a module or a data file the wheel lacks.
set -euo pipefail
source_tree=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d -t polyfw-wheel-XXXXXX)
trap 'rm -rf "$work"' EXIT

# a copy of what is tracked or would be (never build/ or a stale egg-info left by an earlier build)
mkdir "$work/source"
if git -C "$source_tree" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$source_tree" ls-files -z --cached --others --exclude-standard \
        | (cd "$source_tree" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _) \
        | (cd "$source_tree" && tar -c --null -T -) | tar -x -C "$work/source"
else
    (cd "$source_tree" && tar -c --exclude=./.venv --exclude=./build .) | tar -x -C "$work/source"
fi

"$python" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --quiet --disable-pip-version-check)
"${pip[@]}" wheel --no-deps -w "$work/dist" "$work/source"
# --no-compile: byte-compiling every dependency took half of the install
"${pip[@]}" install --no-compile -c "$source_tree/constraints.txt" "$work"/dist/polyfw-*.whl

# the user's code cache is shared (a wheel's kernels are the source tree's: compiled once per machine)
cd "$work"
OMP_WAIT_POLICY=passive "$work/venv/bin/python" - "$work/venv" <<'EOF'
import importlib
import pkgutil
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import shortest_path

venv = Path(sys.argv[1]).resolve()
modules = []
for top in ("tiling", "schedules", "codegen", "polyfw"):
    package = importlib.import_module(top)
    modules.append(package)
    modules += [importlib.import_module(info.name)
                for info in pkgutil.walk_packages(package.__path__, prefix=f"{top}.")]
outside = [m.__name__ for m in modules if venv not in Path(m.__file__).resolve().parents]
assert not outside, f"imported from outside the installed wheel: {outside}"

import polyfw
from polyfw.machine.tuning import shipped_path
from polyfw.graphs import as_float_distances, power_grid

assert shipped_path().is_file(), f"the tuning table is not in the wheel: {shipped_path()}"
assert power_grid().n == 4941, "the power grid's edge list is not in the wheel"
rng = np.random.default_rng(1)
weights = rng.integers(1, 20, size=(40, 40)).astype(float)
weights[rng.random((40, 40)) < 0.8] = 0  # no arc
graph = csr_array(weights)
expected = shortest_path(graph, method="FW")
assert np.array_equal(as_float_distances(polyfw.solve(graph)), expected), "dense solve differs from scipy"
assert np.array_equal(polyfw.solve(graph, method="sparse"), expected), "sparse solve differs from scipy"

import networkx as nx  # the wheel's entry points make polyfw a networkx backend

directed = nx.from_scipy_sparse_array(graph, create_using=nx.DiGraph)
assert np.array_equal(nx.floyd_warshall_numpy(directed, backend="polyfw"), expected), "the networkx backend differs"
print(f"wheel: {len(modules)} modules imported from {venv}; dense and sparse solve and the networkx backend exact")
EOF
"$work/venv/bin/polyfw" deps --n 4 >/dev/null
echo "wheel: polyfw deps runs"
