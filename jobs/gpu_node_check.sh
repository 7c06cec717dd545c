#!/bin/bash
# Build, test and check gpuscan end to end on a GPU node, in one go:
# configure (finding MPI by itself), make, make check (GPU suites included),
# `gpuscan info`, every type x op reduced and scanned with --verify on the
# GPUs, and the large runs (> 2^31 elements per rank). Logs go to $OUT (or
# ./gpu-node-logs); a short table is printed last.
#   jobs/gpu_node_check.sh [full|gpu]   gpu: of make check only the GPU suites
set -uo pipefail
out=${OUT:-$PWD/gpu-node-logs}
mkdir -p "$out"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
np=$(( ngpu > 0 ? ngpu : 2 ))
mode=${1:-full}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary=()
step() {   # step NAME COMMAND...: run, log, record PASS/FAIL and seconds
    local name=$1; shift
    local t0=$SECONDS
    if "$@" >"$out/$name.log" 2>&1; then summary+=("PASS $name $((SECONDS - t0))s")
    else summary+=("FAIL $name $((SECONDS - t0))s (see $name.log)"); fi
}
run() { mpirun -np "$np" --bind-to none ./gpuscan "$@"; }

step configure bash -c 'autoreconf -fi && ./configure'
grep -A8 'configured' "$out/configure.log"
step make make -j"$(nproc)"
if [ "$mode" = gpu ]; then
    step make-check env GS_TEST_GPUS="$ngpu" make -j4 check VERBOSE=1 TESTS=tests/test_cuda.sh
    grep -E '^(PASS|FAIL|SKIP|ERROR):' "$out/make-check.log"
else
    step make-check env GS_TEST_GPUS="$ngpu" make -j4 check VERBOSE=1
    grep -E '^(PASS|FAIL|SKIP|ERROR):' "$out/make-check.log"
fi
step info run info
cat "$out/info.log"

every_case() {
    local rc=0 t op
    for t in i32 i64 u32 u64 f32 f64; do
        for op in sum prod min max; do
            run reduce -g 33554467 -t "$t" -o "$op" --verify -q || rc=1
            run scan -g 4194319 -t "$t" -o "$op" -O /tmp/gs-scan.npy --verify -q || rc=1
            run scan -g 1000003 -t "$t" -o "$op" --exclusive -O /tmp/gs-scan.npy --verify -q || rc=1
        done
    done
    return $rc
}
step every-type-op every_case
n=$(( np * 2560 ))Mi   # 2.5 Gi elements (> 2^31) per rank
step reduce-large run reduce -g "$n" -t f32 --verify
step scan-large run scan -g "$n" -t f32 -O /tmp/gs-large.npy --verify
rm -f /tmp/gs-large.npy
cat "$out/reduce-large.log" "$out/scan-large.log"
printf '%s\n' "---- gpu node check: $ngpu GPU(s), $np rank(s)" "${summary[@]}"
! printf '%s\n' "${summary[@]}" | grep -q '^FAIL'
