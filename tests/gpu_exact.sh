#!/bin/sh
# The exact sums on a GPU node (issue #13), one call, a few minutes on an
# H100: test_cuda's exact suite (bit for bit against an independent
# reference and the CPU backend, every data kind, sizes 0 to 2^20+7, pieces,
# in place, 2^31+17 elements), random cases of the CLI on the CUDA backend
# against tests/exact_check.py's reference (sizes to 10^6, 1 to 4 ranks,
# random chunks, streamed and resident, the CPU backend's runs among them),
# then the plain and exact reduce and scan timed at 2^28 elements
# (tests/gpu_exact_bench.c) with their ratios.
#
# usage: tests/gpu_exact.sh [BUILDDIR]   (a CUDA build; default: .)
# GS_EXACT_LOG2N=26 times smaller arrays; GS_TEST_MAX_N caps the suite;
# GS_EXACT_FUZZ=SECONDS for the random cases (default 120, 0: none).
builddir=${1:-.}
status=0

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "== the exact suite (GS_TEST_CUDA_SUITE=exact tests/test_cuda)"
GS_TEST_CUDA_SUITE=exact "$builddir/tests/test_cuda" || status=$?
echo "== test_cuda exit status: $status"

fuzz_seconds=${GS_EXACT_FUZZ:-120}
if [ "$fuzz_seconds" -gt 0 ]; then
    seed=$(date +%s)
    echo "== random cases for $fuzz_seconds s (tests/exact_check.py fuzz, seed $seed)"
    fuzz_dir=$(mktemp -d "${TMPDIR:-/tmp}/gs-fuzz.XXXXXX") || exit 1
    python3 "$(dirname "$0")/exact_check.py" fuzz "$fuzz_dir" "$fuzz_seconds" "$seed" 1000003 cuda \
        "$builddir/tests/mpirun.sh" "$builddir/gpuscan" || status=$?
    rm -rf "$fuzz_dir"
fi

if [ ! -x "$builddir/tests/gpu_exact_bench" ]; then
    make -C "$builddir" tests/gpu_exact_bench >/dev/null || exit 1
fi
echo "== plain vs exact, ratio = plain time / exact time (1: as fast)"
"$builddir/tests/gpu_exact_bench" "${GS_EXACT_LOG2N:-28}" 10 || status=$?
exit $status
