#!/bin/sh
# The CPU backend's CUnit suites, on one rank with two OpenMP threads (so the
# blocked parallel paths run even on a 2-core machine).
OMP_NUM_THREADS=2 exec "$GS_MPIRUN" 1 "$GS_BUILDDIR/tests/test_cpu"
