#!/usr/bin/env bash
# The CPU measurements that need the lent GPU machine's 16 Xeon cores, as one command that fits one
# device call (10 minutes; a session has 15 device-minutes, and a cold Numba compiles for 1-2 minutes of
# each part). Not a test. In priority order, each part capped, each part's log kept under $OUT:
#   1. the independent ceiling on 1 thread and on all (polyfw.machine.ceiling): how much of the schedule's
#      parallel efficiency the all-core clock takes (issue 51, item 4);
#   2. thread scaling of classic tile 128 at n = 8192 in int32, both runtimes (float32 was measured
#      2026-11-28: RESULTS, "16 cores");
#   3. BFS and SSSP beside GAPBS at scale 20 on 16 threads (issue 52, item 3; scale 18 measured).
# Before the call, in the checkout (the machine reaches nothing; islpy is the one dependency it lacks):
#   echo /.whl/ >> .git/info/exclude; echo /.peers/ >> .git/info/exclude; cp -r ../shared/peers/gapbs .peers/
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d .whl islpy==<constraints.txt's>
# The call: run(command="bash benchmarks/device.sh", carry=[".whl", ".peers"], timeout_s=590), then give_back.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 1
export PYTHONPATH=/tmp/site:$PWD OMP_WAIT_POLICY=passive PYTHONUNBUFFERED=1
out=${OUT:-/tmp/polyfw-device}
mkdir -p "$out"
export POLYFW_RESULTS="$out/results.jsonl"  # the tables the benchmarks record come back with the logs
lscpu > "$out/lscpu.txt"
nvidia-smi -L
python3 -c "import numba, numpy, islpy; print('numba', numba.__version__, 'numpy', numpy.__version__, 'islpy', islpy.__version__)"
for threads in 1 "$(nproc)"; do
    OMP_NUM_THREADS=$threads timeout 75 python3 -m polyfw.machine.ceiling --dtypes float32 int32 --seconds 0.1 \
        2>&1 | tee "$out/ceiling_$threads.log"
done
timeout 220 python3 benchmarks/cpu.py --parts threads --threads-n 8192 --dtypes int32 --rounds 1 \
    --no-independent-ceiling 2>&1 | tee "$out/threads_int32.log"
timeout 180 python3 benchmarks/gapbs.py --gapbs .peers/gapbs --scales 20 --graphs kronecker --roots 4 --trials 3 \
    --passes 1 2>&1 | tee "$out/gapbs_20.log"
