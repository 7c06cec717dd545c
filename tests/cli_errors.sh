#!/bin/sh
# cli_errors.sh - every bad input of the CLI contract, on 1 and 3 ranks: a
# non-zero exit (2 for usage errors, 1 for runtime failures) within the
# timeout, one "gpuscan: error:" line naming the file or value and the
# problem, and nothing left in the output folder, not even a temporary file.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
in=$gs_tmp/in
out=$gs_tmp/out
mkdir "$in" "$out"

# Permissions bind every user but root: as root, the permission tests run
# as user nobody, where setpriv can make the runs so and nobody can reach
# the build and the backend (a probe run says), else they are skipped.
# perm_mpirun is the launcher of those runs (empty: skip them); as_bound_user
# CMD... runs CMD with it.
gs_launcher=$GS_MPIRUN
perm_mpirun=
if [ "$(id -u)" -ne 0 ]; then
    perm_mpirun=$GS_MPIRUN
elif command -v setpriv >/dev/null 2>&1; then
    chmod 711 "$gs_tmp"
    printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups "%s" "$@"\n' "$GS_MPIRUN" \
        >"$gs_tmp/nobody_mpirun"
    chmod 755 "$gs_tmp/nobody_mpirun"
    GS_MPIRUN=$gs_tmp/nobody_mpirun
    run_np 1 reduce -g 10 --backend "$be" && perm_mpirun=$gs_tmp/nobody_mpirun &&
        echo "note: as root, the permission tests run as user nobody (setpriv)"
    GS_MPIRUN=$gs_launcher
fi
as_bound_user() {
    GS_MPIRUN=$perm_mpirun
    "$@"
    GS_MPIRUN=$gs_launcher
}
no_bound_user="root reads and writes any file, and setpriv cannot run gpuscan as nobody here"

# bad DESC RC PATTERN... -- ARGS...: fails as expect_fail says on 1 and 3
# ranks, and the output folder stays empty.
bad() {
    bad_desc=$1
    shift
    for bad_np in 1 3; do
        expect_fail "$bad_desc [$bad_np rank(s)]" "$bad_np" "$@"
        expect_empty_dir "$bad_desc [$bad_np rank(s)]: nothing in the output folder" "$out"
    done
}

# bad_cmd CMD DESC RC PATTERN... -- ARGS...: bad, with CMD before ARGS (and
# for scan an output file after them).
bad_cmd() {
    bad_cmd_word=$1 bad_cmd_desc=$2
    shift 2
    bad_cmd_done=
    for bad_cmd_arg do   # rotate the arguments, putting CMD after the first --
        shift
        set -- "$@" "$bad_cmd_arg"
        if [ -z "$bad_cmd_done" ] && [ "$bad_cmd_arg" = -- ]; then
            bad_cmd_done=1
            set -- "$@" "$bad_cmd_word"
        fi
    done
    [ "$bad_cmd_word" != scan ] || set -- "$@" -O "$out/y.npy"
    bad "$bad_cmd_word: $bad_cmd_desc" "$@" --backend "$be"
}

# bad_input DESC RC PATTERN... -- INPUT-ARGS...: a bad input fails reduce and
# scan alike, and scan writes no output.
bad_input() {
    bad_cmd reduce "$@"
    bad_cmd scan "$@"
}

# ---- files: missing, unreadable, not what they claim ------------------------------
bad_input "missing file" 1 'missing\.npy' -- -i "$in/missing.npy"
mkdir "$in/folder.npy"
bad_input "a folder as input" 1 'folder\.npy' -- -i "$in/folder.npy"

printf 'secret' >"$in/secret.npy"
chmod 000 "$in/secret.npy"
if [ -n "$perm_mpirun" ]; then
    chmod 777 "$out"   # (the scan's output folder is no reason to fail)
    as_bound_user bad_input "unreadable file" 1 'secret\.npy' -- -i "$in/secret.npy"
    chmod 755 "$out"
else
    gs_skip "unreadable file: $no_bound_user"
fi
chmod 600 "$in/secret.npy"

