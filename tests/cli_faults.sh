#!/bin/sh
# cli_faults.sh - the faults of issue "Hardening: no crash, no hang, no lost or
# clobbered file": sizes that overflow, an empty shard under --verify, inputs
# and outputs that are not regular files, a replaced output's mode, reports
# that would replace the data, empty or blank option values, and runs killed
# by SIGINT, SIGTERM and SIGKILL. Each run must end in time with the exit
# status of the contract and leave nothing behind but what it documents.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
in=$gs_tmp/in
out=$gs_tmp/out
mkdir "$in" "$out"

# ---- sizes whose byte counts overflow 64 bits ---------------------------------------
# 4611686018435776512 i32 elements are 2^64 + 2^25 bytes: a size_t product
# wraps to 32 MiB, a buffer far too small for the shard.
expect_fail "reduce --resident of 2^62+2^23 i32 elements: refused" 1 1 'host memory|too large|beyond|bytes' \
    -- reduce -g 4611686018435776512 -t i32 --resident --backend "$be"
expect_fail "scan of 2^62 f32 elements: refused" 1 1 'y\.npy|bytes|too large|beyond' \
    -- scan -g 4611686018427387904 -t f32 -O "$out/y.npy" --backend "$be"
expect_empty_dir "scan of 2^62 f32 elements: nothing written" "$out"
# Near 2^61 elements of 8 bytes (2^64 bytes) and 2^62 of 4, resident and
# streamed, .npy and raw: refused before anything is allocated or written.
for g in 2305843009213693951 2305843009213693952 4611686018427387904; do
    expect_fail "reduce --resident of $g f64 elements: refused" 1 1 'memory|too large|beyond|bytes' \
        -- reduce -g "$g" -t f64 --resident --backend "$be"
    expect_fail "scan --stream of $g u64 elements to raw: refused" 1 1 'y\.bin' 'bytes|too large|beyond' \
        -- scan -g "$g" -t u64 --stream -O "$out/y.bin" --backend "$be"
    expect_fail "scan --resident of $g i32 elements to .npy on 2 ranks: refused" 2 1 'y\.npy|memory' 'bytes|too large|beyond' \
        -- scan -g "$g" -t i32 --resident -O "$out/y.npy" --backend "$be"
done
# past int64: a usage error
for g in 9223372036854775808 18446744073709551615 18446744073709551616; do
    expect_fail "-g $g: usage error" 0 2 'generate|-g' -- reduce -g "$g" --backend "$be"
done
expect_empty_dir "sizes near 2^64 bytes: nothing written" "$out"

# ---- --verify with ranks that hold no element ----------------------------------------
if [ -n "$gs_python" ] && [ -n "$(gs_find_python numpy)" ]; then
    "$(gs_find_python numpy)" -c 'import numpy as np, sys
np.save(sys.argv[1], np.arange(1, 2, dtype=np.float32))
np.save(sys.argv[2], np.arange(1, 3, dtype=np.int64))' "$in/one.npy" "$in/two.npy"
else
    # NumPy's layout by hand: 1.0f and the int64s 1, 2
    mk_npy "$in/one.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" 0
    printf '\000\000\200\077' >>"$in/one.npy"
    mk_npy "$in/two.npy" "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }" 0
    gs_octal 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0 >>"$in/two.npy"
fi
# verified DESC NP ARGS...: exits 0 in time and reports "#wrong 0".
verified() {
    verified_desc=$1
    shift
    if expect_ok "$verified_desc" "$@"; then
        gs_check "$verified_desc: #wrong 0" grep -Eq '^#wrong +0$' "$gs_tmp/stdout"
    fi
}
verified "scan --verify, 1 element on 2 ranks" 2 scan -i "$in/one.npy" -O "$out/y.npy" --verify --backend "$be"
verified "scan --verify --resident, 1 element on 2 ranks" 2 \
    scan -i "$in/one.npy" -O "$out/y.npy" --verify --resident --backend "$be"
verified "reduce --verify --resident, 2 elements on 3 ranks" 3 \
    reduce -i "$in/two.npy" --verify --resident --backend "$be"
rm -f "$out/y.npy"

