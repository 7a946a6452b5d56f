"""The calibrated model (schedules.predict), its measurement (polyfw.machine.calibrate), the rule that
prunes refuted stage orders, and the stratified order an exploration samples in."""
import itertools
from dataclasses import replace

import numba
import numpy as np
import pytest

from polyfw.explore import Space, explore
from polyfw.explore.model import Model, calibration_for
from polyfw.explore.store import Store
from polyfw.explore.strategies import stratified
from polyfw.machine import calibrate, calibrations
from polyfw.method import fastest_exact
from schedules import build, packing
from schedules.cost import tile_view
from schedules.order_rules import order_settings, refuted_orders
from schedules.predict import PREDICTED_PARTS, Calibration, predict, task_loads
from schedules.stages import ROLES
from codegen.intrinsics import vector_width
from codegen.profile import RunProfile, relaxations_by_role
from codegen.register_blocks import BlockChoice, label_shape


def _calibration(**changed) -> Calibration:
    given = dict(dtype="float32", threads=2,
                 relaxation={32: dict(zip(ROLES, (4e-10, 1e-10, 1e-10, 1e-10))),
                             128: dict(zip(ROLES, (1e-10, 5e-11, 5e-11, 4e-11)))},
                 element_load={1 << 24: {32: 1e-9, 128: 2e-9}}, in_cache_bytes=1 << 20,
                 stage={"compiled": 20e-6, "replayed": 40e-6}, driver={"compiled": 50e-9, "replayed": 0.0},
                 task=1e-6, dataflow={"dataflow": 2e-6})
    return Calibration(**{**given, **changed})


def test_a_prediction_is_the_sum_of_its_parts_and_reads_every_part_of_the_calibration():
    view = tile_view(build("classic", 256, 32))
    calibration = _calibration()
    barrier = predict(view, calibration, "barrier", "compiled")
    assert set(barrier.parts) == set(PREDICTED_PARTS)
    assert barrier.seconds == pytest.approx(sum(barrier.parts.values()))
    assert barrier.parts["between stages"] == pytest.approx(view.n_stages * 20e-6 + len(view.units) * 50e-9)
    # the DD tile-layers' relaxations at the DD rate, over 2 threads
    dd = 7 * 7 * 8 * 32**3
    assert barrier.parts["DD"] == pytest.approx(dd * 1e-10 / 2)
    assert barrier.parts["memory"] == 0.0  # 256 KiB: in cache
    assert barrier.parts["waiting in stages"] > 0  # the pivot runs alone
    flow = predict(view, calibration, "dataflow")
    assert flow.parts["runtime"] == pytest.approx(len(view.units) * 2e-6 / 2) and flow.parts["between stages"] == 0
    with pytest.raises(ValueError, match="runtime 'dataflow-shared' is not calibrated; calibrated: barrier, dataflow"):
        predict(view, calibration, "dataflow-shared")
    assert "DD" in barrier.explain() and "predicted" in barrier.explain().splitlines()[-1]


def test_stragglers_lengthen_a_barrier_runtimes_stages_and_not_a_dataflow_runtimes():
    view = tile_view(build("classic", 256, 32))
    even, uneven = _calibration(), _calibration(straggle=0.1)
    before, after = predict(view, even, "barrier", "compiled"), predict(view, uneven, "barrier", "compiled")
    spans = sum(before.parts[part] for part in (*ROLES, "memory", "waiting in stages"))
    assert after.parts["waiting in stages"] - before.parts["waiting in stages"] == pytest.approx(0.1 * spans)
    assert predict(view, uneven, "dataflow").seconds == predict(view, even, "dataflow").seconds


