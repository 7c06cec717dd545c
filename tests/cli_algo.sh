#!/bin/sh
# cli_algo.sh - `gpuscan reduce|scan --algo NAME`: every kernel variant run
# by the tool, resident and streamed in chunks that do not divide the shard,
# on 1 and 3 ranks, checked with --verify against the independent reference,
# and named in the report. The variants are CUDA kernels: without a usable
# GPU the script is skipped (the refusals are in cli_errors.sh).
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

run_np 1 info --backend cuda || gs_skip_all "no usable GPU: the kernel variants run on the CUDA backend"
n=100003         # a prime
out=$gs_tmp/out
mkdir "$out"

# variant DESC NP ALGO ARGS...: the run passes --verify and reports ALGO.
variant() {
    v_desc=$1 v_np=$2 v_algo=$3
    shift 3
    if expect_ok "$v_desc [$v_np rank(s)]" "$v_np" "$@" --algo "$v_algo" --backend cuda --verify --json -; then
        gs_check "$v_desc: no wrong element" [ "$(json_get "$gs_tmp/stdout" wrong)" = 0 ]
        gs_check "$v_desc: reported as $v_algo" [ "$(json_get "$gs_tmp/stdout" algo)" = "\"$v_algo\"" ]
    fi
}

for algo in divergent strided sequential first-add unroll-last-warp unroll-all grid-stride cub; do
    for np in 1 3; do
        variant "reduce $algo i32 sum, chunks of 4099" "$np" "$algo" reduce -g "$n" -t i32 --stream --chunk 4099
        variant "reduce $algo f64 max" "$np" "$algo" reduce -g "$n" -t f64 -o max
        variant "reduce $algo u64 prod" "$np" "$algo" reduce -g "$n" -t u64 -o prod --stream --chunk 50000
    done
done
for algo in hillis-steele blelloch multi-kernel reduce-then-scan cub; do
    for np in 1 3; do
        variant "scan $algo i32 sum, chunks of 4099" "$np" "$algo" \
            scan -g "$n" -t i32 --stream --chunk 4099 -O "$out/s.npy"
        variant "exclusive scan $algo f32 sum, resident" "$np" "$algo" \
            scan -g "$n" -t f32 --exclusive --resident -O "$out/s.npy"
        variant "scan $algo u64 min, chunks of 7" "$np" "$algo" \
            scan -g 1009 -t u64 -o min --stream --chunk 7 -O "$out/s.npy"
        variant "exclusive scan $algo i64 max, chunks of 65536" "$np" "$algo" \
            scan -g "$n" -t i64 -o max --exclusive --stream --chunk 65536 -O "$out/s.npy"
    done
done
# an overflow inside a streamed scan is an error, not a wrapped output
rm -f "$out/s.npy"
if py=$(gs_find_python numpy); then
    "$py" -c "import numpy as np; a = np.ones(20000, dtype='<i8'); a[15000] = 2**63 - 1; np.save('$gs_tmp/ovf.npy', a)"
    for algo in cub reduce-then-scan; do
        expect_fail "scan $algo: a 64-bit overflow in a middle chunk" 1 1 'overflow' -- \
            scan -i "$gs_tmp/ovf.npy" --stream --chunk 4099 --algo "$algo" --backend cuda -O "$out/o.npy"
        expect_empty_dir "scan $algo: no output after the overflow" "$out"
    done
else
    gs_skip "overflow case: no Python 3 with NumPy"
fi
gs_summary