# ---- inputs that are not regular files -------------------------------------------------
mkfifo "$in/fifo"
for cmd in reduce scan; do
    set -- "$cmd"
    [ "$cmd" = reduce ] || set -- "$@" -O "$out/y.bin"
    expect_fail "$cmd: a FIFO as input" 1 1 'fifo' 'not a regular file' -- "$@" -i "$in/fifo" -t i32 --backend "$be"
    expect_fail "$cmd: /dev/zero as input" 1 1 '/dev/zero' 'not a regular file' -- "$@" -i /dev/zero -t i32 --backend "$be"
done
expect_empty_dir "inputs that are not regular files: nothing written" "$out"

# ---- outputs that are not regular files, and a replaced output's mode ---------------------
head -c 40 /dev/zero >"$in/ten.bin"
# Everything here lies in $out; no output of these runs names a device.
mkfifo "$out/fifo.npy"
expect_fail "-O an existing FIFO: refused" 1 1 'fifo\.npy' 'regular|FIFO' \
    -- scan -i "$in/ten.bin" -t i32 -O "$out/fifo.npy" --backend "$be"
gs_check "-O an existing FIFO: still a FIFO" test -p "$out/fifo.npy"
rm -f "$out/fifo.npy"

printf 'keep' >"$out/target"
ln -s target "$out/link.npy"
expect_fail "-O an existing symbolic link: refused" 1 1 'link\.npy' 'link|regular' \
    -- scan -i "$in/ten.bin" -t i32 -O "$out/link.npy" --backend "$be"
gs_check "-O an existing symbolic link: still the link" test -L "$out/link.npy"
expect_same "-O an existing symbolic link: its target untouched" "$(cat "$out/target")" keep
rm -f "$out/link.npy" "$out/target"

mkdir "$out/folder.npy"
expect_fail "-O an existing folder: refused" 1 1 'folder\.npy' 'folder|regular|directory' \
    -- scan -i "$in/ten.bin" -t i32 -O "$out/folder.npy" --backend "$be"
gs_check "-O an existing folder: still a folder" test -d "$out/folder.npy"
rmdir "$out/folder.npy"

printf 'old' >"$out/mode.npy"
chmod 600 "$out/mode.npy"
if expect_ok "-O an existing file of mode 600: replaced" 1 scan -i "$in/ten.bin" -t i32 -O "$out/mode.npy" --backend "$be" -q; then
    expect_same "-O an existing file of mode 600: still 600" "$(stat -c %a "$out/mode.npy")" 600
fi
rm -f "$out/mode.npy"
# as root, a file of another owner keeps its owner and group (and its report too)
if [ "$(id -u)" -eq 0 ] && printf 'old' >"$out/owned.npy" && printf '{}' >"$out/owned.json" &&
    chown 65534:65534 "$out/owned.npy" "$out/owned.json" 2>/dev/null; then
    if expect_ok "-O and --json over another user's files, as root" 2 \
        scan -i "$in/ten.bin" -t i32 -O "$out/owned.npy" --json "$out/owned.json" --backend "$be" -q; then
        expect_same "-O over another user's file: owner and group kept" "$(stat -c %u:%g "$out/owned.npy")" 65534:65534
        expect_same "--json over another user's file: owner and group kept" "$(stat -c %u:%g "$out/owned.json")" \
            65534:65534
    fi
    rm -f "$out/owned.npy" "$out/owned.json"
else
    gs_skip "owners kept: needs root"
fi
expect_empty_dir "outputs refused: nothing else written" "$out"

# ---- reports that would replace the data ------------------------------------------------
cp "$in/ten.bin" "$in/data.bin"
ln "$in/data.bin" "$in/hard.bin"
for json in "$in/data.bin" "$in/hard.bin" "$in/../in/data.bin"; do
    expect_fail "reduce --json naming the input ($(basename "$json")): usage error" 1 2 'json' 'same file|input' \
        -- reduce -i "$in/data.bin" -t i32 --json "$json" --backend "$be"
