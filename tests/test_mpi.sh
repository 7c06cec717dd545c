#!/bin/sh
# The MPI suites on 1 to 4 ranks: each count must give the 1-rank results.
for np in 1 2 3 4; do
    "$GS_MPIRUN" $np "$GS_BUILDDIR/tests/test_mpi" || exit 1
done
