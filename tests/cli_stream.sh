#!/bin/sh
# cli_stream.sh - the chunk pipeline through the tool (docs/STREAMING.md):
# its options and report, resident or streamed by memory, chunk boundaries
# (chunks that do not divide the shard, chunks of one element, depth 1),
# carries across chunks for every type x op (streamed = resident bit for
# bit), files read and written in chunks, uneven and empty shards, a shard
# larger than the memory made available (--mem-cap), a
# failure in the middle of a streamed run (no output, no hang) and the
# progress bar.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
n=100003         # a prime: neither shards nor chunks divide it
seed=4242
d=$gs_tmp/stream
out=$gs_tmp/out
mkdir "$d" "$out"

# json_key KEY: KEY of the last run's JSON on stdout.
json_key() {
    json_get "$gs_tmp/stdout" "$1"
}

# same_output DESC NP FILE ARGS...: scan ARGS on NP ranks into FILE, which
# must then hold the same bytes as $d/ref (written first by the caller).
same_output() {
    so_desc=$1 so_np=$2 so_file=$3
    shift 3
    if expect_ok "$so_desc [$so_np rank(s)]" "$so_np" scan "$@" -O "$so_file" --backend "$be"; then
        gs_check "$so_desc: the same bytes [$so_np rank(s)]" cmp "$d/ref" "$so_file"
    fi
    rm -f "$so_file"
}

# ---- options ------------------------------------------------------------------
expect_fail "--depth 0 is refused" 0 2 'depth' -- reduce -g 10 --depth 0
expect_fail "--depth 17 is refused" 0 2 'depth' '16' -- reduce -g 10 --depth 17
expect_fail "--stream with --resident is refused" 0 2 'stream' 'resident' -- reduce -g 10 --stream --resident
if expect_ok "--help" 0 --help; then
    for o in --chunk --depth --stream --resident; do
        gs_check "--help mentions $o" grep -q -e "$o" "$gs_tmp/stdout"
    done
fi

# ---- the report ---------------------------------------------------------------
if expect_ok "reduce --chunk 100 --depth 3 --json -" 1 \
    reduce -g 1000 --chunk 100 --depth 3 --backend "$be" --json -; then
    expect_same "JSON mode" "$(json_key mode)" '"streamed"'
    expect_same "JSON chunk" "$(json_key chunk)" 100
    expect_same "JSON depth" "$(json_key depth)" 3
    expect_same "JSON input_passes" "$(json_key input_passes)" 1
    gs_check "JSON overlap is a positive number" \
        sh -c 'echo "$1" | grep -Eq "^[0-9.e+-]+$" && [ "$1" != 0 ]' - "$(json_key overlap)"
fi
if expect_ok "the human summary" 2 reduce -g 1000 --backend "$be"; then
    gs_check "the summary has a pipeline line with the overlap" \
        grep -Eq '^pipeline .*(streamed|resident).*depth [0-9]+.*overlap [0-9.]+' "$gs_tmp/stdout"
fi

# mode_is DESC NP MODE PASSES ARGS...: the run's pipeline mode and input reads.
mode_is() {
    mi_desc=$1 mi_np=$2 mi_mode=$3 mi_passes=$4
    shift 4
    if expect_ok "$mi_desc [$mi_np rank(s)]" "$mi_np" "$@" --backend "$be" --json -; then
        expect_same "$mi_desc: $mi_mode [$mi_np rank(s)]" "$(json_key mode)" "\"$mi_mode\""
        expect_same "$mi_desc: input read ${mi_passes}x [$mi_np rank(s)]" "$(json_key input_passes)" "$mi_passes"
    fi
}
mode_is "scan on several ranks is resident when it fits" 3 resident 1 scan -g "$n" -O "$d/m.npy"
mode_is "scan --stream on several ranks reads twice" 3 streamed 2 scan -g "$n" -O "$d/m.npy" --stream
mode_is "scan on one rank streams, reading once" 1 streamed 1 scan -g "$n" -O "$d/m.npy"
mode_is "scan --resident on one rank" 1 resident 1 scan -g "$n" -O "$d/m.npy" --resident
mode_is "reduce streams" 3 streamed 1 reduce -g "$n"
mode_is "reduce --resident" 3 resident 1 reduce -g "$n" --resident
rm -f "$d/m.npy"