def test_a_stages_start_a_call_and_the_stragglers_are_told_apart():
    truth = _calibration(stage={"compiled": 30e-6}, driver={"compiled": 80e-9}, task=0.0, straggle=0.07)
    runs = [calibrate._Run(view, RunProfile(predict(view, truth, driver="compiled").seconds, 2, {}), "compiled")
            for n in (256, 512, 1024) for tile in (32, 128) for family, params in calibrate._families(n, tile)
            for view in [tile_view(build(family, n, tile, **params))]]
    fitted = calibrate._overheads(runs, _calibration(stage={}, driver={}, task=0.0))
    assert fitted.stage["compiled"] == pytest.approx(30e-6, rel=1e-6)
    assert fitted.driver["compiled"] == pytest.approx(80e-9, rel=1e-6)
    assert fitted.task == pytest.approx(0.0, abs=1e-12) and fitted.straggle == pytest.approx(0.07, rel=1e-6)


def test_out_of_cache_a_task_pays_for_the_elements_it_loads_and_keeping_blocks_saves_it():
    calibration = _calibration(element_load={1 << 12: {32: 1e-9, 128: 2e-9}}, in_cache_bytes=1 << 10)  # all spill
    classic, kept = (tile_view(build(f, 512, 128, **kw)) for f, kw in (("classic", {}), ("generalized", {"kappa": 4})))
    assert task_loads(classic).sum() > task_loads(kept).sum()
    assert predict(kept, calibration).parts["memory"] < predict(classic, calibration).parts["memory"]
    assert predict(classic, calibration).parts["memory"] == pytest.approx(task_loads(classic).sum() * 2e-9 / 2)


def test_a_task_whose_blocks_outgrow_the_threads_cache_loads_them_again():
    view = tile_view(build("generalized", 512, 64, kappa=8))
    unlimited, small = task_loads(view), task_loads(view, capacity=64 * 64)  # one block: none kept
    assert (small >= unlimited).all() and small.sum() > unlimited.sum()
    # a task of one tile-layer loads its three blocks whatever the cache holds
    classic = tile_view(build("classic", 512, 64))
    assert np.array_equal(task_loads(classic), task_loads(classic, capacity=64 * 64))
    roomy = _calibration(element_load={1 << 12: {64: 1e-9}}, in_cache_bytes=1 << 10, private_cache_bytes=1 << 30)
    cramped = replace(roomy, private_cache_bytes=64 * 64 * 4)
    assert predict(view, cramped).parts["memory"] > predict(view, roomy).parts["memory"]


def test_packed_operands_are_priced_by_their_rate_their_copies_and_the_loads_they_save(monkeypatch):
    """Classic with panels: its DD tile-layers at the micro-panel rate, each operand block copied once a
    stage (each stage paying its own start), and out of cache a product loads only the block it writes.
    The dataflow runtime's products read the blocks their publishers copied once a layer, with no stage to
    start; past the panels' memory bound they read in place."""
    n, tile = 512, 128
    packed, in_place = (tile_view(build("classic", n, tile, panels=flag)) for flag in (True, False))
    dd = packed.role == ROLES.index("DD")
    assert np.array_equal(packed.packed, dd) and not in_place.packed.any()
    calibration = _calibration(element_load={1 << 12: {tile: 2e-9}}, in_cache_bytes=1 << 10,
                               packed={tile: 2e-11}, pack=3e-9, pack_stage=1e-4)
    on, off = predict(packed, calibration), predict(in_place, calibration)
    relaxations = 3 * 3 * 4 * tile**3  # the DD tile-layers: (Q - 1)^2 blocks a layer, Q layers
    assert on.parts["DD"] == pytest.approx(relaxations * 2e-11 / 2)
    assert off.parts["DD"] == pytest.approx(relaxations * 4e-11 / 2) and off.parts["packing"] == 0
    # each stage packs A's 3 blocks of its column and B's 3 of its row, each read from memory
    assert on.parts["packing"] == pytest.approx(4 * 1e-4 + 4 * 6 * tile**2 * (3e-9 + 2e-9) / 2)
    saved = task_loads(in_place).sum() - task_loads(packed, on_panels=dd).sum()
    assert saved == 4 * 9 * 2 * tile**2  # every DD tile-layer's two operand blocks
    assert off.parts["memory"] - on.parts["memory"] == pytest.approx(saved * 2e-9 / 2)
    flow_on, flow_off = (predict(view, calibration, "dataflow") for view in (packed, in_place))
    assert flow_on.parts["DD"] == pytest.approx(on.parts["DD"]) and flow_off.parts["DD"] == pytest.approx(off.parts["DD"])
    assert flow_on.parts["packing"] == pytest.approx(4 * 6 * tile**2 * (3e-9 + 2e-9) / 2)
    assert flow_off.parts["packing"] == 0
    monkeypatch.setattr(packing, "PUBLISHED_BYTES", 2 * n * n * 4 - 1)
    assert predict(packed, calibration, "dataflow").seconds == pytest.approx(flow_off.seconds)
    # a calibration that never measured panels prices their products as in-place ones
    assert predict(packed, _calibration()).parts["DD"] == pytest.approx(predict(in_place, _calibration()).parts["DD"])


