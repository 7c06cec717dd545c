#!/bin/bash
# gpu_build_check.sh - on a GPU node, from the top of a clone: what the CI
# machine (no GPU) cannot show of the build (#15).
#   1. configure --with-cuda-arch=detect finds this node's GPU targets (as
#      nvidia-smi lists them) and builds for those only, machine code and PTX;
#   2. the README's run command works (jobs/quickstart.sh on the GPUs), and
#      the build's wall time;
#   3. static cudart: gpuscan needs no libcudart.so, and runs on the GPU with
#      LD_LIBRARY_PATH emptied (the driver's libcuda.so is found by ld.so);
#   4. --with-cuda-arch still overrides detection.
# Usage: tests/gpu_build_check.sh [BUILD_DIR]   (default /tmp/gs-gpu-build-check)
# Prints PASS/FAIL lines and exits 1 when anything failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-/tmp/gs-gpu-build-check}
failed=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

want=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | sed -n 's/^ *\([0-9]*\)\.\([0-9]\) *$/sm_\1\2/p' | sort -u)
[ -n "$want" ] || { echo "no GPU listed by nvidia-smi: run this on a GPU node"; exit 77; }
echo "nvidia-smi: targets $(echo "$want" | tr '\n' ' ')"

(cd "$src" && autoreconf -fi) >/dev/null 2>&1 || { echo "autoreconf failed"; exit 1; }
rm -rf "$build" && mkdir -p "$build" && cd "$build" || exit 1

# 1. detection
"$src/configure" --with-cuda-arch=detect >configure.log 2>&1 || { fail "configure --with-cuda-arch=detect"; tail configure.log; exit 1; }
summary=$(grep '^ *CUDA *:' configure.log)
echo "$summary"
for t in $want; do
    case $summary in *" $t"*) pass "detect: target $t" ;; *) fail "detect: target $t missing" ;; esac
done
n_targets=$(echo "$summary" | grep -o ' sm_[0-9a-z]*' | wc -l)
if [ "$n_targets" -eq "$(echo "$want" | wc -l)" ]; then pass "detect: no other targets"; else fail "detect: other targets built"; fi

# 2. build time and the run command's job
start=$(date +%s)
make -j"$(nproc)" >make.log 2>&1 || { fail "make"; tail -20 make.log; exit 1; }
echo "make -j$(nproc) (detect): $(( $(date +%s) - start )) s"
if command -v cuobjdump >/dev/null || [ -x /usr/local/cuda/bin/cuobjdump ]; then
    cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
    elfs=$("$cuobjdump" --list-elf gpu/gs_cuda_cub_32.o 2>/dev/null | grep -o 'sm_[0-9a-z]*' | sort -u | tr '\n' ' ')
    echo "gs_cuda_cub_32.o machine code: $elfs"
    for t in $want; do
        case " $elfs" in *" $t "*) pass "machine code for $t" ;; *) fail "no machine code for $t" ;; esac
    done
fi
./gpuscan info | tee info.log
if grep -q 'backend: cuda' info.log; then pass "gpuscan info: the CUDA backend"; else fail "gpuscan info: not the CUDA backend"; fi
if "$src/jobs/quickstart.sh" >quickstart.log 2>&1; then pass "jobs/quickstart.sh"; else fail "jobs/quickstart.sh"; tail -20 quickstart.log; fi
grep -E '^(result|#wrong|backend)' quickstart.log | head

# 3. static cudart
if ldd ./gpuscan | grep -q libcudart; then fail "gpuscan links libcudart.so"; else pass "gpuscan needs no libcudart.so"; fi
if LD_LIBRARY_PATH='' ./gpuscan reduce -g 1Gi -t f32 --backend cuda --verify >static.log 2>&1; then
    pass "reduce on the GPU with LD_LIBRARY_PATH emptied"
else
    fail "reduce on the GPU with LD_LIBRARY_PATH emptied"; tail static.log
fi

# 4. an explicit list still wins
mkdir -p override && cd override || exit 1
"$src/configure" --with-cuda-arch=sm_80 >configure.log 2>&1
if grep '^ *CUDA *:' configure.log | grep -q 'targets sm_80 +PTX compute_80'; then
    pass "--with-cuda-arch=sm_80 overrides"
else
    fail "--with-cuda-arch=sm_80: $(grep '^ *CUDA *:' configure.log)"
fi
exit $failed
