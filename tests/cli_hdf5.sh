#!/bin/sh
# cli_hdf5.sh - the acceptance of issue 16, HDF5 inputs and outputs: for
# every type, datasets made by h5py (contiguous and chunked, sizes 0, 1, 2,
# 31 and the primes 1009 and 100003, a 3-D one, a gzip-compressed one, one
# stored big-endian), reduce and scan (inclusive and exclusive) on 1 to 4
# ranks, the outputs read back with h5py and judged against NumPy by
# tests/h5_check.py (numpy_check.py's references and bounds); writing into an
# existing file (its other datasets kept); every bad input of the issue,
# which must fail on every rank with one clear message and write nothing;
# a killed run that leaves the existing file as it was.
# A build without HDF5 checks only that -i x.h5 says so.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
data=$gs_tmp/data
outs=$gs_tmp/out
mkdir "$data" "$outs"

if [ "${GS_HDF5:-no}" != yes ]; then
    printf 'not really HDF5' >"$data/x.h5"
    expect_fail "a build without HDF5: -i x.h5 says so" 1 1 'x\.h5' 'no HDF5 support' 'with-hdf5' \
        -- reduce -i "$data/x.h5" --backend "$be"
    expect_fail "a build without HDF5: -O y.h5 says so" 1 1 'y\.h5' 'no HDF5 support' \
        -- scan -g 10 -O "$outs/y.h5" --backend "$be"
    expect_empty_dir "a build without HDF5: nothing written" "$outs"
    gs_summary
fi

py=$(gs_find_python h5py) || gs_skip_all "no Python 3 with h5py (Debian: apt-get install python3-h5py)"
checker=$(dirname "$0")/h5_check.py
seed=${GS_TEST_SEED:-$(date +%s)}
echo "h5py data with GS_TEST_SEED=$seed ($py)"
manifest=$gs_tmp/manifest
if ! "$py" "$checker" gen "$data" "$seed"; then
    gs_fail "h5_check.py gen made the input files"
    gs_summary
fi

k=0   # outputs are numbered

# temp_in DIR NAME: a temporary of output NAME (.NAME.gstmp.*) lies in DIR.
temp_in() {
    for temp_f in "$1/.$2".gstmp.*; do
        [ -e "$temp_f" ] && return 0
    done
    return 1
}

# do_scan NP FILE:/DATASET OP inclusive|exclusive [ARGS...]: run the scan
# into a new HDF5 file and queue its check.
do_scan() {
    np=$1 x=$data/$2 op=$3 kind=$4
    shift 4
    k=$((k + 1))
    y=$outs/scan$k.h5:/result
    set -- -i "$x" -O "$y" -o "$op" --backend "$be" "$@"
    [ "$kind" = inclusive ] || set -- "$@" --exclusive
    if expect_ok "scan -i $(basename "$x") -o $op ($kind) on $np rank(s)" "$np" scan "$@"; then
        printf 'scan\t%s\t%s\t%s\t%s\t%s\t-\n' "$x" "$y" "$op" "$kind" "$np" >>"$manifest"
    fi
}

# do_reduce NP FILE:/DATASET OP [ARGS...]: run reduce --json - and queue its check.
do_reduce() {
    np=$1 x=$data/$2 op=$3
    shift 3
    k=$((k + 1))
    if expect_ok "reduce -i $(basename "$x") -o $op on $np rank(s)" "$np" reduce -i "$x" -o "$op" \
        --backend "$be" --json - "$@"; then
        cp "$gs_tmp/stdout" "$outs/reduce$k.json"
        printf 'reduce\t%s\t%s\t%s\t-\t%s\t-\n' "$x" "$outs/reduce$k.json" "$op" "$np" >>"$manifest"
    fi
}

# Judge what is queued (gs_test.sh).
flush_checks() { gs_flush_checks "$py" "$checker" "$manifest" "$outs"; }

