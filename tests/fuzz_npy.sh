#!/bin/sh
# The .npy parser's fuzz target (tests/fuzz_npy.c) under the mutation
# driver (tests/fuzz_npy_driver.c): a fixed sequence of a million inputs,
# a few seconds. No MPI: the parser works on bytes.
exec "$GS_BUILDDIR/tests/fuzz_npy" "$@"