def test_a_call_is_paid_once_for_a_layer_products_layers():
    """A tile kernel's call cost is charged per call: a generalized task's κ layers of one block are one."""
    classic, kept = (tile_view(build(f, 256, 32, **kw)) for f, kw in (("classic", {}), ("generalized", {"kappa": 4})))
    assert kept.call_start.sum() < classic.call_start.sum() == len(classic.units)
    for view in (classic, kept):
        without, with_calls = predict(view, _calibration()), predict(view, _calibration(call={32: 1e-6}))
        added = sum(with_calls.parts[role] - without.parts[role] for role in ROLES)
        assert added == pytest.approx(view.call_start.sum() * 1e-6 / 2)
    assert Calibration.from_dict(_calibration(call={32: 1e-6}).as_dict()).call == {32: 1e-6}


def _profiled_run(view, per_relaxation: dict, call: float, load: float = 0.0, threads: int = 2) -> calibrate._Run:
    """A run whose role times are what the given parts make of its view (load: per element a task loads)."""
    counts = relaxations_by_role(view.n, view.tile)
    calls = calibrate._calls_by_role(view)
    seconds = {role: (per_relaxation[role] * counts[role] + call * calls[r]) / threads for r, role in enumerate(ROLES)}
    seconds["DD"] += load * task_loads(view).sum() / threads  # (every extra load in the products)
    return calibrate._Run(view, RunProfile(sum(seconds.values()), threads, seconds), "compiled")


def test_two_families_tell_a_calls_cost_from_a_relaxations():
    entering, per_element = 1e-6, 2e-10  # a call: entering it, and its block's elements loaded and stored
    rates = {32: (4e-10, 1e-10, 1.2e-10, 5e-11), 64: (2e-10, 6e-11, 6e-11, 4e-11)}
    truth = {tile: (dict(zip(ROLES, by_role)), entering + per_element * tile**2) for tile, by_role in rates.items()}
    runs = [_profiled_run(tile_view(build(family, 512, tile, **params)), *truth[tile])
            for tile in truth for family, params in calibrate._families(512, tile)]
    relaxation, call = calibrate._rates_and_calls(runs)
    for tile, (rates, cost) in truth.items():
        assert call[tile] == pytest.approx(cost, rel=1e-6)
        assert relaxation[tile] == pytest.approx(rates, rel=1e-6)
    # beyond them, one cost per element loaded, over both families' runs at a size
    calibration = _calibration(relaxation=relaxation, call=call, private_cache_bytes=0)
    spilled = [_profiled_run(tile_view(build(family, 512, 64, **params)), *truth[64], load=3e-9)
               for family, params in calibrate._families(512, 64)]
    assert calibrate._element_load(spilled, calibration) == pytest.approx(3e-9, rel=1e-6)