for t in i32 i64 u32 u64 f32 f64; do
    f=x_$t.h5
    for n in 0 1 31 100003; do
        do_scan 3 "$f:/contig/n$n" sum inclusive
    done
    do_scan 2 "$f:/chunked/n1009" sum exclusive --chunk 100
    do_scan 4 "$f:/chunked/n2" sum inclusive
    do_scan 3 "$f:/chunked/n1009" min inclusive
    do_scan 4 "$f:/contig/n100003" max exclusive --stream --chunk 4999
    do_scan 1 "$f:/more/p31" prod inclusive
    do_scan 3 "$f:/more/p31" prod exclusive
    do_scan 4 "$f:/nd" sum inclusive --chunk 97          # rows split across chunks and ranks
    do_scan 3 "$f:/gz" sum exclusive --chunk 1234        # compressed
    do_scan 2 "$f:/be" max inclusive                     # big-endian on disk

    do_reduce 1 "$f:/contig/n100003" sum
    do_reduce 2 "$f:/chunked/n1009" sum
    do_reduce 3 "$f:/nd" sum --chunk 50
    do_reduce 4 "$f:/gz" sum
    do_reduce 4 "$f:/contig/n0" sum
    do_reduce 2 "$f:/more/p31" prod
    do_reduce 3 "$f:/more/e1000" min
    do_reduce 4 "$f:/more/e1000" max
    do_reduce 1 "$f:/chunked/n1" max
    flush_checks
done

# ---- names: the only dataset, groups on the output path, the default /data -----------
do_reduce 2 one.h5 sum                                   # a file of one dataset
flush_checks
expect_fail "-i a file of several datasets without :/DATASET" 2 1 'x_f32\.h5' 'datasets' 'name one' \
    -- reduce -i "$data/x_f32.h5" --backend "$be"
expect_fail "-t other than the dataset's type" 2 1 'x_f32\.h5' 'i32' 'f32' \
    -- reduce -i "$data/x_f32.h5:/nd" -t i32 --backend "$be"
if expect_ok "scan -O new.h5 (no dataset named)" 2 scan -i "$data/x_i32.h5:/contig/n31" -O "$outs/new.h5" \
    --backend "$be"; then
    gs_check "scan -O new.h5: the scan is /data" "$py" -c 'import h5py, sys
f = h5py.File(sys.argv[1], "r")
assert list(f) == ["data"] and f["data"].shape == (31,) and f["data"].dtype == "<i8", list(f)' "$outs/new.h5"
fi
rm -f "$outs"/*

# ---- the bench's read bandwidth of the same data as .npy and as HDF5 -------------------
if expect_ok "bench --read same.npy --read same.h5:/x" 2 bench -b 1k --reduce -n 2 -w 0 -c 0 --backend "$be" \
    --read "$data/same.npy" --read "$data/same.h5:/x"; then
    for f in same.npy same.h5:/x; do
        gs_check "bench --read $f: a row of its 400012 bytes" \
            grep -Eq "^# read .*/$f: 400012 bytes, [0-9.]+ s .*GB/s per rank$" "$gs_tmp/stdout"
    done
fi
expect_fail "bench --read a bad dataset" 2 1 'same\.h5' 'no dataset /nope' \
    -- bench -b 1k --reduce -n 1 -w 0 -c 0 --backend "$be" --read "$data/same.h5:/nope"

# ---- writing into an existing file ----------------------------------------------------
cp "$data/x_f64.h5" "$outs/mine.h5"
chmod 640 "$outs/mine.h5"
if expect_ok "scan into an existing file, new groups /g1/g2" 3 \
    scan -i "$data/x_f64.h5:/contig/n1009" -O "$outs/mine.h5:/g1/g2/prefix" --backend "$be"; then
    gs_check "scan into an existing file: its datasets kept" "$py" "$checker" holds "$outs/mine.h5" "$data/x_f64.h5"
    printf 'scan\t%s\t%s\tsum\tinclusive\t3\t-\n' "$data/x_f64.h5:/contig/n1009" "$outs/mine.h5:/g1/g2/prefix" >"$manifest"
    "$py" "$checker" check "$manifest" >"$gs_tmp/checked" 2>&1
    gs_check "scan into an existing file: the new dataset = NumPy" grep -q '^PASS:' "$gs_tmp/checked"
    expect_same "scan into an existing file: its mode kept" "$(stat -c %a "$outs/mine.h5")" 640
