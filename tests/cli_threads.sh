#!/bin/sh
# cli_threads.sh - the CPU backend's OpenMP team per rank, as `gpuscan info`
# prints it: without OMP_NUM_THREADS, a rank takes its share of the cores its
# node's ranks may use (all of them without mpirun; half each for 2 ranks
# started with --bind-to none); with OMP_NUM_THREADS, exactly that.
# (make check sets OMP_NUM_THREADS=1 for the other tests; unset here.)
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

# nproc itself obeys OMP_NUM_THREADS
unset OMP_NUM_THREADS OMP_THREAD_LIMIT
cores=$(nproc 2>/dev/null) || gs_skip_all "nproc is missing"
half=$((cores / 2))
[ "$half" -ge 1 ] || half=1

# threads_of NP [MPIRUN-ARGS...]: the "N thread(s)" of every rank's info line,
# one a line in rank order, of `gpuscan info --backend cpu` on NP ranks
# (NP 0: without mpirun); exits non-zero when the run fails.
threads_of() {
    np=$1
    shift
    if [ "$np" -eq 0 ]; then
        TMPDIR=$gs_mpi_tmp timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_BIN" info --backend cpu \
            >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null || return 1
    else
        timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_MPIRUN" "$np" "$@" "$GS_BIN" info --backend cpu \
            >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null || return 1
    fi
    sed -n 's/^rank [0-9]* .*cpu backend, \([0-9]*\) thread(s).*/\1/p' "$gs_tmp/stdout" | tr '\n' ' '
}

got=$(threads_of 0)
expect_same "without mpirun, one rank uses all $cores core(s) it may run on" "$got" "$cores "

# --bind-to none is Open MPI's (and MPICH's) spelling; another launcher skips
if timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_MPIRUN" 1 --bind-to none true >/dev/null 2>&1; then
    got=$(threads_of 2 --bind-to none)
    expect_same "2 ranks with --bind-to none split the $cores core(s): $half each" "$got" "$half $half "
else
    gs_skip "the launcher takes no --bind-to none"
fi

OMP_NUM_THREADS=3
export OMP_NUM_THREADS
got=$(threads_of 2)
expect_same "OMP_NUM_THREADS=3 is obeyed on every rank" "$got" "3 3 "
got=$(threads_of 0)
expect_same "OMP_NUM_THREADS=3 is obeyed without mpirun" "$got" "3 "

# far more threads than the node has CPUs (libgomp crashed creating them):
# refused with a message, on every rank count
OMP_NUM_THREADS=100000
for np in 1 2; do
    expect_fail "OMP_NUM_THREADS=100000 [$np rank(s)]" "$np" 1 'OMP_NUM_THREADS=100000' 'threads per CPU' -- \
        reduce -g 1000 --backend cpu
done

gs_summary
