#!/usr/bin/env bash
# The CPU measurements that need the lent GPU machine's 16 Xeon cores, as one command that fits one device
# call (10 minutes; a session has 15 device-minutes, and a cold Numba compiles for 1-2 minutes of each part).
# Not a test. In priority order, each part capped, each part's log kept under $OUT as it is written:
#   1. the independent ceiling on 1 thread and on all (polyfw.machine.ceiling): how much of the schedule's
#      parallel efficiency the all-core clock takes (issue 51, item 4);
#   2. thread scaling of the tuned classic tile at n = 8192 in int32, both runtimes (issue 51, item 4);
#   3. BFS and SSSP beside GAPBS at scale 20, Kronecker and uniform, on all threads (issue 52, item 3);
#   4. float32 thread scaling as in 2, if the time left fits it.
# Before the call, in the checkout (the machine reaches nothing; islpy is the one dependency it lacks):
#   echo /.whl/ >> .git/info/exclude; echo /.peers/ >> .git/info/exclude; cp -r ../shared/peers/gapbs .peers/
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d .whl islpy==<constraints.txt's>
# The call: run(command="bash benchmarks/device.sh", carry=[".whl", ".peers"], timeout_s=590), then give_back.
# A smoke test anywhere islpy imports: DEVICE_N=1024 DEVICE_SCALE=12 OUT=/tmp/device bash benchmarks/device.sh
set -u
n=${DEVICE_N:-8192}
scale=${DEVICE_SCALE:-20}
if ! python3 -c "import islpy" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD OMP_WAIT_POLICY=passive PYTHONUNBUFFERED=1
out=${OUT:-/tmp/polyfw-device}
mkdir -p "$out"
export POLYFW_RESULTS="$out/results.jsonl"  # the tables the benchmarks record come back with the logs
lscpu > "$out/lscpu.txt"
nvidia-smi -L 2>/dev/null
python3 -c "import numba, numpy, islpy; print('numba', numba.__version__, 'numpy', numpy.__version__, 'islpy', islpy.__version__)"
started=$SECONDS
for threads in 1 "$(nproc)"; do
    OMP_NUM_THREADS=$threads timeout 45 python3 -m polyfw.machine.ceiling --dtypes float32 int32 --seconds 0.1 \
        2>&1 | tee "$out/ceiling_$threads.log"
done
echo "ceilings done after $((SECONDS - started)) s"
timeout 120 python3 benchmarks/cpu.py --parts threads --threads-n "$n" --dtypes int32 --rounds 1 \
    --no-independent-ceiling 2>&1 | tee "$out/threads_int32.log"
echo "int32 threads done after $((SECONDS - started)) s"
timeout 280 python3 benchmarks/gapbs.py --gapbs .peers/gapbs --scales "$scale" --graphs kronecker uniform --roots 4 \
    --trials 3 --passes 1 --checked-roots 1 2>&1 | tee "$out/gapbs.log"
echo "gapbs done after $((SECONDS - started)) s"
left=$((${DEVICE_SECONDS:-580} - (SECONDS - started)))  # what the call's limit leaves: float32 runs only if it fits
if [ "$left" -ge 90 ]; then
    timeout "$left" python3 benchmarks/cpu.py --parts threads --threads-n "$n" --dtypes float32 --rounds 1 \
        --no-independent-ceiling 2>&1 | tee "$out/threads_float32.log"
fi
echo "all done after $((SECONDS - started)) s"
