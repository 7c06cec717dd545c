#!/bin/sh
# cli_exact.sh - --exact (issue 13) against an independent exact reference:
# tests/exact_check.py sums with Python's fractions and rounds once to
# nearest even itself. Bit-for-bit on uniform, normal, whole-exponent-range,
# cancelling, subnormal, overflowing, tie and special-value data of awkward
# sizes; reduce and inclusive and exclusive scans; 1 to 4 ranks; several
# chunk sizes and depths; streamed and resident. And the usage errors.
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

flush_checks() {
    [ -s "$manifest" ] || return 0
    "$gs_python" "$checker" check "$manifest" >"$gs_tmp/checked" 2>&1
    check_rc=$?
    grep -v '^PASS:' "$gs_tmp/checked"
    passes=$(grep -c '^PASS:' "$gs_tmp/checked")
    fails=$(grep -c '^FAIL:' "$gs_tmp/checked")
    echo "exact_check.py: $passes passed, $fails failed"
    gs_passed=$((gs_passed + passes))
    gs_failed=$((gs_failed + fails))
    if [ "$check_rc" -ne 0 ] && [ "$fails" -eq 0 ]; then
        gs_fail "exact_check.py check ran" "exit $check_rc"
    fi
    rm -f "$outs"/* "$manifest"
}

for t in f32 f64; do
    for d in uniform normal range cancel subnormal overflow ties special; do
        for s in 1 31 65537; do
            do_reduce 3 "${d}_${t}_$s.npy"
            do_scan 3 "${d}_${t}_$s.npy" inclusive
        done
        do_scan 2 "${d}_${t}_997.npy" exclusive --chunk 61 --depth 3
        do_scan 1 "${d}_${t}_65537.npy" inclusive --chunk 1000 --stream
        do_reduce 4 "${d}_${t}_65537.npy" --chunk 4099
        flush_checks
    done
    do_reduce 4 "uniform_${t}_0.npy"
    do_scan 4 "uniform_${t}_0.npy" inclusive
    do_reduce 4 "range_${t}_2.npy"
    do_scan 4 "range_${t}_2.npy" exclusive
    for np in 1 2 3 4; do
        do_reduce "$np" "range_${t}_300007.npy" --chunk 7919
        do_scan "$np" "range_${t}_300007.npy" inclusive --resident
        do_scan "$np" "cancel_${t}_300007.npy" exclusive --stream --chunk 65536 --depth 2
    done
    do_scan 3 "normal_${t}_300007.npy" inclusive --chunk 1
    flush_checks
done

# the same bits whatever the layout: ranks, chunks, streamed or resident
for np in 1 2 4; do
    for layout in "--stream --chunk 997" "--resident" "--chunk 1"; do
        # shellcheck disable=SC2086
        run_np "$np" scan -g 5003 -t f64 --seed "$seed" --exact -O "$outs/g_${np}_$(echo $layout | tr -cd 'a-z0-9').bin" \
            --backend "$be" $layout -q
    done
done
first=
for f in "$outs"/g_*.bin; do
    if [ -z "$first" ]; then first=$f; continue; fi
    if cmp -s "$first" "$f"; then gs_pass "scan --exact $(basename "$f") has the bits of $(basename "$first")"
    else gs_fail "scan --exact $(basename "$f") has the bits of $(basename "$first")"; fi
done
rm -f "$outs"/*

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
