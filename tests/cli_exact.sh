#!/bin/sh
# cli_exact.sh - --exact (issue 13) against an independent exact reference:
# tests/exact_check.py sums with Python's fractions and rounds once to
# nearest even itself. Bit-for-bit on uniform, normal, whole-exponent-range,
# cancelling, subnormal, overflowing, tie, tie decided by the least
# subnormals and special-value data of awkward sizes; reduce and inclusive
# and exclusive scans; 1 to 4 ranks; several chunk sizes and depths;
# streamed and resident. And the usage errors.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

[ -n "$gs_python" ] || gs_skip_all "no Python 3"
checker=$(dirname "$0")/exact_check.py
be=$GS_TEST_BACKEND
seed=${GS_TEST_SEED:-$(date +%s)}
echo "exact data with GS_TEST_SEED=$seed"

data=$gs_tmp/data
outs=$gs_tmp/out
manifest=$gs_tmp/manifest
mkdir "$data" "$outs"
if ! "$gs_python" "$checker" gen "$data" "$seed"; then
    gs_fail "exact_check.py gen made the input arrays"
    gs_summary
fi

k=0

# do_scan NP INPUT inclusive|exclusive [OPTIONS...]
do_scan() {
    np=$1 x=$data/$2 kind=$3
    shift 3
    k=$((k + 1))
    y=$outs/scan$k.npy
    desc="scan --exact $(basename "$x") ($kind) on $np rank(s) $*"
    set -- -i "$x" -O "$y" --exact --backend "$be" "$@"
    [ "$kind" = inclusive ] || set -- "$@" --exclusive
    if expect_ok "$desc runs" "$np" scan "$@"; then
        printf 'scan\t%s\t%s\t%s\t%s\n' "$x" "$y" "$kind" "$desc" >>"$manifest"
    fi
}

# do_reduce NP INPUT [OPTIONS...]
do_reduce() {
    np=$1 x=$data/$2
    shift 2
    k=$((k + 1))
    desc="reduce --exact $(basename "$x") on $np rank(s) $*"
    if expect_ok "$desc runs" "$np" reduce -i "$x" --exact --backend "$be" --json - "$@"; then
        cp "$gs_tmp/stdout" "$outs/reduce$k.json"
        printf 'reduce\t%s\t%s\t-\t%s\n' "$x" "$outs/reduce$k.json" "$desc" >>"$manifest"
    fi
}

# Judge what is queued (gs_test.sh).
flush_checks() { gs_flush_checks "$gs_python" "$checker" "$manifest" "$outs"; }

# Each data class of each type once as a reduction and once as a scan,
# the ranks (1 to 4), sizes, chunk sizes and depths, streamed or resident
# spread over them; the scan kinds swap between f32 and f64, so that every
# class meets both. 65537 elements on 1 rank take 2 OpenMP threads.
for t in f32 f64; do
    inc=inclusive exc=exclusive
    [ "$t" = f32 ] || { inc=exclusive exc=inclusive; }
    for d in uniform normal range cancel subnormal overflow ties tinyties special; do
        base=${d}_${t}
        case $d in
        uniform)   do_reduce 3 "${base}_65537.npy"
                   do_scan 1 "${base}_65537.npy" "$inc" --resident ;;
        normal)    do_reduce 4 "${base}_997.npy" --chunk 61
                   do_scan 2 "${base}_65537.npy" "$exc" --stream --chunk 1000 ;;
        range)     do_reduce 1 "${base}_65537.npy"
                   do_scan 4 "${base}_65537.npy" "$inc" --stream --chunk 4099 --depth 2 ;;
        cancel)    do_reduce 2 "${base}_65537.npy" --chunk 4099
                   do_scan 3 "${base}_65537.npy" "$exc" --chunk 1000 --depth 3 ;;
        subnormal) do_reduce 3 "${base}_31.npy"
                   do_scan 4 "${base}_997.npy" "$inc" --chunk 61 --depth 3 ;;
        overflow)  do_reduce 4 "${base}_65537.npy" --stream --chunk 997
                   do_scan 1 "${base}_997.npy" "$exc" --chunk 1 ;;
        ties)      do_reduce 2 "${base}_997.npy"
                   do_scan 3 "${base}_65537.npy" "$inc" --resident ;;
        tinyties)  do_reduce 3 "${base}_65537.npy" --chunk 4099
                   do_scan 2 "${base}_65537.npy" "$exc" --chunk 997 ;;
        special)   do_reduce 1 "${base}_31.npy"
                   do_scan 2 "${base}_997.npy" "$exc" ;;
        esac
    done
    # 0, 1 and 2 elements, fewer than the ranks
    do_reduce 4 "uniform_${t}_0.npy"
    do_scan 4 "uniform_${t}_0.npy" "$inc"
    do_reduce 2 "cancel_${t}_1.npy"
    do_scan 3 "special_${t}_1.npy" "$exc"
    do_scan 4 "range_${t}_2.npy" "$exc"
    do_scan 3 "cancel_${t}_31.npy" "$inc" --chunk 7
    flush_checks