def test_no_role_is_fitted_faster_than_the_fastest_register_block_and_the_calls_stay_apart():
    """A noisy run can leave a role's whole time to the calls: fitted without a floor its rate is 0 and
    the calls fold back into the rates; with the fastest block's rate as the floor, no rate passes it."""
    call, floor = 1e-6 + 2e-10 * 32**2, 5e-12
    # tile 32's pivots timed below what their calls alone cost (a noisy run)
    rates = {32: dict(zip(ROLES, (-1e-12, 1e-10, 1.2e-10, 5e-11))), 64: dict(zip(ROLES, (2e-10, 6e-11, 6e-11, 4e-11)))}
    runs = [_profiled_run(tile_view(build(family, 512, tile, **params)), rates[tile], call)
            for tile in rates for family, params in calibrate._families(512, tile)]
    assert calibrate._rates_and_calls(runs)[1] == {}
    relaxation, calls = calibrate._rates_and_calls(runs, floor)
    assert min(min(by_role.values()) for by_role in relaxation.values()) >= floor
    assert relaxation[32]["I"] == pytest.approx(floor)  # the noisy role at the floor; the others near the truth
    assert calls[32] == pytest.approx(call, rel=0.2) and relaxation[32]["DD"] == pytest.approx(5e-11, rel=0.1)
    assert calls[64] == pytest.approx(call, rel=0.01) and relaxation[64]["DD"] == pytest.approx(4e-11, rel=0.01)


def test_each_schedule_is_calibrated_from_its_median_run_not_its_fastest(monkeypatch):
    """The model is rated against (and users meet) median times: a calibration fitted to each schedule's
    fastest run misses the stragglers a barrier waits for."""
    times = iter([5.0, 1.0, 4.0, 2.0, 3.0])

    def scripted(self, n, tile, runtime="barrier", driver="auto", family=("classic", {})):
        seconds = next(times)
        return seconds * 2.0, {"seconds": seconds}, 2.0  # (seconds at the reference speed, record, scale)

    monkeypatch.setattr(calibrate._Host, "run", scripted)
    monkeypatch.setattr(calibrate, "run_profile",
                        lambda record: RunProfile(record["seconds"], 2, {"DD": record["seconds"]}))
    host = calibrate._Host("float32", 1.0)
    [run] = host.profiled(128, [64], 5, families=lambda n, tile: [("classic", {})])
    assert run.profile.seconds == 6.0 and run.profile.parts == {"DD": 6.0}  # the median, 3 s, at the reference speed


def test_no_product_on_micro_panels_is_priced_faster_than_the_fastest_register_block(monkeypatch):
    view = tile_view(build("classic", 256, 32, panels=True))
    run = _profiled_run(view, dict.fromkeys(ROLES, 1e-10), call=1e-6)
    run = calibrate._Run(view, RunProfile(run.profile.seconds, 2, {**run.profile.parts, "packing": 0.0}), "compiled")

    class Host:  # a host whose packed run is `run`
        def profiled(self, n, tiles, rounds, families):
            return [run]

    overpriced_calls = _calibration(call={32: 5e-6})  # more than the run's calls cost: nothing left for its relaxations
    monkeypatch.setattr(calibrate, "cached_choice", lambda dtype: None)
    assert calibrate._packed(Host(), overpriced_calls, 1, 256, [32]).packed[32] == 0.0
    monkeypatch.setattr(calibrate, "cached_choice", lambda dtype: BlockChoice(4, 2, rates={"4x2": 2e10, "2x2": 1e10}))
    assert calibrate._packed(Host(), overpriced_calls, 1, 256, [32]).packed[32] == pytest.approx(5e-11)
    assert calibrate._packed(Host(), _calibration(call={32: 1e-6}), 1, 256, [32]).packed[32] == pytest.approx(1e-10)


