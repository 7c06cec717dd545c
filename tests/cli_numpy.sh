#!/bin/sh
# cli_numpy.sh - the acceptance of issue 3 with data made by NumPy: for every
# type, arrays of awkward sizes (0, 1, 2, 31, 1000003, a 2-D C-order array,
# the type's extremes, NaNs, product-friendly factors), .npy versions 1-3 and
# raw files; `gpuscan scan` against numpy.cumsum / cumprod /
# minimum.accumulate / maximum.accumulate (inclusive and exclusive) and
# `gpuscan reduce --json -` against sum / prod / min / max, on 1 to 4 ranks.
# tests/numpy_check.py makes the data and judges the results.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

py=$(gs_find_python numpy) || gs_skip_all "no Python 3 with NumPy (pip install numpy)"
checker=$(dirname "$0")/numpy_check.py
be=$GS_TEST_BACKEND
seed=${GS_TEST_SEED:-$(date +%s)}
echo "NumPy data with GS_TEST_SEED=$seed ($py)"

data=$gs_tmp/data
outs=$gs_tmp/out
manifest=$gs_tmp/manifest
mkdir "$data" "$outs"
if ! "$py" "$checker" gen "$data" "$seed"; then
    gs_fail "numpy_check.py gen made the input arrays"
    gs_summary
fi

k=0   # outputs are numbered

# do_scan NP INPUT OP inclusive|exclusive [RAWTYPE [OUTPUT-SUFFIX]]: run the
# scan and queue its check (RAWTYPE: the -t of a raw input, or -).
do_scan() {
    np=$1 x=$data/$2 op=$3 kind=$4 raw=${5:--}
    k=$((k + 1))
    y=$outs/scan$k${6:-.npy}
    set -- -i "$x" -O "$y" -o "$op" --backend "$be"
    [ "$kind" = inclusive ] || set -- "$@" --exclusive
    [ "$raw" = - ] || set -- "$@" -t "$raw"
    if expect_ok "scan -i $(basename "$x") -o $op ($kind) on $np rank(s)" "$np" scan "$@"; then
        printf 'scan\t%s\t%s\t%s\t%s\t%s\t%s\n' "$x" "$y" "$op" "$kind" "$np" "$raw" >>"$manifest"
    fi
}

# do_reduce NP INPUT OP [RAWTYPE]: run reduce --json - and queue its check.
do_reduce() {
    np=$1 x=$data/$2 op=$3 raw=${4:--}
    k=$((k + 1))
    set -- -i "$x" -o "$op" --backend "$be" --json -
    [ "$raw" = - ] || set -- "$@" -t "$raw"
    if expect_ok "reduce -i $(basename "$x") -o $op on $np rank(s)" "$np" reduce "$@"; then
        cp "$gs_tmp/stdout" "$outs/reduce$k.json"
        printf 'reduce\t%s\t%s\t%s\t-\t%s\t%s\n' "$x" "$outs/reduce$k.json" "$op" "$np" "$raw" \
            >>"$manifest"
    fi
}

# Judge what is queued (gs_test.sh).
flush_checks() { gs_flush_checks "$py" "$checker" "$manifest" "$outs"; }

for t in i32 i64 u32 u64 f32 f64; do
    # every size at 3 ranks, as the acceptance runs it (2 and 1: empty shards)
    for s in 0 1 2 31 1000003 2d; do
        do_scan 3 "x_${t}_$s.npy" sum inclusive
    done
    for s in 2 31 1000003; do
        do_scan 3 "x_${t}_$s.npy" sum exclusive
    done
    for s in 1 1000003 2d; do
        do_scan 3 "x_${t}_$s.npy" min inclusive
        do_scan 3 "x_${t}_$s.npy" max inclusive
    done
    for op in min max; do
        for kind in inclusive exclusive; do
            do_scan 3 "e_${t}_1000.npy" "$op" "$kind"           # the type's extremes
            case $t in f*) do_scan 3 "n_${t}_1000.npy" "$op" "$kind" ;; esac  # NaN
        done
    done
    do_scan 3 "p_${t}_31.npy" prod inclusive
    do_scan 3 "p_${t}_31.npy" prod exclusive
    do_scan 3 "p_${t}_1000003.npy" prod inclusive

    # other rank counts
    for np in 1 2 4; do
        do_scan "$np" "x_${t}_1000003.npy" sum inclusive
    done
    do_scan 4 "x_${t}_2.npy" sum inclusive
    do_scan 4 "x_${t}_31.npy" max exclusive

    # raw input, raw and .npy output
    do_scan 2 "x_${t}_31.bin" sum inclusive "$t" .bin
    do_scan 3 "x_${t}_1000003.bin" min inclusive "$t"

    # reduce on 1 to 4 ranks (4 ranks over 2 elements, and over none)
    do_reduce 1 "x_${t}_1000003.npy" sum
    do_reduce 2 "x_${t}_2d.npy" sum
    do_reduce 3 "x_${t}_31.npy" sum
    do_reduce 4 "x_${t}_2.npy" sum
    do_reduce 4 "x_${t}_0.npy" sum
    do_reduce 3 "x_${t}_1000003.bin" sum "$t"
    do_reduce 1 "p_${t}_31.npy" prod
    do_reduce 2 "p_${t}_1000003.npy" prod
    do_reduce 4 "p_${t}_1000003.npy" prod
    do_reduce 3 "x_${t}_0.npy" prod
    for op in min max; do
        do_reduce 1 "e_${t}_1000.npy" "$op"
        do_reduce 2 "x_${t}_1000003.npy" "$op"
        do_reduce 3 "x_${t}_2d.npy" "$op"
        do_reduce 4 "x_${t}_2.npy" "$op"
        case $t in f*) do_reduce 3 "n_${t}_1000.npy" "$op" ;; esac
    done
    flush_checks
done

# .npy format versions 2.0 and 3.0
do_scan 3 v2_f64_1000.npy sum inclusive
do_scan 2 v3_i32_1000.npy sum exclusive
do_reduce 4 v2_f64_1000.npy sum
do_reduce 1 v3_i32_1000.npy max
flush_checks

gs_summary