head -c 10 /dev/zero >"$in/odd.bin"
bad_input "raw file of 10 bytes as i32" 1 'odd\.bin' 'size|multiple|bytes' -- -i "$in/odd.bin" -t i32
head -c 12 /dev/zero >"$in/twelve.bin"
bad_input "raw file of 12 bytes as f64" 1 'twelve\.bin' 'size|multiple|bytes' -- -i "$in/twelve.bin" -t f64
head -c 16 /dev/zero >"$in/data.bin"
bad_input "raw file without -t" nz 'data\.bin|-t' '-t|type' -- -i "$in/data.bin"

# ---- .npy headers -------------------------------------------------------------------
: >"$in/empty.npy"
bad_input "empty .npy file" 1 'empty\.npy' -- -i "$in/empty.npy"
printf 'this is not numpy data\n' >"$in/text.npy"
bad_input "text file named .npy" 1 'text\.npy' 'not a \.npy' -- -i "$in/text.npy"
mk_npy "$in/brace.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (3,)" 12
bad_input "malformed header (no closing brace)" 1 'brace\.npy' 'malformed' -- -i "$in/brace.npy"
mk_npy "$in/keys.npy" "{'descr': '<i4', 'shape': (3,), }" 12
bad_input "header without fortran_order" 1 'keys\.npy' 'fortran_order' -- -i "$in/keys.npy"
mk_npy "$in/shape5.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (-5,), }" 12
bad_input "negative dimension" 1 'shape5\.npy' 'negative' -- -i "$in/shape5.npy"
mk_npy "$in/cut.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" 0
head -c 40 "$in/cut.npy" >"$in/cut2.npy"
bad_input "header cut short" 1 'cut2\.npy' 'truncated' -- -i "$in/cut2.npy"
mk_npy "$in/v9.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" 12 9
bad_input "format version 9.0" 1 'v9\.npy' 'version' -- -i "$in/v9.npy"
mk_npy "$in/be.npy" "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }" 12
bad_input "big-endian .npy" 1 'be\.npy' 'big-endian' -- -i "$in/be.npy"
mk_npy "$in/cplx.npy" "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }" 24
bad_input "complex .npy" 1 'cplx\.npy' 'complex' -- -i "$in/cplx.npy"
mk_npy "$in/str.npy" "{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }" 36
bad_input "string .npy" 1 'str\.npy' 'string' -- -i "$in/str.npy"
mk_npy "$in/bytes.npy" "{'descr': '|S4', 'fortran_order': False, 'shape': (3,), }" 12
bad_input "bytes .npy" 1 'bytes\.npy' 'string' -- -i "$in/bytes.npy"
mk_npy "$in/obj.npy" "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }" 24
bad_input "object .npy" 1 'obj\.npy' 'object' -- -i "$in/obj.npy"
mk_npy "$in/i16.npy" "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }" 6
bad_input "int16 .npy" 1 'i16\.npy' "'<i2'" -- -i "$in/i16.npy"
mk_npy "$in/rec.npy" "{'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, 'shape': (3,), }" 36
bad_input "structured .npy" 1 'rec\.npy' 'structured' -- -i "$in/rec.npy"
mk_npy "$in/fort.npy" "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }" 48
bad_input "Fortran-ordered 2-D .npy" 1 'fort\.npy' 'fortran' -- -i "$in/fort.npy"

# the shape must match the file size exactly: data cut short, or extra bytes
mk_npy "$in/short.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (10,), }" 36
bad_input "data shorter than the shape" 1 'short\.npy' 'size|shape|bytes|truncated' -- \
    -i "$in/short.npy"
mk_npy "$in/long.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (10,), }" 44
bad_input "data longer than the shape" 1 'long\.npy' 'size|shape|bytes' -- -i "$in/long.npy"
mk_npy "$in/huge.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }" 8
bad_input "shape of 8 TB in an 8-byte file" 1 'huge\.npy' 'size|shape|bytes|truncated' -- \
    -i "$in/huge.npy"

