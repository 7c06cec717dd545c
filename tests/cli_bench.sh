#!/bin/sh
# cli_bench.sh - `gpuscan bench` and the scaling scripts of jobs/: the table,
# the CSV and the JSON hold the same numbers; planted wrong results and a
# --min-bw out of reach fail the run; usage errors; the job scripts pass
# bash -n and shellcheck; the local runner runs a tiny study.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
# a Python that reads JSON, for the checks and for json_get
gs_python=$(gs_find_python json) || gs_python=
jobs=${GS_SRCDIR:-.}/jobs
# tiny and quick: a few sizes, few runs
quick="--backend $be -n 3 -w 1"

# ---- help and usage errors ----------------------------------------------------------
if expect_ok "bench --help" 0 bench --help; then
    for text in '-b MIN' '-e MAX' '-f FACTOR' '-i STEP' '-n ITERS' '-w WARMUP' '-c CHECK_ITERS' \
        '-t TYPE|all' '-o OP|all' '--reduce' '--scan' '--exclusive' '--resident' '--stream' \
        '--json FILE' '--csv FILE' '--min-bw' '--seed' '--exact' 'GLOBAL element counts'; do
        gs_check "bench --help mentions '$text'" grep -q -e "$text" "$gs_tmp/stdout"
    done
fi
expect_fail "bench -b 0: not a count" 1 2 '-b 0' 'count' -- bench -b 0
expect_fail "bench -e below -b" 1 2 '-e' 'smaller' -- bench -b 2k -e 1k
expect_fail "bench -f and -i together" 1 2 '-f' '-i' -- bench -f 4 -i 1000
expect_fail "bench -f 1: factor too small" 1 2 '-f 1' -- bench -f 1
expect_fail "bench -t bogus" 1 2 'bogus' 'type' -- bench -t bogus
expect_fail "bench -o all-ish" 1 2 'alls' 'operation' -- bench -o alls
expect_fail "bench -n 0" 1 2 '-n 0' -- bench -n 0
expect_fail "bench --min-bw -1" 1 2 'min-bw' -- bench --min-bw -1
expect_fail "bench unknown option" 1 2 'unknown option' '--bogus' -- bench --bogus
expect_fail "bench stray argument" 1 2 'unexpected' 'stray' -- bench stray

# ---- table, CSV and JSON hold the same numbers ---------------------------------------
# check_reports STDOUT CSV JSON NP ROWS: every printed row is in the CSV and the
# JSON, field for field; the footer's average and #wrong are the JSON's.
cat >"$gs_tmp/check.py" <<'EOF'
import csv, json, sys
table, csv_path, json_path, np, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
lines = open(table).read().splitlines()
rows = [l.split() for l in lines if l[:1] == " " and l.split()[0].isdigit()]
with open(csv_path) as f:
    recs = list(csv.DictReader(f))
doc = json.load(open(json_path))
assert len(rows) == len(recs) == len(doc["rows"]) == want, (len(rows), len(recs), len(doc["rows"]), want)
exact = [l for l in lines if l.startswith("#     elements")][0].split()[-1] == "exact"   # --exact
extra = len(rows[0]) - exact == 14    # -I: min, max, p99 columns
names = ["elements", "bytes", "type", "op", "kind", "mode", "time_us"]
names += ["min_us", "max_us", "p99_us"] if extra else []
names += ["gbps_rank", "gbps_total", "ceiling_pct", "wrong"]
names += ["exact"] if exact else []
for row, rec, obj in zip(rows, recs, doc["rows"]):
    assert len(row) == len(names), row
    assert rec["ranks"] == str(np) and rec["backend"] == doc["backend"], rec
    for name, printed in zip(names, row):
        text = rec[name] if rec[name] != "" else "-"
        assert printed == text, (name, printed, rec[name])
        value = obj[name]
        if value is None:
            assert printed == "-", (name, printed)
        elif isinstance(value, bool):
            assert printed == ("yes" if value else "no"), (name, value, printed)
        elif isinstance(value, str):
            assert value == printed, (name, value, printed)
        else:
            assert value == float(printed), (name, value, printed)
    for name in ("min_us", "max_us", "p99_us"):   # in the files even without -I
        assert obj[name] == float(rec[name]), (name, obj[name], rec[name])
    assert rec["exact"] == ("yes" if obj["exact"] else "no"), rec   # in the files even without --exact
    assert float(rec["min_us"]) <= float(rec["time_us"]) <= float(rec["max_us"]), rec
