#!/bin/sh
# cli_basics.sh - gpuscan on good input: --help, --version, info, reduce and
# scan of generated data on 1 to 3 ranks (integer results must not depend on
# the rank count), scan output files, --verify, JSON, size suffixes.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
n=100003         # a prime: shards never divide evenly
seed=12345
version=$(sed -n 's/^AC_INIT(\[gpuscan\], \[\([^]]*\)\].*/\1/p' "${GS_SRCDIR:-.}/configure.ac")

# ---- help, version, info -------------------------------------------------------
for np in 0 1; do
    where="without mpirun"
    [ "$np" -eq 0 ] || where="on 1 rank"
    if expect_ok "--help $where" "$np" --help; then
        for usage in 'reduce .*-i FILE.*-g N' 'scan .*-O OUT' 'info' '--json' '--exclusive' \
            '--backend' '--verify' '--seed' 'gpuscan bench .*\[options\]' 'gpuscan ladder .*\[options\]' \
            '^  bench .*bench --help' '^  ladder .*ladder --help'; do
            gs_check "--help $where mentions '$usage'" grep -q -e "$usage" "$gs_tmp/stdout"
        done
    fi
    if expect_ok "--version $where" "$np" --version; then
        gs_check "--version says gpuscan ${version:-?}" grep -q "gpuscan ${version:-?}" "$gs_tmp/stdout"
    fi
done

for np in 1 2; do
    if expect_ok "info on $np rank(s)" "$np" info; then
        lines=$(grep -Ec '^[[:space:]]*rank[[:space:]]+[0-9]+' "$gs_tmp/stdout")
        gs_check "info prints one 'rank N' line per rank ($np)" [ "$lines" -eq "$np" ]
        # the auto backend fell back to the CPU: info says why (no driver,
        # CUDA_VISIBLE_DEVICES empty, built without CUDA)
        if grep -q 'backend: cpu' "$gs_tmp/stdout"; then
            gs_check "info on the CPU backend says why ($np)" \
                grep -Eq 'on the CPU backend because .*(without CUDA|no usable GPU|CUDA_VISIBLE_DEVICES)' "$gs_tmp/stdout"
        fi
    fi
done
if expect_ok "info --backend cpu" 1 info --backend cpu; then
    expect_same "info --backend cpu: no reason needed" "$(grep -c because "$gs_tmp/stdout")" 0
fi
cvd_saved=${CUDA_VISIBLE_DEVICES-unset}
CUDA_VISIBLE_DEVICES=''
export CUDA_VISIBLE_DEVICES
if expect_ok "info with CUDA_VISIBLE_DEVICES empty" 1 info; then
    gs_check "info with CUDA_VISIBLE_DEVICES empty: the CPU backend, and why" \
        grep -Eq 'on the CPU backend because .*(CUDA_VISIBLE_DEVICES is empty|without CUDA)' "$gs_tmp/stdout"
fi
if [ "$cvd_saved" = unset ]; then unset CUDA_VISIBLE_DEVICES; else CUDA_VISIBLE_DEVICES=$cvd_saved; fi
for word in help version; do
    if expect_ok "gpuscan $word (a command)" 1 "$word"; then
        if [ "$word" = help ]; then
            gs_check "gpuscan help prints the usage" grep -q '^usage: gpuscan reduce' "$gs_tmp/stdout"
        else
            gs_check "gpuscan version says gpuscan ${version:-?}" grep -q "gpuscan ${version:-?}" "$gs_tmp/stdout"
        fi
    fi
done

# ---- reduce: the same exact integer on any rank count --------------------------
# result_of NP ARGS...: the "result" of reduce --json - on NP ranks, or "".
result_of() {
    np=$1
    shift
    if run_np "$np" reduce "$@" --backend "$be" --json -; then
        json_get "$gs_tmp/stdout" result
    fi
}

# integer results are kept in $gs_tmp/ref/TYPE-OP for the scans below
mkdir "$gs_tmp/ref"
for t in i32 i64 u32 u64; do
    for op in sum prod min max; do
        one=$(result_of 1 -g "$n" -t "$t" -o "$op" --seed "$seed")
        case $one in
            '' | *[!0-9-]*) gs_fail "reduce -g $n -t $t -o $op on 1 rank: an exact integer" \
                "got '$one', exit $gs_rc" ;;
            *) gs_pass "reduce -g $n -t $t -o $op on 1 rank: $one" ;;
        esac
        echo "$one" >"$gs_tmp/ref/$t-$op"
        three=$(result_of 3 -g "$n" -t "$t" -o "$op" --seed "$seed")
        expect_same "reduce -g $n -t $t -o $op: 3 ranks give the 1-rank result" "$three" "$one"
    done
done

# fewer elements than ranks, and none at all
for t in i32 u64; do
    for op in sum max; do
        one=$(result_of 1 -g 2 -t "$t" -o "$op" --seed "$seed")
        three=$(result_of 3 -g 2 -t "$t" -o "$op" --seed "$seed")
        expect_same "reduce -g 2 -t $t -o $op: 3 ranks (one empty) = 1 rank" "$three" "$one"
    done
    expect_same "reduce -g 0 -t $t -o sum on 3 ranks is 0" "$(result_of 3 -g 0 -t "$t" -o sum)" 0
    expect_same "reduce -g 0 -t $t -o prod on 3 ranks is 1" "$(result_of 3 -g 0 -t "$t" -o prod)" 1
