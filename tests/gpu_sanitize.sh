#!/bin/sh
# gpu_sanitize.sh - compute-sanitizer over the CUDA backend, on a GPU node;
# not part of `make check` (minutes, and a GPU). From a CUDA build's folder:
#
#   sh SRCDIR/tests/gpu_sanitize.sh [BUILDDIR]     (BUILDDIR: default .)
#
# Runs tests/test_cuda and gpuscan reduce/scan runs (several types, ops and
# kernels, --exact sums included; sizes 1, 1000003 and 2^20+7; resident and
# streamed in several chunks) under each tool of GS_SAN_TOOLS (default: memcheck racecheck
# synccheck initcheck). Prints one PASS/FAIL line per tool and exits 1 if any
# run failed, had a sanitizer error or ran past GS_SAN_TIMEOUT seconds (120);
# the logs of failed runs stay in the folder it names. Exit 77 without a
# GPU or compute-sanitizer. Under 4 minutes on one H100 (racecheck, the slow
# one, gets the smaller sizes).

build=${1:-.}
bin=$build/gpuscan
suite=$build/tests/test_cuda
tools=${GS_SAN_TOOLS:-memcheck racecheck synccheck initcheck}
limit=${GS_SAN_TIMEOUT:-120}

san=$(command -v compute-sanitizer 2>/dev/null)
for dir in "${CUDA_HOME:-}" /usr/local/cuda; do
    [ -n "$san" ] && break
    [ -n "$dir" ] && [ -x "$dir/bin/compute-sanitizer" ] && san=$dir/bin/compute-sanitizer
done
if [ -z "$san" ]; then
    echo "SKIP: no compute-sanitizer (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
    exit 77
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no GPU (nvidia-smi -L fails)"
    exit 77
fi
for f in "$bin" "$suite"; do
    if [ ! -x "$f" ]; then
        echo "ERROR: $f is missing: build with CUDA and 'make check' first (it builds tests/test_cuda)" >&2
        exit 99
    fi
done

logs=$(mktemp -d "${TMPDIR:-/tmp}/gpu-sanitize.XXXXXX") || exit 99
# one rank without mpirun: MPI's singleton start, its session files in $logs
TMPDIR=$logs
export TMPDIR OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$logs/out

# The runs, one per line: gpuscan's arguments (the suite is added apart).
# Streamed runs use chunks of 2^16 elements so that a shard takes several.
cli_runs() {
    sizes="1 1000003 1048583"
    [ "$1" = racecheck ] && sizes="1 100003"
    for n in $sizes; do
        cat <<EOF
reduce -g $n -t f32 -o sum --resident
reduce -g $n -t i32 -o sum --stream --chunk 65536
reduce -g $n -t u64 -o prod --algo unroll-all --resident
reduce -g $n -t f64 -o max --algo cub --stream --chunk 65536
reduce -g $n -t i64 -o min --algo grid-stride --resident
scan -g $n -t f32 -o sum --resident -O $out.npy
scan -g $n -t i32 -o sum --exclusive --stream --chunk 65536 -O $out.npy
scan -g $n -t u32 -o max --algo blelloch --resident -O $out.bin
scan -g $n -t f64 -o sum --algo hillis-steele --stream --chunk 65536 -O $out.npy
scan -g $n -t i64 -o prod --algo reduce-then-scan --resident -O $out.npy
scan -g $n -t u64 -o min --algo multi-kernel --exclusive --stream --chunk 65536 -O $out.npy
scan -g $n -t f32 -o sum --algo cub --stream --chunk 65536 --verify -O $out.npy
reduce -g $n -t f32 -o sum --exact --stream --chunk 65536
reduce -g $n -t f64 -o sum --exact --resident
scan -g $n -t f32 -o sum --exact --resident -O $out.npy
scan -g $n -t f64 -o sum --exact --exclusive --stream --chunk 65536 -O $out.npy
EOF
    done
}

# sanitized TOOL LOG COMMAND...: 0 when the run ended in time, exit 0,
# and the tool found nothing.
sanitized() {
    san_tool=$1 san_log=$2
    shift 2
    # CUDA API errors are not reported: the suite provokes some on purpose
    # (an impossible cudaMalloc), and every API call's status is checked by
    # the code and the tests themselves; memory, race and sync errors are.
    timeout -k 10 "$limit" "$san" --tool "$san_tool" --error-exitcode 86 --print-limit 20 \
        --report-api-errors no "$@" >"$san_log" 2>&1
    san_rc=$?
    case $san_rc in
    # racecheck's summary counts hazards, the other tools' errors
    0) grep -Eq '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$san_log" || return 1 ;;
    124 | 137) echo "timed out after ${limit}s" >>"$san_log"; return 1 ;;
    *) return 1 ;;
    esac
}

failed_tools=0
for tool in $tools; do
    start=$(date +%s)
    runs=0 bad=0 bad_logs=
    # the suite, then each CLI run
    runs=$((runs + 1))
    if ! sanitized "$tool" "$logs/$tool-suite.log" "$suite"; then
        bad=$((bad + 1))
        bad_logs="$bad_logs $tool-suite.log"
    fi
    cli_runs "$tool" >"$logs/runs"
    k=0
    while IFS= read -r args; do
        k=$((k + 1))
        runs=$((runs + 1))
        # shellcheck disable=SC2086  # args is a list of words
        if ! sanitized "$tool" "$logs/$tool-$k.log" "$bin" $args --backend cuda -q </dev/null; then
            bad=$((bad + 1))
            bad_logs="$bad_logs $tool-$k.log"
            echo "gpuscan $args" >>"$logs/$tool-$k.log"
        fi
    done <"$logs/runs"
    secs=$(($(date +%s) - start))
    if [ "$bad" -eq 0 ]; then
        echo "PASS: $tool: $runs runs (test_cuda and $((runs - 1)) gpuscan runs), no error, ${secs}s"
    else
        echo "FAIL: $tool: $bad of $runs runs failed, ${secs}s; logs in $logs:$bad_logs"
        failed_tools=$((failed_tools + 1))
    fi
done
rm -f "$out.npy" "$out.bin"
if [ "$failed_tools" -eq 0 ]; then
    rm -rf "$logs"
    exit 0
fi
exit 1