# ---- every type x op: carries across chunks --------------------------------------
# With the same chunks, streamed and resident give the same bytes, floats
# included; integers give the same bytes with any chunks and rank count.
for t in i32 i64 u32 u64 f32 f64; do
    for op in sum prod min max; do
        kind=
        case $t$op in i32sum | u64max | f64sum | f32min) kind=--exclusive ;; esac
        what="scan $t $op $kind"
        # shellcheck disable=SC2086  # $kind is one word or none
        expect_ok "$what --resident --chunk 4099 (reference)" 3 scan -g "$n" -t "$t" -o "$op" $kind \
            --seed "$seed" --resident --chunk 4099 -O "$d/ref" --backend "$be" || continue
        # shellcheck disable=SC2086
        same_output "$what --stream --chunk 4099 --depth 3 = resident" 3 "$d/s" -g "$n" -t "$t" -o "$op" \
            $kind --seed "$seed" --stream --chunk 4099 --depth 3
        case $t in
            f*)
                # shellcheck disable=SC2086
                if expect_ok "$what --stream --chunk 1000 --depth 2 --verify" 3 scan -g "$n" -t "$t" \
                    -o "$op" $kind --seed "$seed" --stream --chunk 1000 --depth 2 --verify -O "$d/v" \
                    --backend "$be" --json -; then
                    expect_same "$what streamed: \"wrong\": 0" "$(json_key wrong)" 0
                fi
                ;;
            *)
                # shellcheck disable=SC2086
                same_output "$what on 1 rank with the default chunks" 1 "$d/one" -g "$n" -t "$t" \
                    -o "$op" $kind --seed "$seed"
                ;;
        esac
        rm -f "$d/ref" "$d/v"
    done
done

# reductions: integers exactly, floats within the bound
for t in i32 i64 u32 u64 f32 f64; do
    for op in sum prod min max; do
        if run_np 1 reduce -g "$n" -t "$t" -o "$op" --seed "$seed" --backend "$be" --json -; then
            whole=$(json_key result)
        else
            whole=
        fi
        if expect_ok "reduce $t $op --stream --chunk 4099 --depth 2 --verify" 3 reduce -g "$n" -t "$t" \
            -o "$op" --seed "$seed" --stream --chunk 4099 --depth 2 --verify --backend "$be" --json -; then
            expect_same "reduce $t $op streamed: \"wrong\": 0" "$(json_key wrong)" 0
            case $t in
                f*) ;;
                *) expect_same "reduce $t $op streamed = 1 rank, one chunk" "$(json_key result)" "$whole" ;;
            esac
        fi
    done
done

# ---- chunk boundaries, uneven and empty shards -------------------------------------
small=1000
if expect_ok "scan -g $small i64 (reference)" 1 scan -g "$small" -t i64 --seed "$seed" -O "$d/ref" \
    --backend "$be"; then
    same_output "chunks of 1 element, depth 1" 3 "$d/s" -g "$small" -t i64 --seed "$seed" \
        --stream --chunk 1 --depth 1
    same_output "chunks of 1 element, depth 4, resident" 2 "$d/s" -g "$small" -t i64 --seed "$seed" \
        --resident --chunk 1 --depth 4
    for depth in 1 2 16; do
        same_output "chunks of 7 (dividing no shard), depth $depth" 3 "$d/s" -g "$small" -t i64 \
            --seed "$seed" --stream --chunk 7 --depth "$depth"
    done
    same_output "a chunk larger than the shard" 2 "$d/s" -g "$small" -t i64 --seed "$seed" \
        --stream --chunk 1Gi
    same_output "uneven shards (1000 on 7 ranks), chunks of 3" 7 "$d/s" -g "$small" -t i64 \
        --seed "$seed" --stream --chunk 3