# ---- usage ----------------------------------------------------------------------------
bad "no command" 2 'command' 'reduce, scan, info, bench, ladder, help, version' --
bad "unknown command" 2 'frobble' 'reduce, scan, info, bench, ladder, help, version' -- frobble -g 10
bad "help with an argument" 2 'help' 'no arguments' -- help reduce
bad "unknown option" 2 'frobnicate' -- reduce -g 10 --frobnicate
bad "option without its value" 2 '-t' -- reduce -g 10 -t
bad "no input" 2 '-i|-g|input' -- reduce -o sum
bad "both -i and -g" 2 '-i|-g|input' -- reduce -g 10 -i "$in/data.bin" -t i32
bad "unknown type -t i16" 2 'i16' -- reduce -g 10 -t i16
bad "unknown type -t float" 2 'float' -- reduce -g 10 -t float
bad "unknown op -o avg" 2 'avg' -- reduce -g 10 -o avg
bad "unknown backend" 2 'tpu' -- reduce -g 10 --backend tpu
bad "bad size suffix -g 12Q" 2 '12Q' -- reduce -g 12Q
bad "negative size -g -5" 2 '-5' -- reduce -g -5
bad "size with no digits -g k" 2 '-g k' -- reduce -g k
bad "size beyond 2^63 -g 10000000000000000000" 2 '10000000000000000000' -- \
    reduce -g 10000000000000000000
bad "size beyond 2^63 -g 9000000Ti" 2 '9000000Ti' -- reduce -g 9000000Ti
bad "fractional size -g 1.5k" 2 '1\.5k' -- reduce -g 1.5k
bad "a blank before the size -g ' 5'" 2 '-g  5' -- reduce -g ' 5'
bad "a size whose bytes overflow -g 2^63/8 -t f64" 1 '9200000000000000000' 'beyond .* bytes' -- \
    reduce -g 9200000000000000000 -t f64 --backend "$be"
bad "two inputs -g -g" 2 '-g 6' 'second input' -- reduce -g 5 -g 6
bad "two inputs -i -i" 2 'second input' -- reduce -i "$in/data.bin" -i "$in/data.bin" -t i32
bad "two outputs -O -O" 2 'z\.npy' 'second output' -- scan -g 5 -O "$out/y.npy" -O "$out/z.npy"
bad "-O a folder's name" 2 'folder' -- scan -g 5 -O "$out/"
bad "bad seed" 2 'xyz' -- reduce -g 10 --seed xyz
bad "seed 0x alone" 2 '--seed 0x' -- reduce -g 10 --seed 0x
bad "seed 0x-1" 2 '0x-1' -- reduce -g 10 --seed 0x-1
bad "seed 1e3" 2 '1e3' -- reduce -g 10 --seed 1e3
bad "seed past 2^64" 2 '18446744073709551616' -- reduce -g 10 --seed 18446744073709551616
bad "scan without -O" 2 '-O|output' -- scan -g 10
bad "unknown kernel variant" 2 'warp-magic' -- reduce -g 10 --algo warp-magic
bad "a scan variant for a reduction" 2 'blelloch' -- reduce -g 10 --algo blelloch

# options that do not apply to the command: a usage error naming the option,
# the command and the commands it is for, never silently ignored
bad "reduce --exclusive" 2 '--exclusive does not apply to reduce' 'for scan' -- reduce -g 10 --exclusive
bad "reduce -O" 2 '-O/--output does not apply to reduce' 'for scan' -- reduce -g 10 -O "$out/y.npy"
bad "info --json" 2 '--json does not apply to info' 'for reduce and scan' -- info --json "$out/i.json"
bad "info -g" 2 '-g/--generate does not apply to info' -- info -g 5
bad "info -i" 2 '-i/--input does not apply to info' -- info -i "$in/missing.npy"
bad "info --verify" 2 '--verify does not apply to info' -- info --verify
bad "info -q" 2 '-q/--quiet does not apply to info' -- info -q
bad "info --seed" 2 '--seed does not apply to info' -- info --seed 3
bad "a bench option for reduce" 2 'minsize' -- reduce -g 10 --minsize 5
bad "bench --exclusive with --reduce alone" 2 'exclusive' 'scan' -- bench --reduce --exclusive
bad "unknown NumPy type -t float16" 2 'float16' -- reduce -g 10 -t float16
bad "big-endian NumPy type -t >f4" 2 '>f4' -- reduce -g 10 -t '>f4'
bad "a reduction variant for a scan" 2 'divergent' -- scan -g 10 --algo divergent -O "$out/y.npy"
bad "--algo for info" 2 'algo' -- info --algo cub
bad "a kernel variant on the CPU backend" 1 'cub.*cpu' -- reduce -g 10 --algo cub --backend cpu