assert doc["ranks"] == np and len(doc["devices"]) == np, doc["devices"]
avg = [l for l in lines if l.startswith("# average bandwidth per rank:")][0].split()[5]
assert doc["avg_gbps_rank"] == float(avg), (doc["avg_gbps_rank"], avg)
total = [l for l in lines if l.startswith("# total #wrong:")][0].split()[3]
assert (doc["wrong_total"] is None and total == "-") or doc["wrong_total"] == int(total), total
print("ok")
EOF

# bench_reports DESC NP ROWS ARGS...: bench ARGS on NP ranks succeeds and its
# table, CSV and JSON agree
bench_reports() {
    desc=$1 np=$2 rows=$3
    shift 3
    rm -f "$gs_tmp/b.csv" "$gs_tmp/b.json"
    expect_ok "$desc" "$np" bench "$@" --csv "$gs_tmp/b.csv" --json "$gs_tmp/b.json" || return 1
    gs_check "$desc: the footer says ok" grep -q '^# result: ok$' "$gs_tmp/stdout"
    gs_check "$desc: one header line per rank" \
        [ "$(grep -c '^#  rank ' "$gs_tmp/stdout")" -eq "$np" ]
    if [ -n "$gs_python" ]; then
        gs_check "$desc: table, CSV and JSON hold the same $rows rows" \
            "$gs_python" "$gs_tmp/check.py" "$gs_tmp/stdout" "$gs_tmp/b.csv" "$gs_tmp/b.json" "$np" "$rows"
    else
        gs_skip "$desc: CSV and JSON contents (no python3)"
        gs_check "$desc: CSV of $rows rows" [ "$(($(wc -l <"$gs_tmp/b.csv") - 1))" -eq "$rows" ]
    fi
}

for np in 1 2; do
    # shellcheck disable=SC2086  # $quick is several options
    bench_reports "bench i64 all ops, reduce and scan, -I, on $np rank(s)" "$np" 32 \
        $quick -b 1000 -e 8000 -f 2 -t i64 -o all -I
    # shellcheck disable=SC2086
    bench_reports "bench f64 exclusive scans, resident and streamed, -i, on $np rank(s)" "$np" 6 \
        $quick -b 1000 -e 3000 -i 1000 -t f64 -o sum --scan --exclusive --resident --stream -c 2
    # shellcheck disable=SC2086
    bench_reports "bench u32 max -c 0 (nothing checked) on $np rank(s)" "$np" 2 \
        $quick -b 4Ki -t u32 -o max -c 0
done
# fewer elements than ranks
# shellcheck disable=SC2086
bench_reports "bench of 1 element on 3 ranks" 3 2 $quick -b 1 -t i32

# ---- wrong results and slow runs fail ------------------------------------------------
# every row of a run with the hook has exactly one wrong result (-c 1)
export GS_BENCH_CORRUPT=1
for np in 1 2; do
    for case in "i64 all 16" "f32 sum 4" "f64 max 4"; do
        # shellcheck disable=SC2086  # TYPE OP ROWS
        set -- $case
        desc="GS_BENCH_CORRUPT=1 bench -t $1 -o $2 on $np rank(s)"
        rm -f "$gs_tmp/w.json"
        # shellcheck disable=SC2086  # $quick is several options
        expect_fail "$desc fails" "$np" 1 'wrong' -- \
            bench $quick -b 2000 -e 4000 -t "$1" -o "$2" --json "$gs_tmp/w.json"
        expect_same "$desc: #wrong is 1 in each of $3 rows" \
            "$(awk '$1 ~ /^[0-9]+$/ { n++; w[$NF] } END { for (x in w) printf "%s/%d", x, n }' "$gs_tmp/stdout")" "1/$3"
        if [ -n "$gs_python" ]; then
            expect_same "$desc: JSON result" "$(json_get "$gs_tmp/w.json" result)" '"wrong"'
            expect_same "$desc: JSON wrong_total" "$(json_get "$gs_tmp/w.json" wrong_total)" "$3"
        fi
    done
