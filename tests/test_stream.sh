#!/bin/sh
# The chunk pipeline's CUnit suite on host shards, on one rank: through the
# GPU where there is one, else on the CPU backend.
exec "$GS_MPIRUN" 1 "$GS_BUILDDIR/tests/test_stream"