fi
if expect_ok "scan over a dataset of the same shape and type" 2 \
    scan -i "$data/x_f64.h5:/contig/n1009" -O "$outs/mine.h5:/g1/g2/prefix" -o max --backend "$be"; then
    printf 'scan\t%s\t%s\tmax\tinclusive\t2\t-\n' "$data/x_f64.h5:/contig/n1009" "$outs/mine.h5:/g1/g2/prefix" >"$manifest"
    "$py" "$checker" check "$manifest" >"$gs_tmp/checked" 2>&1
    gs_check "scan over a dataset of the same shape and type: overwritten" grep -q '^PASS:' "$gs_tmp/checked"
fi
rm -f "$manifest"
sum_before=$(cksum <"$outs/mine.h5")
expect_fail "-O a dataset that exists with another shape" 3 1 'mine\.h5' '/contig/n31' 'exists' 'shape' \
    -- scan -i "$data/x_f64.h5:/contig/n1009" -O "$outs/mine.h5:/contig/n31" --backend "$be"
expect_fail "-O a dataset that exists with another type" 2 1 'mine\.h5' 'f64' 'i64' \
    -- scan -i "$data/x_i32.h5:/contig/n31" -O "$outs/mine.h5:/contig/n31" --backend "$be"
expect_fail "-O a path through a dataset" 2 1 'mine\.h5' '/nd' 'not a group' \
    -- scan -i "$data/x_f64.h5:/contig/n31" -O "$outs/mine.h5:/nd/x" --backend "$be"
expect_fail "--json the file of the input dataset" 2 2 'mine\.h5' 'same file as the input' \
    -- reduce -i "$outs/mine.h5:/g1/g2/prefix" --json "$outs/mine.h5" --backend "$be"
expect_fail "--json the file of the output dataset" 2 2 'mine\.h5' 'same file as the output' \
    -- scan -i "$data/x_f64.h5:/contig/n1009" -O "$outs/mine.h5:/g1/g2/prefix" --json "$outs/mine.h5" \
    --backend "$be"
expect_same "refused outputs: the existing file untouched" "$(cksum <"$outs/mine.h5")" "$sum_before"
expect_same "refused outputs: no temporary left" "$(ls -A "$outs")" mine.h5
rm -f "$outs/mine.h5"

# the output may not be the input dataset, however it is spelled; another
# dataset of the input's file is fine (the file is written as a copy)
if expect_ok "a file of one dataset" 1 scan -g 10 -t i32 -O "$outs/self.h5:/a" --backend "$be" -q; then
    sum_before=$(cksum <"$outs/self.h5")
    for np in 1 2; do
        expect_fail "-O the input dataset as ./self.h5://./a/ [$np rank(s)]" "$np" 1 'self\.h5' 'overwrite the input' \
            -- scan -i "$outs/self.h5:/a" -O "$outs/./self.h5://./a/" --backend "$be"
        expect_fail "-O the dataset of an input named without it [$np rank(s)]" "$np" 1 'self\.h5' \
            'overwrite the input' -- scan -i "$outs/self.h5" -O "$outs/self.h5:/a" --backend "$be"
    done
    expect_same "-O the input dataset: the file untouched" "$(cksum <"$outs/self.h5")" "$sum_before"
    expect_same "-O the input dataset: no temporary left" "$(ls -A "$outs")" self.h5
    expect_ok "-O another dataset of the input's file" 2 \
        scan -i "$outs/self.h5:/a" -O "$outs/self.h5:/b" --backend "$be" -q &&
        expect_fail "the file then holds both datasets" 1 1 'self\.h5' '/a, /b' -- reduce -i "$outs/self.h5" --backend "$be"
