"""Test-wide settings. The environment must be set before numba is first imported."""
import os
import tempfile

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
# the ISA's fixed register block: the suite runs the same kernels on every machine (the measured choice
# has tests of its own, in test_register_blocks.py)
os.environ.setdefault("POLYFW_REGISTER_BLOCK", "default")
# no calibration of the developer's (polyfw calibrate) steers the model or solve's choices: each test
# that wants one writes it
os.environ["POLYFW_STORE"] = os.path.join(tempfile.mkdtemp(prefix="polyfw-tests-"), "polyfw-explore.sqlite")

from hypothesis import HealthCheck, settings  # noqa: E402

# CI draws the same examples every run (a failure is reproducible); "thorough" explores afresh
settings.register_profile(
    "polyfw", deadline=None, max_examples=40, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", parent=settings.get_profile("polyfw"), max_examples=600, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "polyfw"))

import pytest  # noqa: E402


@pytest.fixture
def device_reads(monkeypatch):
    """Every copy from the (simulated) device to the host, as the host array it was copied from: a test
    counts them, or asks whether one read a given device array's memory."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    copied = []
    real = FakeCUDAArray.copy_to_host

    def recording(self, *arguments, **keywords):
        copied.append(self._ary)
        return real(self, *arguments, **keywords)

    monkeypatch.setattr(FakeCUDAArray, "copy_to_host", recording)
    return copied