done
unset GS_BENCH_CORRUPT
# shellcheck disable=SC2086
expect_fail "bench --min-bw out of reach fails" 2 1 'below --min-bw' -- bench $quick -b 1000 --min-bw 1e12
# shellcheck disable=SC2086
if expect_ok "bench --min-bw 0 passes" 2 bench $quick -b 1000 --min-bw 0 --json "$gs_tmp/m.json" &&
    [ -n "$gs_python" ]; then
    expect_same "bench --min-bw 0: JSON min_bw" "$(json_get "$gs_tmp/m.json" min_bw)" 0
fi
# shellcheck disable=SC2086
expect_fail "bench --json into a missing folder fails" 1 1 'nosuchdir' 'JSON' -- \
    bench $quick -b 1000 --json "$gs_tmp/nosuchdir/x.json"

# ---- --exact: an exact row after each f32/f64 sum row --------------------------------
expect_fail "bench --exact without a float sum" 1 2 'exact' 'f32/f64 sums' -- bench --exact -t i64 -o all
for np in 1 3; do
    # shellcheck disable=SC2086  # $quick is several options
    if bench_reports "bench --exact, all types, reduce and scan, on $np rank(s)" "$np" 32 \
        $quick -b 1000 -e 3001 -i 2001 -t all -o sum --exact; then
        # rows as printed: the exact column last; each exact row follows its plain twin
        expect_same "bench --exact on $np rank(s): exact rows follow their plain f32/f64 sum rows" \
            "$(awk '$1 ~ /^[0-9]+$/ { if ($NF == "yes") print prev; prev = $3 " " $4 " " $NF }' "$gs_tmp/stdout" |
                sort | uniq -c | tr -s ' ' | tr '\n' ';')" " 4 f32 sum no; 4 f64 sum no;"
        expect_same "bench --exact on $np rank(s): nothing wrong" \
            "$(awk '$1 ~ /^[0-9]+$/ { w[$(NF - 1)] } END { for (x in w) print x }' "$gs_tmp/stdout")" 0
    fi
done
# shellcheck disable=SC2086
if bench_reports "bench --exact -t f32 -o all: one exact row, after the sum" 1 5 $quick -b 1000 -t f32 -o all --reduce --exact; then
    expect_same "bench --exact -t f32 -o all: the ops in order, exact or not" \
        "$(awk '$1 ~ /^[0-9]+$/ { printf "%s-%s ", $4, $NF }' "$gs_tmp/stdout")" "sum-no sum-yes prod-no min-no max-no "
fi
# ladder --exact: the exact row after cub (GPU only), a usage error without a float sum
expect_fail "ladder --exact without a float sum" 1 2 'exact' 'f32/f64 sums' -- ladder --exact -t i32,u64 -o all
if expect_ok "ladder --help" 0 ladder --help; then
    gs_check "ladder --help mentions --exact" grep -q -e '--exact' "$gs_tmp/stdout"