def test_rates_between_calibrated_tiles_are_interpolated_and_beyond_them_the_nearest():
    calibration = _calibration()
    dd = ROLES.index("DD")
    assert calibration.per_relaxation(64)[dd] == pytest.approx((1e-10 + 4e-11) / 2)
    assert calibration.per_relaxation(16)[dd] == calibration.per_relaxation(32)[dd]
    assert calibration.product_rate(256) == pytest.approx(1 / 4e-11)
    assert calibration.load_seconds(128, 1 << 19) == 0.0 and calibration.load_seconds(128, 1 << 25) == 2e-9
    assert calibration.load_seconds(128, 1 << 22) == pytest.approx(1e-9)  # log-linear between the sizes measured
    assert Calibration.from_dict(calibration.as_dict()) == calibration


def test_a_register_block_scales_the_products():
    view = tile_view(build("classic", 256, 64))
    calibration = _calibration(register_blocks={"4x16": 0.5})
    slower = predict(view, calibration, register_block="4x16")
    assert slower.parts["DD"] == pytest.approx(2 * predict(view, calibration).parts["DD"])


def test_the_searched_blocks_rates_are_read_by_shape_whatever_their_knobs(monkeypatch):
    """A search's rates are keyed by labels carrying unroll, prefetch and pass (8x2u2p1.4rd2): the
    calibration reads each shape's best rate relative to the chosen block's."""
    lanes = vector_width(4)
    choice = BlockChoice(16, 1, panel_pass=(True, 2), source="cached",
                         rates={"16x1rd2": 50.0, "16x1": 45.0, "8x2u2p1.4rd2": 40.0, "8x2d2": 25.0})
    monkeypatch.setattr(calibrate, "cached_choice", lambda dtype: choice)
    assert calibrate._register_blocks("int32") == {f"16x{lanes}": 1.0, f"8x{2 * lanes}": 0.8}
    with pytest.raises(ValueError, match="'u2' is not a register block's label"):
        label_shape("u2")