# ---- outputs --------------------------------------------------------------------------
mk_npy "$in/good.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" 12
bad "unwritable output folder" 1 'nonexistent-dir' -- \
    scan -i "$in/good.npy" -O /nonexistent-dir/x.npy --backend "$be"
bad "output path is a folder" 1 "$(basename "$out")" -- \
    scan -i "$in/good.npy" -O "$out" --backend "$be"
if [ -n "$perm_mpirun" ]; then
    chmod 555 "$out"
    as_bound_user bad "read-only output folder" 1 'y\.npy' -- scan -i "$in/good.npy" -O "$out/y.npy" --backend "$be"
    chmod 755 "$out"
else
    gs_skip "read-only output folder: $no_bound_user"
fi
bad "JSON report to an unwritable folder" 1 'nonexistent-dir' -- \
    reduce -i "$in/good.npy" --json /nonexistent-dir/r.json --backend "$be"
bad "ladder's JSON report to an unwritable folder, found before it runs" 1 'nonexistent-dir' -- \
    ladder --json /nonexistent-dir/l.json

# the output may not overwrite the input, however the path is spelled
same=$gs_tmp/same
mkdir "$same"
mk_npy "$same/x.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" 12
cp "$same/x.npy" "$gs_tmp/x.orig"
# shellcheck disable=SC2317  # called through gs_check
input_untouched() {
    cmp "$same/x.npy" "$gs_tmp/x.orig" && [ "$(ls -A "$same")" = x.npy ]
}
for spelling in "$same/x.npy" "$same/./x.npy" "$same/../same/x.npy"; do
    for np in 1 3; do
        expect_fail "output path = input path ($spelling) [$np rank(s)]" "$np" nz 'x\.npy' -- \
            scan -i "$same/x.npy" -O "$spelling" --backend "$be"
        gs_check "output = input ($spelling): input untouched, nothing added [$np rank(s)]" \
            input_untouched
    done
done
# through a symbolic link: an error, or at least the input is left intact
ln -s x.npy "$same/link.npy"
run_np 3 scan -i "$same/x.npy" -O "$same/link.npy" --backend "$be"
gs_check "output is a symbolic link to the input: input untouched" cmp -s "$same/x.npy" "$gs_tmp/x.orig"

# a run that could not write its report replaces no output: the report's
# place is checked before the run
echo precious >"$same/kept.npy"
for np in 1 3; do
    expect_fail "--json into a missing folder, with a scan [$np rank(s)]" "$np" 1 'nonexistent-dir' -- \
        scan -g 10 -O "$same/kept.npy" --json /nonexistent-dir/r.json --backend "$be"
    expect_same "--json into a missing folder: the old output kept [$np rank(s)]" "$(cat "$same/kept.npy")" precious
done
if [ -n "$perm_mpirun" ]; then
    # a file it may not write, in a folder it may: not replaced through the folder
    chmod 444 "$same/kept.npy"
    chmod 777 "$same"
    as_bound_user expect_fail "scan -O a file it may not write" 2 1 'kept\.npy' 'permission denied' -- \
        scan -g 10 -O "$same/kept.npy" --backend "$be"
    expect_same "scan -O a file it may not write: left as it was" "$(cat "$same/kept.npy")" precious
    chmod 755 "$same"
    chmod 644 "$same/kept.npy"
else
    gs_skip "outputs it may not write: $no_bound_user"
fi
rm -f "$same/kept.npy"
# an input named as a temporary of the output is read, never removed as one
cp "$same/x.npy" "$same/.y.npy.gstmp.12ab.34cd"
if expect_ok "an input named like the output's temporary" 2 \
    scan -i "$same/.y.npy.gstmp.12ab.34cd" -O "$same/y.npy" --backend "$be" -q; then
    gs_check "an input named like the output's temporary: still there" \
        cmp "$same/.y.npy.gstmp.12ab.34cd" "$gs_tmp/x.orig"
fi
rm -f "$same/.y.npy.gstmp.12ab.34cd" "$same/y.npy"