fi
for g in 2 5; do
    if expect_ok "scan -g $g (reference)" 1 scan -g "$g" -t u32 -O "$d/ref" --backend "$be"; then
        same_output "scan -g $g on 4 ranks in chunks of 1 (empty shards)" 4 "$d/s" -g "$g" -t u32 \
            --stream --chunk 1 --depth 2
    fi
done

# ---- files read and written in chunks ------------------------------------------------
head -c $((n * 4)) /dev/urandom >"$d/raw.i32"
if expect_ok "scan of a raw i32 file (reference)" 1 scan -i "$d/raw.i32" -t i32 -O "$d/ref" --backend "$be"; then
    same_output "file: --stream --chunk 4099 --depth 3" 3 "$d/s" -i "$d/raw.i32" -t i32 --stream \
        --chunk 4099 --depth 3
    same_output "file: --resident --chunk 4099" 3 "$d/s" -i "$d/raw.i32" -t i32 --resident --chunk 4099
    same_output "file: --stream --chunk 1000 --depth 1" 2 "$d/s" -i "$d/raw.i32" -t i32 --stream \
        --chunk 1000 --depth 1
fi
for op in min max sum; do
    one=
    if run_np 1 reduce -i "$d/raw.i32" -t i32 -o "$op" --backend "$be" --json -; then one=$(json_key result); fi
    if expect_ok "file: reduce $op --stream --chunk 999" 3 reduce -i "$d/raw.i32" -t i32 -o "$op" --stream \
        --chunk 999 --backend "$be" --json -; then
        expect_same "file: reduce $op in chunks = 1 rank" "$(json_key result)" "$one"
    fi
done
# a .npy input (data after a header) and a .npy output
if expect_ok "scan into a .npy file" 1 scan -g "$n" -t i64 -o max --seed "$seed" -O "$d/in.npy" --backend "$be" &&
    expect_ok "scan of a .npy file (reference)" 1 scan -i "$d/in.npy" -O "$d/ref" --backend "$be"; then
    same_output ".npy input, --stream --chunk 777" 3 "$d/s" -i "$d/in.npy" --stream --chunk 777
    same_output ".npy input, --resident --chunk 777" 3 "$d/s" -i "$d/in.npy" --resident --chunk 777
fi
rm -f "$d/ref"

# ---- a shard larger than the memory made available (--mem-cap) ---------------------
cap=300000
if expect_ok "scan i32 without a cap (reference)" 2 scan -g 1000003 -t i32 --seed "$seed" -O "$d/ref" \
    --backend "$be"; then
    if expect_ok "--mem-cap $cap: a 6 MB shard" 2 scan -g 1000003 -t i32 --seed "$seed" \
        -O "$d/s" --backend "$be" --mem-cap $cap --json -; then
        expect_same "under the cap: streamed" "$(json_key mode)" '"streamed"'
        expect_same "under the cap: the input is read twice" "$(json_key input_passes)" 2
        # each slot: the chunk's i32 input and i64 output, each padded to 16 bytes
        chunk=$(json_key chunk)
        ring=$(($(json_key depth) * ((chunk * 4 + 15) / 16 * 16 + (chunk * 8 + 15) / 16 * 16)))
        gs_check "under the cap: the ring ($ring bytes) fits in $cap" [ "$ring" -le "$cap" ]
        gs_check "under the cap: the same bytes" cmp "$d/ref" "$d/s"
    fi
    rm -f "$d/s"
    expect_fail "under the cap: --resident" 2 1 'resident' 'bytes' -- \
        scan -g 1000003 -t i32 -O "$out/y.npy" --resident --backend "$be" --mem-cap $cap
    expect_empty_dir "under the cap: --resident leaves no output" "$out"
    expect_fail "under the cap: a --chunk too large" 2 1 'chunk' 'bytes' -- \
        scan -g 1000003 -t i32 -O "$out/y.npy" --chunk 100000 --backend "$be" --mem-cap $cap
    expect_empty_dir "under the cap: a --chunk too large leaves no output" "$out"
    expect_fail "a cap below one chunk" 2 1 'chunk' -- reduce -g 1000 -t f64 --backend "$be" --mem-cap 8
    expect_fail "a --mem-cap that is no number" 1 2 'mem-cap' -- reduce -g 10 --backend "$be" --mem-cap lots
