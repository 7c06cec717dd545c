# gs_test.sh - helpers of the CLI tests, sourced by tests/cli_*.sh.
# shellcheck shell=sh
#
# `make check` sets GS_MPIRUN (tests/mpirun.sh NP PROGRAM ARGS), GS_BIN (the
# gpuscan binary), GS_BUILDDIR, GS_SRCDIR and PYTHON3. Knobs:
#   GS_TEST_BACKEND  backend the runs ask for (default cpu; set cuda on a GPU node to
#                    run the CLI suites on the GPU: test_cuda and cli_algo always do)
#   GS_TEST_TIMEOUT  seconds one run may take before it counts as a hang (60)
#
# Each check prints PASS: or FAIL: with a description; gs_summary prints the
# closing "N passed, N failed" line and exits 1 if anything failed. Scripts
# run under the configured $(SHELL), so this is POSIX sh, not bash.

: "${GS_MPIRUN:?GS_MPIRUN is not set (run through make check)}"
: "${GS_BIN:?GS_BIN is not set (run through make check)}"
: "${GS_BUILDDIR:?GS_BUILDDIR is not set (run through make check)}"
GS_TEST_BACKEND=${GS_TEST_BACKEND:-cpu}
# Open MPI's mpirun waits about 2 s before it kills the other ranks of a job
# in which one rank exited non-zero; gpuscan's ranks all leave after
# MPI_Finalize with the same status, so there is nothing to wait for, and the
# error tests run ten times faster without the wait.
OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-0}
export OMPI_MCA_odls_base_sigkill_timeout
GS_TEST_TIMEOUT=${GS_TEST_TIMEOUT:-60}

gs_passed=0
gs_failed=0

if [ ! -x "$GS_BIN" ]; then
    echo "ERROR: $GS_BIN is not an executable (build it first)" >&2
    exit 99   # automake's hard error: the suite cannot run at all
fi

# A private folder under the build tree, removed however the script ends.
gs_tmp=$(mktemp -d "$GS_BUILDDIR/gs-test.XXXXXX") || exit 99
# TMPDIR of the runs without mpirun (a singleton MPI_Init makes its Open MPI
# session directory there too); short, as tests/mpirun.sh's own per job.
gs_mpi_tmp=$(mktemp -d "${GS_MPI_TMPBASE:-/tmp}/gs.XXXXXX") || { rm -rf "$gs_tmp"; exit 99; }
trap 'rm -rf "$gs_tmp" "$gs_mpi_tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

gs_pass() {
    gs_passed=$((gs_passed + 1))
    echo "PASS: $1"
}

# gs_fail DESC [DETAIL...]: each detail on its own indented line.
gs_fail() {
    gs_failed=$((gs_failed + 1))
    echo "FAIL: $1"
    shift
    for gs_line in "$@"; do
        echo "    $gs_line"
    done
}

# A check that could not run here (not counted).
gs_skip() {
    echo "SKIP: $1"
}

# The whole script cannot run here: automake's SKIP.
gs_skip_all() {
    echo "SKIP: $1"
    exit 77
}

gs_summary() {
    echo "$gs_passed passed, $gs_failed failed"
    [ "$gs_failed" -eq 0 ] || exit 1
    exit 0
}

# run_np NP ARGS...: gpuscan ARGS on NP ranks (NP 0: without mpirun, as a
# user types `gpuscan --help`). Output goes to $gs_tmp/stdout and
# $gs_tmp/stderr; the exit status is returned and kept in gs_rc (124 or 137:
# killed after GS_TEST_TIMEOUT seconds).
run_np() {
    gs_np=$1
    shift
    if [ "$gs_np" -eq 0 ]; then
        TMPDIR=$gs_mpi_tmp timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_BIN" "$@" \
            >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null
    else
        timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_MPIRUN" "$gs_np" "$GS_BIN" "$@" \
            >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null
    fi
    gs_rc=$?
    return "$gs_rc"
}