fi
if [ "$be" = cuda ]; then
    # cub-native: CUB's own scan after cub where CUB has one (sums both ways,
    # inclusive min/max; no product, no exclusive max), timed and not checked
    for kind in "" --exclusive; do
        if expect_ok "ladder --scan $kind -o all: cub-native rows" 1 ladder --scan $kind -t i32 -o all -g 65537 -n 2 -w 1; then
            expect_same "ladder --scan $kind: which cases have a cub-native row, after cub, unchecked" \
                "$(awk '/^# / { op = $5 } $1 == "cub-native" { printf "%s:%s:%s ", op, prev, $NF } { prev = $1 }' "$gs_tmp/stdout")" \
                "$([ -z "$kind" ] && echo "sum,:cub:- min,:cub:- max,:cub:- " || echo "sum,:cub:- ")"
        fi
    done
    # the CUDA backend has exact kernels when a tiny --exact run takes it
    if run_np 1 reduce -g 100 -t f32 --exact --backend cuda -q; then
        if expect_ok "ladder --exact -t f32,f64 --scan" 1 ladder --exact -t f32,f64 -o sum --scan -g 1048583 -n 2 -w 1; then
            expect_same "ladder --exact: an exact row per case, nothing wrong" \
                "$(awk '$1 == "exact" { print $NF }' "$gs_tmp/stdout" | tr '\n' ' ')" "0 0 "
        fi
    else
        expect_fail "ladder --exact without exact CUDA kernels" 1 1 'no exact kernels' -- ladder --exact -t f32 -g 1Mi -n 1 -w 0
    fi
fi
# the exact rows' check is bit for bit: a planted wrong element or result is caught
export GS_BENCH_CORRUPT=1
for np in 1 2; do
    # shellcheck disable=SC2086  # $quick is several options
    expect_fail "GS_BENCH_CORRUPT=1 bench --exact on $np rank(s) fails" "$np" 1 'wrong' -- \
        bench $quick -b 3000 -t f64 --exact --exclusive --resident --stream
    expect_same "GS_BENCH_CORRUPT=1 bench --exact on $np rank(s): #wrong is 1 in each exact row, resident and streamed" \
        "$(awk '$1 ~ /^[0-9]+$/ && $NF == "yes" { n++; w[$(NF - 1)] } END { for (x in w) printf "%s/%d", x, n }' "$gs_tmp/stdout")" "1/4"
done
unset GS_BENCH_CORRUPT

# ---- job scripts ----------------------------------------------------------------------
for script in "$jobs"/*.sh "$jobs"/*.sbatch; do
    name=jobs/${script##*/}
    gs_check "$name: bash -n" bash -n "$script"
    if command -v shellcheck >/dev/null 2>&1; then
        gs_check "$name: shellcheck" shellcheck -x "$script"
    else
        gs_skip "$name: shellcheck (not installed)"
    fi
done

# ---- the local runner, on the CPU backend --------------------------------------------
# `mpirun -np N PROGRAM ...` through the tests' launcher
cat >"$gs_tmp/mpirun" <<'EOF'
#!/bin/sh
[ "$1" = -np ] || { echo "mpirun wrapper: expected -np N, got $*" >&2; exit 99; }
np=$2
shift 2
exec "$GS_MPIRUN" "$np" "$@"
EOF
chmod +x "$gs_tmp/mpirun"
export GS_MPIRUN
out=$gs_tmp/scaling
if GPUSCAN=$GS_BIN MPIRUN=$gs_tmp/mpirun timeout -k 10 $((4 * GS_TEST_TIMEOUT)) \
    bash "$jobs/scaling_local.sh" -g 2 -N 4096 -W 2Ki -o "$out" -- --backend cpu -t i64 -n 2 -w 0 \
    >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"; then
    gs_pass "scaling_local.sh -g 2 on the CPU backend"
    lines=$(cut -d, -f1-3 "$out/scaling.csv" | tr '\n' ' ')
    expect_same "scaling_local.sh: strong and weak, reduce and scan, 1 and 2 ranks" "$lines" \
        "study,series,ranks strong,reduce-i64-sum-resident,1 strong,reduce-i64-sum-resident,2 strong,scan-i64-sum-resident,1 strong,scan-i64-sum-resident,2 weak,reduce-i64-sum-resident,1 weak,reduce-i64-sum-resident,2 weak,scan-i64-sum-resident,1 weak,scan-i64-sum-resident,2 "
    expect_same "scaling_local.sh: weak scaling doubles the elements" \
        "$(awk -F, '$1 == "weak" { print $4 }' "$out/scaling.csv" | sort -un | tr '\n' ' ')" "2048 4096 "
    expect_same "scaling_local.sh: the base point has speedup and efficiency 1" \
        "$(awk -F, '$3 == 1 { print $10 "/" $11 }' "$out/scaling.csv" | sort -u)" "1.0000/1.0000"
    if command -v gnuplot >/dev/null 2>&1; then
        for plot in strong.svg weak.svg; do
            gs_check "scaling_local.sh: plot scaling-$plot" [ -s "$out/scaling-$plot" ]
        done
        if gnuplot -e 'exit (strstrt(GPVAL_TERMINALS, "png") > 0 ? 0 : 1)' 2>/dev/null; then
            gs_check "scaling_local.sh: PNG plots" [ -s "$out/scaling-strong.png" ] && [ -s "$out/scaling-weak.png" ]
        fi
    else
        gs_skip "scaling_local.sh plots (no gnuplot)"
    fi