# ranks that see different files at one path (node-local folders), or where
# only one rank's check fails: every rank stops with one message, none hangs
mkdir "$same/a" "$same/b"
cp "$same/x.npy" "$same/a/in.npy"
mk_npy "$same/b/in.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" 12
ln -s in.npy "$same/b/r.json"
# mpmd DESC RC PATTERN -- ARGS-A -- ARGS-B: rank 0 runs ARGS-A in folder a, rank 1 ARGS-B in b
mpmd() {
    mpmd_desc=$1 mpmd_rc=$2 mpmd_pattern=$3
    shift 4
    mpmd_a=
    while [ "$1" != -- ]; do mpmd_a="$mpmd_a $1"; shift; done
    shift
    # shellcheck disable=SC2086  # ARGS-A are words without blanks
    timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_MPIRUN" 1 --wdir "$same/a" "$GS_BIN" $mpmd_a --backend "$be" \
        : -np 1 --wdir "$same/b" "$GS_BIN" "$@" --backend "$be" >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null
    gs_rc=$?
    if gs_timed_out; then
        gs_fail "$mpmd_desc" "timed out (a hang?)"
    elif [ "$gs_rc" -ne "$mpmd_rc" ] || ! grep 'gpuscan: error:' "$gs_tmp/stderr" | grep -Eq "$mpmd_pattern"; then
        gs_fail "$mpmd_desc" "exit $gs_rc, expected $mpmd_rc and an error matching /$mpmd_pattern/"
        gs_stderr_tail
    else
        gs_pass "$mpmd_desc"
    fi
}
mpmd "--json the input on rank 1 only" 2 'rank 1: --json r\.json: the same file as the input' \
    -- reduce -i in.npy --json r.json -- reduce -i in.npy --json r.json
mpmd "ranks reading different files at one path" 1 'in\.npy: the ranks do not read the same file' \
    -- reduce -i in.npy -- reduce -i in.npy
expect_same "ranks that disagreed: rank 1's input kept" "$(readlink "$same/b/r.json")" in.npy

# ---- values ---------------------------------------------------------------------------
bad "min of nothing (-g 0)" 1 'empty|no elements|zero elements' -- reduce -g 0 -o min --backend "$be"
bad "max of nothing (-g 0)" 1 'empty|no elements|zero elements' -- reduce -g 0 -o max --backend "$be"
mk_npy "$in/none.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }" 0
bad "min of an empty .npy" 1 'empty|no elements|zero elements' -- \
    reduce -i "$in/none.npy" -o min --backend "$be"

# a 64-bit integer sum that overflows is an error, never a wrapped number
printf '\377\377\377\377\377\377\377\177\001\000\000\000\000\000\000\000' >"$in/ovf.bin"
bad_input "i64 sum overflow" 1 'overflow' -- -i "$in/ovf.bin" -t i64
printf '\377\377\377\377\377\377\377\377\001\000\000\000\000\000\000\000' >"$in/uovf.bin"
bad_input "u64 sum overflow" 1 'overflow' -- -i "$in/uovf.bin" -t u64
printf '\000\000\000\000\000\000\000\200\377\377\377\377\377\377\377\377' >"$in/novf.bin"
bad_input "i64 sum below -2^63" 1 'overflow' -- -i "$in/novf.bin" -t i64
# INT64_MAX + 1 - 1: the total fits (reduce is exact), a prefix does not
printf '\377\377\377\377\377\377\377\177\001\000\000\000\000\000\000\000\377\377\377\377\377\377\377\377' \
    >"$in/mid.bin"
for np in 1 3; do
    if expect_ok "i64 sum whose prefix overflows: reduce is exact [$np rank(s)]" "$np" \
        reduce -i "$in/mid.bin" -t i64 --backend "$be" --json -; then
        expect_same "reduce of INT64_MAX + 1 - 1 [$np rank(s)]" \
            "$(json_get "$gs_tmp/stdout" result)" 9223372036854775807
    fi
done
bad "i64 prefix sum overflow in a scan" 1 'overflow' -- \
    scan -i "$in/mid.bin" -t i64 -O "$out/y.bin" --backend "$be"

gs_summary