fi
rm -f "$d/ref"

# ---- a failure in the middle of a streamed run ---------------------------------------
# 3000 i64 elements, 0 but for INT64_MAX at 1700 and 1 at 1701: the prefix sum
# overflows in rank 1's shard, in a middle chunk. An older output survives.
{
    head -c $((1700 * 8)) /dev/zero
    printf '\377\377\377\377\377\377\377\177\001\000\000\000\000\000\000\000'
    head -c $((1298 * 8)) /dev/zero
} >"$d/ovf.i64"
for np in 1 3; do
    for mode in --stream --resident; do
        echo old >"$out/y.bin"
        expect_fail "overflow in a middle chunk, $mode [$np rank(s)]" "$np" 1 'ovf\.i64' 'overflow' -- \
            scan -i "$d/ovf.i64" -t i64 -O "$out/y.bin" --chunk 100 --depth 3 "$mode" --backend "$be"
        gs_check "overflow in a middle chunk, $mode: the old output is untouched [$np rank(s)]" \
            [ "$(cat "$out/y.bin")" = old ]
        rm -f "$out/y.bin"
        expect_empty_dir "overflow in a middle chunk, $mode: no temporary left [$np rank(s)]" "$out"
    done
done

# ---- the progress bar -----------------------------------------------------------------
# script(1) gives the run a terminal; GS_PROGRESS_DELAY=0 (test-only) draws
# the bar at once instead of after 2 s.
if command -v script >/dev/null 2>&1; then
    # tty_run ARGS...: gpuscan ARGS on a terminal; what it printed in $gs_tmp/tty.
    tty_run() {
        GS_PROGRESS_DELAY=0 timeout -k 10 "$GS_TEST_TIMEOUT" \
            script -qec "'$GS_BIN' $*" /dev/null >"$gs_tmp/tty" 2>&1 </dev/null
    }
    if tty_run reduce -g 100000 --chunk 1000 --backend "$be"; then
        gs_check "on a terminal: a progress bar" grep -aq '\[#*\.*\] *[0-9]*%' "$gs_tmp/tty"
        gs_check "on a terminal: the bar reaches 100%" grep -aq '100%' "$gs_tmp/tty"
        gs_check "on a terminal: the bar is erased before the summary" grep -aq "$(printf '\033')\\[K# gpuscan" "$gs_tmp/tty"
    else
        gs_fail "reduce on a terminal" "exit $?"
    fi
    if tty_run reduce -g 100000 --chunk 1000 --backend "$be" --quiet; then
        gs_check "on a terminal with --quiet: no bar" sh -c "! grep -aq '%' '$gs_tmp/tty'"
    else
        gs_fail "reduce --quiet on a terminal" "exit $?"
    fi
else
    gs_skip "progress bar: no script(1) to give the run a terminal"
fi
GS_PROGRESS_DELAY=0
export GS_PROGRESS_DELAY
if expect_ok "not on a terminal" 2 reduce -g 100000 --chunk 1000 --backend "$be"; then
    gs_check "not on a terminal: no bar" sh -c "! grep -q '%' '$gs_tmp/stderr'"
fi
unset GS_PROGRESS_DELAY

gs_summary