else
    gs_fail "scaling_local.sh -g 2 on the CPU backend" "exit $?"
    sed -n '1,20s/^/    | /p' "$gs_tmp/stdout" "$gs_tmp/stderr"
fi

# ---- reports to stdout (-): stdout holds the report alone, no file named '-'
(cd "$gs_tmp" && run_np 1 bench -b 100 --reduce --backend "$be" -n 1 -w 0 --csv -)
expect_same "bench --csv -: stdout is the CSV alone (header and one row)" \
    "$(sed -n '1s/,.*//p' "$gs_tmp/stdout"):$(wc -l <"$gs_tmp/stdout")" "backend:2"
if [ -n "$gs_python" ] && (cd "$gs_tmp" && run_np 2 bench -b 100 --reduce --backend "$be" -n 1 -w 0 --json -); then
    expect_same "bench --json -: stdout is one JSON object" \
        "$("$gs_python" -c 'import json, sys; print(json.load(sys.stdin)["result"])' <"$gs_tmp/stdout")" ok
fi
gs_check "bench reports to -: no file named '-'" [ ! -e "$gs_tmp/-" ]

# ---- the files it is given: reports never replace a --read file, and a
# --read file it cannot read stops it before the sweep -------------------------
reads=$gs_tmp/reads
mkdir "$reads"
mk_npy "$reads/in.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" 12
cp "$reads/in.npy" "$reads/in.orig"
# shellcheck disable=SC2317  # called through gs_check
no_sweep() { [ ! -e "$reads/r.csv" ] && ! grep -q '^# result' "$gs_tmp/stdout"; }
for np in 1 2; do
    expect_fail "bench --csv the --read file [$np rank(s)]" "$np" 2 'in\.npy' 'same file as a --read' -- \
        bench -b 10 -n 1 -w 0 --backend "$be" --read "$reads/in.npy" --csv "$reads/in.npy"
    expect_fail "bench --json the --read file, spelled ./ [$np rank(s)]" "$np" 2 'in\.npy' 'same file as a --read' -- \
        bench -b 10 -n 1 -w 0 --backend "$be" --read "$reads/in.npy" --json "$reads/./in.npy"
    gs_check "bench reports onto the --read file: the file untouched [$np rank(s)]" cmp "$reads/in.npy" "$reads/in.orig"
    expect_fail "bench --read a missing file [$np rank(s)]" "$np" 1 'missing\.npy' 'no such file' -- \
        bench -b 10 -n 1 -w 0 --backend "$be" --read "$reads/missing.npy" --csv "$reads/r.csv"
    gs_check "bench --read a missing file: stopped before the sweep, no report [$np rank(s)]" no_sweep
done

gs_summary
