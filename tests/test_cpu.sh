#!/bin/sh
# The cpu CUnit suites, on one rank.
exec "$GS_MPIRUN" 1 "$GS_BUILDDIR/tests/test_cpu"
