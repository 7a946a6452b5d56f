"""Progress bars are tqdm's: a bar with the rate in a terminal (or wherever asked), nothing in a pipe or
a log unless asked, a widget in Jupyter."""
import nbformat
import numpy as np
from nbclient import NotebookClient

import polyfw
from polyfw.progress import bar, in_notebook, say_above


def test_a_bar_is_drawn_where_asked_and_not_into_a_pipe(capsys):
    assert not in_notebook()
    shown = bar(3, "steps", unit="step", show=True)
    shown.update(3)
    shown.close()
    drawn = capsys.readouterr().err
    assert "steps" in drawn and "3/3" in drawn and "step/s" in drawn
    quiet = bar(3, "steps")  # stderr is captured here: not a terminal
    quiet.update(3)
    quiet.close()
    assert quiet.disable and capsys.readouterr().err == ""


def test_a_task_that_says_its_parts_moves_its_bar(capsys):
    shown = bar(2, "calibrate", unit="part", show=True)
    said = []
    say = say_above(shown, said.append)
    say("first part: 1.0 G/s")
    say("second part: 2.0 G/s")
    shown.close()
    assert said == ["first part: 1.0 G/s", "second part: 2.0 G/s"] and shown.n == 2
    assert "2/2" in capsys.readouterr().err


def test_compare_and_solve_batch_draw_their_bars_when_asked(capsys, monkeypatch):
    from polyfw import batch as module

    matrix = np.array([[0.0, 1.0, np.inf], [np.inf, 0.0, 2.0], [3.0, np.inf, 0.0]])
    polyfw.compare(matrix, ["classic:tile=2"], repeats=1, with_cost=False, progress=True)
    assert "compare" in capsys.readouterr().err
    polyfw.compare(matrix, ["classic:tile=2"], repeats=1, with_cost=False)
    assert capsys.readouterr().err == ""  # by default only in a terminal or a notebook
    monkeypatch.setattr(module, "PROGRESS_CHUNK", 32)
    graphs = [np.array([[0, 1], [1, 0]]) for _ in range(100)]
    sizes = [2] * 100
    assert np.array_equal(polyfw.solve_batch(graphs, sizes, progress=True), polyfw.solve_batch(graphs, sizes))
    drawn = capsys.readouterr().err
    assert "solve_batch" in drawn and "100/100" in drawn and "graph/s" in drawn


def test_a_dataflow_solve_counts_its_tile_layers_when_asked(capsys):
    from scipy.sparse.csgraph import shortest_path

    rng = np.random.default_rng(5)
    matrix = np.where(rng.random((64, 64)) < 0.1, rng.integers(1, 9, (64, 64)), np.inf)
    np.fill_diagonal(matrix, 0.0)
    found = polyfw.solve(matrix, schedule="classic:tile=16,runtime=dataflow", progress=True)
    assert np.array_equal(found, shortest_path(np.where(np.isinf(matrix), 0, matrix)))
    drawn = capsys.readouterr().err
    assert "solve" in drawn and "64/64" in drawn and "tile-layer" in drawn  # 4 x 4 x 4 tile-layers
    polyfw.solve(matrix, schedule="classic:tile=16,runtime=dataflow")  # small: no bar unless asked
    assert capsys.readouterr().err == ""


def test_in_a_notebook_a_bar_is_a_widget():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(
        "from polyfw.progress import bar, in_notebook\nassert in_notebook()\n"
        "import tqdm.notebook\nshown = bar(2, 'steps')\nshown.update(2)\nshown.close()\n"
        "print(isinstance(shown, tqdm.notebook.tqdm))")]
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    outputs = notebook.cells[0].outputs
    assert any("application/vnd.jupyter.widget-view+json" in output.get("data", {}) for output in outputs), outputs
    assert any(output.get("text", "").strip() == "True" for output in outputs), outputs