done

# the same bits whatever the layout: ranks, chunks, streamed or resident
for layout in "1 --resident" "2 --stream --chunk 997" "4 --chunk 3" "3 --stream --chunk 61 --depth 3" "4 --resident"; do
    # shellcheck disable=SC2086  # NP and the options
    set -- $layout
    np=$1
    shift
    run_np "$np" scan -g 5003 -t f64 --seed "$seed" --exact -O "$outs/g_${np}_$(echo "$@" | tr -cd 'a-z0-9').bin" \
        --backend "$be" "$@" -q
done
first=
for f in "$outs"/g_*.bin; do
    if [ -z "$first" ]; then first=$f; continue; fi
    if cmp -s "$first" "$f"; then gs_pass "scan --exact $(basename "$f") has the bits of $(basename "$first")"
    else gs_fail "scan --exact $(basename "$f") has the bits of $(basename "$first")"; fi
done
rm -f "$outs"/*

# random cases for GS_TEST_FUZZ_SECONDS (default 20): type, data family,
# size, scan kind, ranks, chunks, streamed or resident drawn from the seed;
# every scan and reduction bit for bit against the reference, the CPU
# backend's runs among them (exact_check.py fuzz)
mkdir "$gs_tmp/fuzz"
"$gs_python" "$checker" fuzz "$gs_tmp/fuzz" "${GS_TEST_FUZZ_SECONDS:-20}" "$seed" 70000 "$be" \
    "$GS_MPIRUN" "$GS_BIN" >"$gs_tmp/fuzz.log" 2>&1
fuzz_rc=$?
grep '^FAIL:' "$gs_tmp/fuzz.log"
if [ "$fuzz_rc" -eq 0 ]; then
    gs_pass "random exact cases ($(tail -n 1 "$gs_tmp/fuzz.log"))"
else
    gs_fail "random exact cases ($(tail -n 1 "$gs_tmp/fuzz.log"))" "exit $fuzz_rc"
fi

# --verify of an exact run demands (and finds) bit-equality
expect_ok "reduce --exact --verify" 3 reduce -g 100003 -t f32 --exact --verify --backend "$be" -q
expect_ok "scan --exact --verify (exclusive)" 2 scan -g 100003 -t f64 --exact --verify --exclusive \
    -O "$outs/v.npy" --backend "$be" -q
# integer sums, min and max: accepted, nothing changes
expect_ok "reduce --exact of i64 sum" 2 reduce -g 1000 -t i64 --exact --backend "$be" -q
expect_ok "scan --exact of f32 max" 2 scan -g 1000 -t f32 -o max --exact -O "$outs/m.npy" --backend "$be" -q

# float products are refused on every rank, nothing hangs
expect_fail "--exact with f32 prod" 3 2 "exact" "prod" -- reduce -g 1000 -o prod --exact --backend "$be"
expect_fail "--exact with f64 prod scan" 2 2 "exact" "prod" -- scan -g 1000 -t f64 -o prod --exact -O "$outs/p.npy" --backend "$be"
expect_fail "--exact with prod of a .npy of f64" 3 1 "exact" "prod" -- reduce -i "$data/uniform_f64_31.npy" -o prod --exact --backend "$be"
expect_fail "--exact with info" 1 2 "exact" -- info --exact

gs_summary