done

# the seed matters, and only the seed
a=$(result_of 2 -g 1000 -t i64 --seed 1)
b=$(result_of 2 -g 1000 -t i64 --seed 2)
c=$(result_of 3 -g 1000 -t i64 --seed 1)
gs_check "--seed changes the generated data" [ "$a" != "$b" ]
expect_same "--seed gives the same data on any rank count" "$c" "$a"
# decimal, a leading 0 not octal, or hexadecimal after 0x
d=$(result_of 1 -g 1000 -t i64 --seed 16)
expect_same "--seed 0x10 is 16" "$(result_of 1 -g 1000 -t i64 --seed 0x10)" "$d"
expect_same "--seed 016 is 16, not octal 14" "$(result_of 1 -g 1000 -t i64 --seed 016)" "$d"
expect_same "--seed 09 is 9" "$(result_of 1 -g 1000 -t i64 --seed 09)" "$(result_of 1 -g 1000 -t i64 --seed 9)"
gs_check "--seed 14 is not 16" [ "$(result_of 1 -g 1000 -t i64 --seed 14)" != "$d" ]

# floats: --verify against the independent reference
for t in f32 f64; do
    for op in sum prod min max; do
        if expect_ok "reduce -g $n -t $t -o $op --verify on 3 ranks" 3 \
            reduce -g "$n" -t "$t" -o "$op" --verify --backend "$be" --json -; then
            gs_check "reduce $t $op --verify: \"wrong\": 0" \
                [ "$(json_get "$gs_tmp/stdout" wrong)" = 0 ]
        fi
    done
done

# ---- JSON ----------------------------------------------------------------------
if expect_ok "reduce --json - on 2 ranks" 2 reduce -g 1000 -t u32 --backend "$be" --json -; then
    if [ -n "$gs_python" ]; then
        gs_check "reduce --json -: stdout is one JSON object with the keys" "$gs_python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("command", "op", "type", "n", "ranks", "backend", "seconds", "result"):
    assert k in d, "no key " + k
assert d["command"] == "reduce" and d["op"] == "sum" and d["type"] == "u32", d
assert d["n"] == 1000 and d["ranks"] == 2 and isinstance(d["result"], int), d
assert isinstance(d["seconds"], (int, float)), d' "$gs_tmp/stdout"
    else
        for k in command op type n ranks backend seconds result; do
            gs_check "reduce --json -: key $k" grep -q "\"$k\":" "$gs_tmp/stdout"
        done
    fi
fi
mkdir "$gs_tmp/json"
if expect_ok "reduce --json FILE on 3 ranks" 3 \
    reduce -g 1000 -t f64 -o max --backend "$be" --json "$gs_tmp/json/r.json"; then
    gs_check "--json FILE: the human summary still goes to stdout" [ -s "$gs_tmp/stdout" ]
    gs_check "--json FILE: a float result" \
        grep -Eq '"result": *[0-9.e+-]+[,}]' "$gs_tmp/json/r.json"
    gs_check "--json FILE: only the file, no temporary left" \
        [ "$(ls -A "$gs_tmp/json")" = r.json ]
fi

# ---- scan ----------------------------------------------------------------------
# npy_header_len FILE: prelude plus header of a version 1.0 .npy file.
npy_header_len() {
    echo $((10 + $(od -An -tu2 -j8 -N2 "$1")))
}

mkdir "$gs_tmp/scan"
for t in i32 i64 u32 u64; do
    for op in sum min max prod; do
        # any rank count writes the same bytes
        last=
        for np in 1 3; do
            out=$gs_tmp/scan/$t-$op-$np.npy
            if expect_ok "scan -g $n -t $t -o $op -O .npy on $np rank(s)" "$np" \
                scan -g "$n" -t "$t" -o "$op" --seed "$seed" -O "$out" --backend "$be" --json -; then
                last=$(json_get "$gs_tmp/stdout" last)
            fi
        done
        one=$gs_tmp/scan/$t-$op-1.npy
        [ -f "$one" ] || continue
        gs_check "scan $t $op: 3 ranks write the same file as 1" cmp "$one" "$gs_tmp/scan/$t-$op-3.npy"
        # sum and prod widen to 64 bits, min and max keep the type
        size=8
        case $t$op in i32min | i32max | u32min | u32max) size=4 ;; esac
        gs_check "scan $t $op: file size is header + $n x $size bytes" \
            [ "$(wc -c <"$one")" -eq $(($(npy_header_len "$one") + n * size)) ]
        gs_check "scan $t $op: header is 64-byte aligned" \
            [ $(($(npy_header_len "$one") % 64)) -eq 0 ]
        expect_same "scan $t $op: \"last\" is the reduction" "$last" "$(cat "$gs_tmp/ref/$t-$op")"
    done
done

