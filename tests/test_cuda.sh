#!/bin/sh
# The GPU suites: SKIP (77) where no usable GPU exists, on one rank; on two
# ranks as well where two GPUs are visible.
"$GS_MPIRUN" 1 "$GS_BUILDDIR/tests/test_cuda" || exit $?
if [ "${GS_TEST_GPUS:-1}" -ge 2 ]; then
    exec "$GS_MPIRUN" 2 "$GS_BUILDDIR/tests/test_cuda"
fi