done
gs_check "reduce --json naming the input: the input untouched" cmp "$in/ten.bin" "$in/data.bin"
expect_fail "scan --json naming the output: usage error" 1 2 'json' 'same file|output' \
    -- scan -i "$in/data.bin" -t i32 -O "$out/y.npy" --json "$out/./y.npy" --backend "$be"
expect_fail "scan --json naming the input: usage error" 1 2 'json' 'same file|input' \
    -- scan -i "$in/data.bin" -t i32 -O "$out/y.npy" --json "$in/hard.bin" --backend "$be"
gs_check "scan --json naming the input: the input untouched" cmp "$in/ten.bin" "$in/data.bin"
expect_empty_dir "reports naming the data: nothing written" "$out"
expect_fail "bench --json and --csv naming one file: usage error" 1 2 'same file' \
    -- bench --json "$out/r" --csv "$out/./r" -b 1k --backend "$be"
expect_empty_dir "bench --json and --csv naming one file: nothing written" "$out"

# ---- empty and blank values ----------------------------------------------------------------
expect_fail "-O '': usage error" 1 2 "-O|output" -- scan -g 10 -O '' --backend "$be"
expect_fail "--seed '': usage error" 1 2 'seed' -- reduce -g 10 --seed '' --backend "$be"
expect_fail "--seed ' -1': usage error" 1 2 'seed' -- reduce -g 10 --seed ' -1' --backend "$be"
expect_fail "bench --seed ' 1': usage error" 1 2 'seed' -- bench --seed ' 1' --backend "$be"

# ---- killed runs -----------------------------------------------------------------------------
# A streamed scan long enough to be killed in the middle: 300Mi f64 elements
# (2.4 GiB of output) on the CPU backend.
long="scan -g 300Mi -t f64 --backend cpu --stream -q"

# started PID: waits (up to 20 s) until the temporary of $out/big.npy
# appears while PID runs; 0 when it did.
started() {
    started_i=0
    while [ "$started_i" -lt 2000 ]; do
        for started_f in "$out"/.big.npy.gstmp.*; do
            [ -e "$started_f" ] && return 0
        done
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.01
        started_i=$((started_i + 1))
    done
    return 1
}

# ranks_of PID: the gpuscan processes that are PID or below it, read from
# /proc (the CI image has no procps).
ranks_of() {
    for stat in /proc/[0-9]*/stat; do
        read -r line <"$stat" 2>/dev/null || continue
        comm=${line#*\(}
        # shellcheck disable=SC2086  # the fields after the name: state, parent, ...
        set -- ${line##*) }
        echo "${line%% *} $2 ${comm%%)*}"
    done | awk -v root="$1" '{ up[$1] = $2; name[$1] = $3 }
        END { for (p in up) if (name[p] ~ /gpuscan/) {
                  q = p; while (q != "" && q != root) q = up[q]
                  if (q == root) print p } }'
}

# frozen DESC PID: stops the ranks of PID (so that on a fast machine the
# signal still lands in the middle of the run, not after its rename) and
# passes when the run is caught with its temporary and no output; the
# stopped ranks are in $frozen.
frozen() {
    frozen=$(ranks_of "$2")
    # shellcheck disable=SC2086  # a list of PIDs
    [ -n "$frozen" ] && kill -STOP $frozen
    left=$(ls -A "$out")
    case $left in
    .big.npy.gstmp.*) gs_pass "$1: stopped in the middle of the run" ;;
    *) gs_fail "$1: stopped in the middle of the run" "ranks: ${frozen:-none}; in $out:" "$left" ;;
    esac
}

# ended PID: waits (up to 20 s) for PID to end; its exit status in
# ended_rc, 124 when it had to be killed.
ended() {
    ended_i=0
    while kill -0 "$1" 2>/dev/null && [ "$ended_i" -lt 200 ]; do
        sleep 0.1
        ended_i=$((ended_i + 1))
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -9 "$1" 2>/dev/null
        wait "$1"
        ended_rc=124
    else
        wait "$1"
        ended_rc=$?
    fi
}

