#!/bin/sh
# cli_progress.sh - rank 0's progress bar: forced (--progress,
# GPUSCAN_PROGRESS=1) it shows under mpirun, whose ranks write into a pipe,
# as one line per update; unforced it never reaches a pipe or a log; on a
# terminal it is redrawn in place and --no-progress turns it off. The
# terminal is a pseudo-terminal from util-linux's `script`.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
# a bar from the first update on, and enough chunks for several updates
GS_PROGRESS_DELAY=0
export GS_PROGRESS_DELAY
run="reduce -g 1Mi --chunk 16Ki --backend $be"
bar='\[#*\.*\] +[0-9]+%'

# lacks PATTERN FILE: no line of FILE matches PATTERN.
# shellcheck disable=SC2317 # called through gs_check
lacks() {
    ! grep -Eq -e "$1" "$2"
}

# ---- in a pipe (a log, or every rank's stderr under mpirun) ------------------------
for np in 1 2; do
    # shellcheck disable=SC2086
    if expect_ok "no bar in a pipe by default [$np rank(s)]" "$np" $run; then
        gs_check "no bar in a pipe by default: stderr has none [$np rank(s)]" \
            lacks "$bar" "$gs_tmp/stderr"
    fi
    # shellcheck disable=SC2086
    if expect_ok "--progress in a pipe [$np rank(s)]" "$np" $run --progress -q; then
        gs_check "--progress in a pipe: bar lines on stderr [$np rank(s)]" grep -Eq -e "$bar" "$gs_tmp/stderr"
        gs_check "--progress in a pipe: one line per update, no carriage return [$np rank(s)]" \
            lacks "$(printf '\r')" "$gs_tmp/stderr"
        gs_check "--progress in a pipe: it ends at 100% [$np rank(s)]" grep -Eq -e '\] 100%' "$gs_tmp/stderr"
        gs_check "--progress in a pipe: rank 0 alone draws it [$np rank(s)]" \
            [ "$(grep -Ec -e '\] 100%' "$gs_tmp/stderr")" -eq 1 ]
    fi
    GPUSCAN_PROGRESS=1
    export GPUSCAN_PROGRESS
    # shellcheck disable=SC2086
    if expect_ok "GPUSCAN_PROGRESS=1 in a pipe [$np rank(s)]" "$np" $run -q; then
        gs_check "GPUSCAN_PROGRESS=1 in a pipe: bar lines [$np rank(s)]" grep -Eq -e "$bar" "$gs_tmp/stderr"
    fi
    # shellcheck disable=SC2086
    if expect_ok "GPUSCAN_PROGRESS=1 --no-progress [$np rank(s)]" "$np" $run -q --no-progress; then
        gs_check "--no-progress beats GPUSCAN_PROGRESS=1 [$np rank(s)]" \
            lacks "$bar" "$gs_tmp/stderr"
    fi
    unset GPUSCAN_PROGRESS
done
bad_progress() {
    expect_fail "$1" 1 2 "$2" 'does not apply' -- "$3" "$2"
}
bad_progress "info --progress is a usage error" --progress info
bad_progress "info --no-progress is a usage error" --no-progress info

# ---- on a terminal ------------------------------------------------------------------
# in_terminal NP OUT ARGS...: gpuscan ARGS on NP ranks (0: without mpirun)
# with stdin, stdout and stderr on a pseudo-terminal; all it wrote in OUT.
in_terminal() {
    term_np=$1 term_out=$2
    shift 2
    if [ "$term_np" -eq 0 ]; then
        set -- "$GS_BIN" "$@"
    else
        set -- "$GS_MPIRUN" "$term_np" "$GS_BIN" "$@"
    fi
    # script runs one command line: quote each word for its shell
    term_cmd=
    for term_word do
        term_cmd="$term_cmd '$(printf '%s' "$term_word" | sed "s/'/'\\\\''/g")'"
    done
    TMPDIR=$gs_mpi_tmp timeout -k 10 "$GS_TEST_TIMEOUT" script -qfec "$term_cmd" /dev/null \
        >"$term_out" 2>&1 </dev/null
}

if ! command -v script >/dev/null 2>&1; then
    gs_skip "progress on a terminal (no util-linux script)"
else
    # shellcheck disable=SC2086
    if in_terminal 0 "$gs_tmp/tty" $run; then
        gs_check "a terminal gets the bar by default" grep -Eq -e "$bar" "$gs_tmp/tty"
        gs_check "a terminal gets the bar redrawn in place" grep -q "$(printf '\r')\[" "$gs_tmp/tty"
    else
        gs_fail "reduce on a terminal" "exit $?"
    fi
    # shellcheck disable=SC2086
    if in_terminal 0 "$gs_tmp/tty" $run --no-progress; then
        gs_check "--no-progress: no bar on a terminal" lacks "$bar" "$gs_tmp/tty"
    else
        gs_fail "reduce --no-progress on a terminal" "exit $?"
    fi
    # mpirun's own terminal: the ranks' stderr is a pipe to mpirun all the same
    for np in 1 2; do
        # shellcheck disable=SC2086
        if in_terminal "$np" "$gs_tmp/tty" $run --progress; then
            gs_check "--progress under mpirun on a terminal shows the bar [$np rank(s)]" \
                grep -Eq -e "$bar" "$gs_tmp/tty"
            gs_check "--progress under mpirun on a terminal: the summary follows [$np rank(s)]" \
                grep -q '^result ' "$gs_tmp/tty"
        else
            gs_fail "reduce --progress under mpirun on a terminal [$np rank(s)]" "exit $?"
        fi
    done
fi

gs_summary