fi
rm -f "$outs/self.h5"

# ---- bad inputs: one clear message on every rank count, nothing written -----------------
head -c 3000 "$data/x_i32.h5" >"$data/truncated.h5"
printf 'this is not HDF5 at all' >"$data/text.h5"
for np in 1 3; do
    for what in "compound:compound" "strings:string" "half:2-byte floats" "bytes:1-byte integers" \
        "group:not a dataset"; do
        ds=${what%%:*} why=${what#*:}
        expect_fail "-i bad.h5:/$ds on $np rank(s)" "$np" 1 'bad\.h5' "/$ds" "$why" \
            -- scan -i "$data/bad.h5:/$ds" -O "$outs/y.h5" --backend "$be"
    done
    expect_fail "-i a missing dataset on $np rank(s)" "$np" 1 'bad\.h5' 'no dataset /nope' \
        -- scan -i "$data/bad.h5:/nope" -O "$outs/y.h5" --backend "$be"
    expect_fail "-i a dataset in a missing group on $np rank(s)" "$np" 1 'bad\.h5' 'no group /no' \
        -- scan -i "$data/bad.h5:/no/such" -O "$outs/y.h5" --backend "$be"
    expect_fail "-i a file that is not HDF5 on $np rank(s)" "$np" 1 'text\.h5' 'not an HDF5|signature' \
        -- scan -i "$data/text.h5" -O "$outs/y.h5" --backend "$be"
    expect_fail "-i a truncated HDF5 file on $np rank(s)" "$np" 1 'truncated\.h5' 'truncated' \
        -- reduce -i "$data/truncated.h5:/contig/n31" --backend "$be"
    expect_fail "-i a missing file on $np rank(s)" "$np" 1 'missing\.h5' 'no such file' \
        -- reduce -i "$data/missing.h5:/x" --backend "$be"
    expect_fail "-O into a truncated HDF5 file on $np rank(s)" "$np" 1 'truncated\.h5' 'truncated' \
        -- scan -i "$data/bad.h5:/x" -O "$data/truncated.h5:/y" --backend "$be"
done
expect_empty_dir "bad inputs: nothing written" "$outs"
if temp_in "$data" truncated.h5; then
    gs_fail "bad inputs: no temporary beside the truncated file" "$(ls -A "$data")"
else
    gs_pass "bad inputs: no temporary beside the truncated file"
fi

# ---- a killed run leaves the existing file as it was ---------------------------------------
cp "$data/x_f32.h5" "$outs/big.h5"
sum_before=$(cksum <"$outs/big.h5")
set -m
"$GS_BIN" scan -g 100Mi -t f64 --backend cpu --stream -q -O "$outs/big.h5:/huge" \
    >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null &
pid=$!
i=0
while [ "$i" -lt 200 ] && ! temp_in "$outs" big.h5 && kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
if temp_in "$outs" big.h5 && kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null
    expect_same "SIGKILL during a scan into an existing file: the file untouched" "$(cksum <"$outs/big.h5")" "$sum_before"
    if expect_ok "the next run into the same file" 1 scan -g 1k -O "$outs/big.h5:/small" --backend "$be" -q; then
        expect_same "the next run removed the dead run's temporary" "$(ls -A "$outs")" big.h5
        gs_check "the next run kept the file's datasets" "$py" "$checker" holds "$outs/big.h5" "$data/x_f32.h5"
    fi
else
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
    gs_skip "SIGKILL during a scan into an existing file: the run ended before it could be killed"
fi
set +m
rm -rf "${outs:?}"/* "${outs:?}"/.[!.]* 2>/dev/null

gs_summary