# raw output: the same data without the header
raw=$gs_tmp/scan/raw.bin
npy=$gs_tmp/scan/i64-sum-1.npy
if [ -f "$npy" ] && expect_ok "scan -O raw file on 2 ranks" 2 \
    scan -g "$n" -t i64 --seed "$seed" -O "$raw" --backend "$be"; then
    tail -c +$(($(npy_header_len "$npy") + 1)) "$npy" >"$gs_tmp/scan/data"
    gs_check "raw scan output = the .npy's data" cmp "$raw" "$gs_tmp/scan/data"
fi

# --verify on every type and both kinds; float output keeps the type
for t in i32 i64 u32 u64 f32 f64; do
    for kind in "" --exclusive; do
        out=$gs_tmp/scan/v.npy
        # shellcheck disable=SC2086  # $kind is one word or none
        if expect_ok "scan -g $n -t $t $kind --verify on 3 ranks" 3 \
            scan -g "$n" -t "$t" $kind --verify -O "$out" --backend "$be" --json -; then
            gs_check "scan $t $kind --verify: \"wrong\": 0" \
                [ "$(json_get "$gs_tmp/stdout" wrong)" = 0 ]
            gs_check "scan $t $kind --verify: \"output\" is the path" \
                [ "$(json_get "$gs_tmp/stdout" output)" = "\"$out\"" ]
            case $t in f32) size=4 ;; *) size=8 ;; esac
            gs_check "scan $t $kind: output of $size-byte elements" \
                [ "$(wc -c <"$out")" -eq $(($(npy_header_len "$out") + n * size)) ]
        fi
        rm -f "$out"
    done
done

# an empty scan writes an empty array; more ranks than elements work
for g in 0 2; do
    out=$gs_tmp/scan/e$g.npy
    if expect_ok "scan -g $g on 3 ranks" 3 scan -g "$g" -t i32 -O "$out" --verify --backend "$be"; then
        gs_check "scan -g $g: file of $g elements" \
            [ "$(wc -c <"$out")" -eq $(($(npy_header_len "$out") + g * 8)) ]
    fi
done

# ---- NumPy's type names --------------------------------------------------------
# each alias gives the result of gpuscan's own name, and the same result type
for pair in float32:f32 f4:f32 '<f4:f32' float64:f64 '<f8:f64' int32:i32 i4:i32 '=i4:i32' \
    int64:i64 '<i8:i64' uint32:u32 u4:u32 uint64:u64 u8:u64; do
    alias=${pair%%:*} ours=${pair#*:}
    if run_np 1 reduce -g 1001 -t "$ours" --seed "$seed" --backend "$be" --json - &&
        want=$(json_get "$gs_tmp/stdout" result)$(json_get "$gs_tmp/stdout" result_type) &&
        run_np 1 reduce -g 1001 -t "$alias" --seed "$seed" --backend "$be" --json -; then
        expect_same "-t $alias is -t $ours" \
            "$(json_get "$gs_tmp/stdout" result)$(json_get "$gs_tmp/stdout" result_type)" "$want"
    else
        gs_fail "-t $alias is -t $ours" "exit $gs_rc"
        gs_stderr_tail
    fi
done

# ---- floats stay floats ----------------------------------------------------------
# a zero or whole float result prints as 0.0, so that Python reads a float
for t in f32 f64; do
    if expect_ok "reduce -g 0 -t $t --json -" 1 reduce -g 0 -t "$t" --backend "$be" --json -; then
        expect_same "reduce -g 0 -t $t: JSON result 0.0" "$(sed -n 's/.*"result": \([^,]*\),.*/\1/p' "$gs_tmp/stdout")" 0.0
        [ -z "$gs_python" ] || expect_same "reduce -g 0 -t $t: Python reads a float" \
            "$("$gs_python" -c 'import json, sys; print(type(json.load(open(sys.argv[1]))["result"]).__name__)' "$gs_tmp/stdout")" float
    fi
    if expect_ok "reduce -g 0 -t $t (summary)" 1 reduce -g 0 -t "$t" --backend "$be"; then
        gs_check "reduce -g 0 -t $t: the summary says 0.0" grep -q '^result  0\.0 ' "$gs_tmp/stdout"
    fi
done

# ---- sizes ---------------------------------------------------------------------
for s in 0:0 1000:1000 1k:1000 1Ki:1024 3Ki:3072 2M:2000000 1Mi:1048576; do
    if expect_ok "-g ${s%%:*} on 2 ranks" 2 reduce -g "${s%%:*}" -t u32 --backend "$be" --json -; then
        gs_check "-g ${s%%:*} is ${s#*:} elements" [ "$(json_get "$gs_tmp/stdout" n)" = "${s#*:}" ]
    fi
done
# large sizes parse (not run: the bad op must be the only complaint)
for s in 1G 1Gi 5Gi 1T 1Ti; do
    if expect_fail "-g $s parses" 1 2 'nosuchop' -- reduce -g "$s" -o nosuchop &&
        grep -q -e "$s" "$gs_tmp/errline"; then
        gs_fail "-g $s: the size is not what the error blames"
    fi
done

gs_summary
