"""Every notebook runs top to bottom (each is written to run in seconds at its default sizes), and the
copies in the repository carry the outputs of such a run, so a reader sees them without running anything."""
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
#: one notebook per seed paper (seedNNN_*.ipynb) reproducing its headline figure, and the tutorial
SEED_NOTEBOOKS = [path for path in NOTEBOOKS if path.name.startswith("seed")]
SCALED_NOTEBOOKS = SEED_NOTEBOOKS + [path for path in NOTEBOOKS if path.name == "tutorial.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()


def test_there_are_notebooks():
    assert NOTEBOOKS


def test_every_seed_paper_has_a_notebook_and_there_is_a_tutorial():
    assert {path.name[:7] for path in SEED_NOTEBOOKS} >= {f"seed{number:03d}" for number in range(5)}
    assert any(path.name == "tutorial.ipynb" for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_copy_was_executed_top_to_bottom(path):
    """Every code cell ran, once, in order, in one kernel, and none ended in an error."""
    code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    assert code
    assert [cell.get("execution_count") for cell in code] == list(range(1, len(code) + 1)), \
        f"{path.name}: execute the notebook and save it with its outputs"
    errors = [output for cell in code for output in cell.outputs if output.output_type == "error"]
    assert not errors, f"{path.name}: saved with an error: {errors[0].get('ename')}: {errors[0].get('evalue')}"


@pytest.mark.parametrize("path", SEED_NOTEBOOKS, ids=lambda p: p.name)
def test_committed_seed_notebook_shows_a_figure(path):
    notebook = nbformat.read(path, as_version=4)
    images = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
              if "image/png" in output.get("data", {})]
    assert images, f"{path.name}: no figure in the saved outputs"


@pytest.mark.parametrize("path", SCALED_NOTEBOOKS, ids=lambda p: p.name)
def test_first_code_cell_is_the_parameter_cell(path):
    """Small sizes by default; the papers' sizes with POLYFW_NOTEBOOK_SCALE=paper."""
    first = next(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    assert "os.environ.get('POLYFW_NOTEBOOK_SCALE') == 'paper'" in first.source
    assert "PAPER" in first.source