def test_calibrate_measures_stores_and_the_model_reads_it_back(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYFW_STORE", str(tmp_path / "user.sqlite"))
    measured = calibrate.calibrate("int32", repeats=1, tiles=(16, 32), in_cache_n=128, out_of_cache_n=128)
    assert measured.measured and set(measured.relaxation) == {16, 32}
    assert all(seconds > 0 for roles in measured.relaxation.values() for seconds in roles.values())
    assert set(measured.dataflow) == {"dataflow", "dataflow-shared"} and measured.task >= 0
    path = calibrations.save(measured, tmp_path / "s.sqlite")
    threads = measured.threads
    assert calibrations.load("int32", threads, path) == measured
    assert calibrations.load("float32", threads, path) is None
    assert calibration_for("int32", threads, path) == measured
    assert not calibration_for("int32", threads + 1, path).measured  # another thread count: assumed
    # explore ranks by the calibration in its store
    with Store(path) as store:
        found = explore(Space(64, "int32", families=("classic",), values={"tile": [16, 32]}, run_axes=()),
                        "exhaustive", store=store, repeats=1, progress=False)
    expected = Model(measured).prediction(build("classic", 64, 16), found.candidates[found.records[0].key])
    first = found.records[0]
    assert first.model["predicted_seconds"] == pytest.approx(expected.seconds)
    assert first.model["predicted DD"] == pytest.approx(expected.parts["DD"])
    # recorded beside the time: the prediction at the host's speed then (the probe taken again)
    assert first.model["host slowdown"] > 0
    assert first.predicted_seconds == pytest.approx(expected.seconds * first.model["host slowdown"])


def test_refuted_stage_orders_are_pruned_by_rule_and_counted():
    assert refuted_orders("classic") == {(("stages", order),) for order in itertools.permutations(("I", "SD", "DD"))
                                         if order != ("I", "SD", "DD")}
    legal = set(order_settings("generalized")) - refuted_orders("generalized")
    assert {dict(s)["step_order"] for s in legal} == {("LeadBlock", "LeadRowCol")}
    assert {dict(s)["part_order"][0] for s in legal} == {"forward"}
    assert refuted_orders("recursive") == frozenset()
    space = Space(64, values={"tile": [16]}, run_axes=())
    kept = list(space)
    assert all(dict(c.params).get("stages", ("I", "SD", "DD")) == ("I", "SD", "DD") for c in kept)
    assert space.pruned() == 5 + 10 * 4 * 2 * 2  # classic's five; generalized's ten, each at 4 kappas, 2 variants, 2 directions
    # an order axis narrowed by the user stays as asked, refuted or not
    asked = Space(64, families=("classic",), values={"tile": [16], "stages": ["SD-I-DD"]}, run_axes=())
    assert [dict(c.params)["stages"] for c in asked] == [("SD", "I", "DD")] and asked.pruned() == 0


def test_the_random_order_spreads_every_prefix_over_families_runtimes_and_tiles():
    space = Space(512)
    order = stratified(space, seed=23)
    assert sorted(c.key for c in order) == sorted(c.key for c in space)
    families, runtimes = {c.family for c in space}, {c.option_dict()["runtime"] for c in space}
    first = order[:len(families) * len(runtimes)]
    assert {c.family for c in first} == families
    for family in families:
        assert {c.option_dict()["runtime"] for c in order[:3 * len(families) * len(runtimes)]
                if c.family == family} == runtimes
    generalized = [c.size for c in order if c.family == "generalized"][:8]
    assert set(generalized) == set(space.tiles())  # not mostly the tile with the most kappa values
    assert order == stratified(space, seed=23) and order != stratified(space, seed=24)


def test_dtype_auto_takes_a_wider_exact_type_only_when_calibrated_clearly_faster():
    assert fastest_exact(["int16", "int32", "float64"], {"dense": {"int16": 100e9, "int32": 70e9}}) == "int16"
    assert fastest_exact(["int32", "float32"], {"dense": {"int32": 30e9, "float32": 40e9}}) == "float32"
    assert fastest_exact(["int32", "float32"], {"dense": {"int32": 38e9, "float32": 40e9}}) == "int32"


def test_cost_explain_prints_the_calibrated_parts(tmp_path, capsys, monkeypatch):
    from polyfw.cli.main import main

    monkeypatch.setenv("POLYFW_STORE", str(tmp_path / "none.sqlite"))
    assert main(["cost", "classic", "--n", "256", "--tile", "64", "--explain"]) == 0
    shown = capsys.readouterr().out
    assert "NOT calibrated" in shown and "DD" in shown and "predicted" in shown
    calibrations.save(_calibration(threads=numba.get_num_threads()), tmp_path / "s.sqlite")
    assert main(["cost", "classic", "--n", "256", "--tile", "64", "--explain", "--store",
                 str(tmp_path / "s.sqlite")]) == 0
    shown = capsys.readouterr().out
    assert "calibrated on this machine" in shown and "between stages" in shown
    assert np.isfinite(float(shown.split("predicted")[-1].split()[0]))


def test_solve_auto_reads_the_calibrated_rates(monkeypatch, tmp_path, caplog):
    import logging

    import polyfw
    from polyfw import method

    monkeypatch.setenv("POLYFW_STORE", str(tmp_path / "user.sqlite"))
    method._calibrated.cache_clear()
    weights = np.array([[0, 3, np.inf], [np.inf, 0, 2], [1, np.inf, 0]])
    with caplog.at_level(logging.INFO, logger="polyfw"):
        polyfw.solve(weights)
    assert "dtype='auto' chose int16" in caplog.text
    # a calibration in which float32's product is far faster than int16's assumed rate
    fast = _calibration(threads=numba.get_num_threads(), relaxation={128: dict.fromkeys(ROLES, 1e-13)})
    calibrations.save(fast)
    method._calibrated.cache_clear()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="polyfw"):
        found = polyfw.solve(weights)
    assert "dtype='auto' chose float32" in caplog.text and "calibrated" in caplog.text
    assert np.array_equal(found, [[0, 3, 5], [3, 0, 2], [1, 4, 0]])
    method._calibrated.cache_clear()