# The last run's stderr, indented, for a failure report.
gs_stderr_tail() {
    sed -n '1,15s/^/    | /p' "$gs_tmp/stderr"
}

gs_timed_out() {
    [ "$gs_rc" -eq 124 ] || [ "$gs_rc" -eq 137 ]
}

# expect_ok DESC NP ARGS...: the run exits 0 in time. Returns 0 when it did,
# so that a caller checks the output only then.
expect_ok() {
    gs_desc=$1 gs_np=$2
    shift 2
    if run_np "$gs_np" "$@"; then
        gs_pass "$gs_desc"
        return 0
    fi
    if gs_timed_out; then
        gs_fail "$gs_desc" "timed out after ${GS_TEST_TIMEOUT}s on $gs_np rank(s): gpuscan $*"
    else
        gs_fail "$gs_desc" "exit $gs_rc on $gs_np rank(s): gpuscan $*"
    fi
    gs_stderr_tail
    return 1
}

# expect_fail DESC NP RC PATTERN... -- ARGS...
# The run of gpuscan ARGS on NP ranks must end in time with exit status RC
# (1 or 2; "nz": any failure) and print exactly one "gpuscan: error:" line
# (rank 0 speaks for all) that matches every PATTERN (extended regular
# expressions, case-insensitive): one names the file or value, one the
# problem.
expect_fail() {
    gs_desc=$1 gs_np=$2 gs_want=$3
    shift 3
    gs_patterns=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        gs_patterns="$gs_patterns$1
"
        shift
    done
    if [ $# -eq 0 ]; then
        echo "ERROR: expect_fail '$gs_desc': no -- before the arguments" >&2
        exit 99
    fi
    shift
    run_np "$gs_np" "$@"
    gs_why=
    if gs_timed_out; then
        gs_why="timed out after ${GS_TEST_TIMEOUT}s (a hang?)"
    elif [ "$gs_rc" -eq 0 ]; then
        gs_why="exit 0, expected a failure"
    elif [ "$gs_want" != nz ] && [ "$gs_rc" -ne "$gs_want" ]; then
        gs_why="exit $gs_rc, expected $gs_want"
    else
        grep 'gpuscan: error:' "$gs_tmp/stderr" >"$gs_tmp/errline"
        gs_count=$(wc -l <"$gs_tmp/errline")
        if [ "$gs_count" -ne 1 ]; then
            gs_why="$gs_count 'gpuscan: error:' lines, expected exactly 1"
        else
            gs_ifs=$IFS
            IFS='
'
            set -f   # patterns are not globs
            for gs_p in $gs_patterns; do
                grep -Eiq -e "$gs_p" "$gs_tmp/errline" || gs_why="message does not match /$gs_p/"
            done
            set +f
            IFS=$gs_ifs
        fi
    fi
    if [ -z "$gs_why" ]; then
        gs_pass "$gs_desc"
        return 0
    fi
    gs_fail "$gs_desc" "$gs_why" "on $gs_np rank(s): gpuscan $*"
    gs_stderr_tail
    return 1
}

# expect_empty_dir DESC DIR: nothing was left in DIR, no output and no
# temporary file.
expect_empty_dir() {
    gs_left=$(ls -A "$2")
    if [ -z "$gs_left" ]; then
        gs_pass "$1"
    else
        gs_fail "$1" "left in $2:" "$gs_left"
        rm -rf "${2:?}"/* "${2:?}"/.[!.]* 2>/dev/null
    fi
}

# gs_flush_checks PYTHON CHECKER MANIFEST OUTDIR: judges the runs queued in
# MANIFEST with `PYTHON CHECKER check MANIFEST` (one Python start for many
# runs), counts its PASS and FAIL lines as this script's, then frees the
# outputs in OUTDIR and the manifest. Nothing queued: nothing done.
gs_flush_checks() {
    [ -s "$3" ] || return 0
    "$1" "$2" check "$3" >"$gs_tmp/checked" 2>&1
    gs_check_rc=$?
    cat "$gs_tmp/checked"
    gs_passes=$(grep -c '^PASS:' "$gs_tmp/checked")
    gs_fails=$(grep -c '^FAIL:' "$gs_tmp/checked")
    gs_passed=$((gs_passed + gs_passes))
    gs_failed=$((gs_failed + gs_fails))
    if [ "$gs_check_rc" -ne 0 ] && [ "$gs_fails" -eq 0 ]; then
        gs_fail "$(basename "$2") check ran" "exit $gs_check_rc"
    fi
    rm -f "${4:?}"/* "$3"
}

# gs_check DESC COMMAND...: passes when COMMAND exits 0; its output is shown
# on failure.
gs_check() {
    gs_desc=$1
    shift
    if "$@" >"$gs_tmp/check" 2>&1; then
        gs_pass "$gs_desc"
        return 0
    fi
    gs_fail "$gs_desc" "failed: $*"
    sed -n '1,15s/^/    | /p' "$gs_tmp/check"
    return 1
}

# expect_same DESC GOT WANT: GOT is WANT, and not empty (a run that failed
# gives nothing).
expect_same() {
    if [ -n "$2" ] && [ "$2" = "$3" ]; then
        gs_pass "$1"
    else
        gs_fail "$1" "got '$2', expected '$3'"
    fi
}

# gs_find_python any|numpy: a Python 3 that runs, preferring configure's;
# with `numpy`, one that imports NumPy (a pyenv python3 may lack it where the
# system's has it). Prints the interpreter's own path (sys.executable: a
# pyenv shim costs a quarter second a call), or returns 1.
gs_find_python() {
    for gs_py in "${PYTHON3:-}" python3 /usr/bin/python3 /usr/local/bin/python3; do
        [ -n "$gs_py" ] || continue
        gs_import=
        [ "$1" = any ] || gs_import="import $1; "
        "$gs_py" -c "${gs_import}import sys; print(sys.executable)" 2>/dev/null && return 0
    done
    return 1
}
gs_python=$(gs_find_python any) || gs_python=

# json_get FILE KEY: the value of top-level KEY in the JSON object in FILE,
# as JSON text (strings keep their quotes), or nothing. Uses Python's json
# module when there is a Python, else a sed good enough for gpuscan's flat
# top-level scalars.
json_get() {
    if [ -n "$gs_python" ]; then
        "$gs_python" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit("%s: not JSON: %s" % (sys.argv[1], e))
print(json.dumps(d[sys.argv[2]]) if sys.argv[2] in d else "")' "$1" "$2"
    else
        sed -n "s/^{.*\"$2\": *\(\"[^\"]*\"\|[^,}]*\).*/\1/p" "$1" | head -n 1
    fi
}

# mk_npy FILE DICT DATA_BYTES [MAJOR]: a .npy file by hand, the way NumPy
# lays it out (header padded with spaces and '\n' to a multiple of 64 bytes),
# with DATA_BYTES zero bytes of data. Bad headers need no NumPy.
mk_npy() {
    gs_major=${4:-1}
    gs_pre=10
    [ "$gs_major" -eq 1 ] || gs_pre=12
    gs_hlen=$(( (gs_pre + ${#2} + 1 + 63) / 64 * 64 - gs_pre ))
    {
        printf '\223NUMPY'
        gs_octal "$gs_major" 0 $((gs_hlen % 256)) $((gs_hlen / 256))
        [ "$gs_pre" -eq 10 ] || gs_octal 0 0
        printf '%s' "$2"
        printf "%$((gs_hlen - ${#2} - 1))s\\n" ''
        head -c "$3" /dev/zero
    } >"$1"
}

# gs_octal BYTE...: the bytes of the given values (0-255).
gs_octal() {
    for gs_b in "$@"; do
        # shellcheck disable=SC2059  # the format is the escape being built
        printf "\\$(printf '%03o' "$gs_b")"
    done
}
