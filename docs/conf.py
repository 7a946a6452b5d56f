"""Sphinx configuration of polyfw's documentation site: `make docs` builds it into docs/_build/html, with
warnings as errors (`make test` builds it too). The pages are Markdown (MyST); the notebooks are shown
with the outputs committed with them (tests/test_notebooks.py checks those outputs); the API reference
comes from the docstrings; the performance page is written from the benchmarks' records at each build."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from performance import performance_page  # noqa: E402  (docs/performance.py)

project = "polyfw"
author = "the polyfw authors"
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.viewcode"]
html_theme = "furo"
html_title = "polyfw"
exclude_patterns = ["_build", "notebooks/.ipynb_checkpoints", "notebooks/*.png"]
# the notebooks carry the outputs of a run at their small sizes; the site shows those
nb_execution_mode = "off"
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"

(HERE / "performance.md").write_text(performance_page(ROOT / "benchmarks" / "results.jsonl",
                                                       ROOT / "polyfw" / "machine" / "gpu_measurements.json"))
