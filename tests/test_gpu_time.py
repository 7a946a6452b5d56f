"""schedules.gpu_time: a schedule's GPU time from its stages and its kernels' facts."""
import math

import schedules
from schedules.cost import tile_view
from schedules.gpu_time import GpuCalibration, KernelFacts, fit_calibration, predict_seconds, sm_rate

FAST = KernelFacts(per_relaxation=2.2, warps_per_block=8, blocks_per_sm=2)


def kernels(facts):
    return {"I": facts, "panel": facts, "DD": facts}


def test_more_resident_warps_hide_more_latency():
    calibration = GpuCalibration()
    one, two = (sm_rate(FAST, blocks, schedules.gpu_time.GpuDevice(), calibration) for blocks in (1, 2))
    assert one < two < 4 * 1.98e9 * 32 / 2.2
    view = tile_view(schedules.build("classic", 2048, tile=128))
    few = predict_seconds(view, kernels(KernelFacts(2.2, 8, 1)))
    assert predict_seconds(view, kernels(FAST)) < few


def test_a_launch_costs_its_overhead_and_a_pivot_its_steps():
    view = tile_view(schedules.build("classic", 512, tile=128))  # 4 block layers, 3 launches each
    base = predict_seconds(view, kernels(FAST), calibration=GpuCalibration(launch_seconds=0, pivot_step_seconds=0))
    slower = predict_seconds(view, kernels(FAST), calibration=GpuCalibration(launch_seconds=1e-3, pivot_step_seconds=0))
    assert math.isclose(slower - base, 12e-3)
    pivots = predict_seconds(view, kernels(FAST), calibration=GpuCalibration(launch_seconds=0, pivot_step_seconds=1e-6))
    assert math.isclose(pivots - base, 4 * 128 * 1e-6, rel_tol=1e-6)  # 4 pivots of 128 steps, one block each


def test_the_fit_recovers_the_calibration_that_made_the_times():
    truth = GpuCalibration(latency_warps=12.0, launch_seconds=50e-6, pivot_step_seconds=2e-6)
    rows = []
    for family, n, parameters in (("classic", 1024, {"tile": 128}), ("classic", 1024, {"tile": 64}),
                                  ("generalized", 1024, {"tile": 64, "kappa": 4}), ("recursive", 1024, {"base": 64})):
        view = tile_view(schedules.build(family, n, **parameters))
        for facts in (FAST, KernelFacts(2.2, 8, 1), KernelFacts(1.3, 2, 8)):
            rows.append((view, kernels(facts), predict_seconds(view, kernels(facts), calibration=truth)))
    found = fit_calibration(rows)
    assert all(math.isclose(a, b, rel_tol=0.02) for a, b in zip(found.as_tuple(), truth.as_tuple())), found


def test_the_streams_of_a_set_overlap_up_to_the_sms_they_share():
    calibration = GpuCalibration(launch_seconds=300e-6)
    apart = predict_seconds(tile_view(schedules.build("classic", 4096, tile=128)), kernels(FAST),
                            calibration=calibration)
    overlapped = predict_seconds(tile_view(schedules.build("classic", 4096, tile=128, overlap=True)), kernels(FAST),
                                 calibration=calibration)
    # per layer, the pivot's and the panels' launches run beside the products (the look-ahead adds a
    # launch a layer, the products on the next pivot's row and column, on the side stream)
    assert overlapped < 0.85 * apart
    # no faster than the SMs allow: every relaxation at every SM's full rate is the floor
    free = GpuCalibration(launch_seconds=0.0)
    floor = 4096**3 / (132 * sm_rate(FAST, 2, schedules.gpu_time.GpuDevice(), free))
    assert floor < predict_seconds(tile_view(schedules.build("classic", 4096, tile=128, overlap=True)), kernels(FAST),
                                   calibration=free) < 1.2 * floor