# A background job of a script ignores SIGINT unless job control is on; set
# -m gives each job its own process group with the signals as they were.
set -m
# The signal goes to mpirun (Ctrl-C, kill), which sends its ranks SIGCONT at
# once and SIGTERM only odls_base_sigkill_timeout seconds later, SIGKILL as
# long after that (Open MPI 4); or to the ranks themselves, as srun and
# SLURM's time limit send it. gs_test.sh's timeout of 0 sends SIGTERM and
# SIGKILL at once, before a rank can remove its temporary (the next run
# removes it); 3 s give it the time it needs, also on 2 busy cores (with 1 s
# a rank once did not get to remove it there, as `make -j2 check` ran other
# suites beside).
whole=$((128 + 300 * 1048576 * 8))   # the .npy header and 300Mi f64 elements
for to in mpirun:INT mpirun:TERM ranks:TERM; do
    sig=${to#*:} to=${to%:*}
    desc="SIG$sig to $to during a streamed scan on 2 ranks"
    # shellcheck disable=SC2086  # $long is a list of words
    OMPI_MCA_odls_base_sigkill_timeout=3 "$GS_MPIRUN" 2 "$GS_BIN" $long -O "$out/big.npy" >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null &
    pid=$!
    if started "$pid"; then
        if [ "$to" = ranks ]; then
            frozen "$desc" "$pid"
            # shellcheck disable=SC2086  # a list of PIDs
            kill -"$sig" $frozen && kill -CONT $frozen
        else
            kill -"$sig" "$pid"
        fi
        ended "$pid"
        left=$(ls -A "$out")
        if [ "$ended_rc" -eq 124 ]; then
            gs_fail "$desc: ends" "still running 20 s after SIG$sig"
        elif [ "$to" = mpirun ] && [ "$left" = big.npy ]; then
            # a fast machine can finish the run before the ranks' SIGTERM
            expect_same "$desc: the run ended before its ranks' SIGTERM, with its whole output" \
                "$(wc -c <"$out/big.npy" | tr -d ' ')" "$whole"
        elif [ "$ended_rc" -eq 0 ]; then
            gs_fail "$desc: ends" "exit 0 after SIG$sig, and in $out:" "$left"
        else
            gs_pass "$desc: ends with exit $ended_rc"
            expect_empty_dir "$desc: no temporary, no output" "$out"
        fi
    else
        kill -9 "$pid" 2>/dev/null
        wait "$pid"
        gs_fail "$desc: its temporary appears" "no .big.npy.gstmp.* in $out"
        gs_stderr_tail
    fi
    rm -rf "${out:?}"/* "${out:?}"/.[!.]* 2>/dev/null
done

desc="SIGKILL of a streamed scan on 1 process"
# shellcheck disable=SC2086
"$GS_BIN" $long -O "$out/big.npy" >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null &
pid=$!
if started "$pid"; then
    frozen "$desc" "$pid"
    kill -9 "$pid"
    ended "$pid" 2>/dev/null
    expect_same "$desc: killed" "$ended_rc" 137
    left=$(ls -A "$out")
    case $left in
    .big.npy.gstmp.*) gs_pass "$desc: leaves its temporary only" ;;
    *) gs_fail "$desc: leaves its temporary only" "left in $out:" "$left" ;;
    esac
    if expect_ok "$desc: the next run writing the same output" 1 scan -g 1k -O "$out/big.npy" --backend "$be" -q; then
        expect_same "$desc: the next run removed the dead run's temporary" "$(ls -A "$out")" big.npy
    fi
else
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
    gs_fail "$desc: its temporary appears" "no .big.npy.gstmp.* in $out"
    gs_stderr_tail
fi
set +m
rm -rf "${out:?}"/* "${out:?}"/.[!.]* 2>/dev/null

# ---- an unreadable input ------------------------------------------------------------------
printf 'secret!!' >"$in/secret.bin"
chmod 000 "$in/secret.bin"
if [ "$(id -u)" -eq 0 ]; then
    gs_skip "unreadable input: root reads any file"
else
    expect_fail "reduce: an unreadable input" 1 1 'secret\.bin' 'cannot open for reading' 'permission' \
        -- reduce -i "$in/secret.bin" -t i32 --backend "$be"
fi
chmod 600 "$in/secret.bin"

gs_summary
