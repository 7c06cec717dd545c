# GS_CHECK_OPENMP
# ---------------
# OpenMP for the CPU backend when the C compiler has it (--disable-openmp to
# build it serial). Uses autoconf's own AC_OPENMP.
AC_DEFUN([GS_CHECK_OPENMP], [
  AC_OPENMP
  AS_IF([test -n "$OPENMP_CFLAGS"],
    [GS_OPENMP_SUMMARY="yes ($OPENMP_CFLAGS)"],
    [GS_OPENMP_SUMMARY="no (CPU backend runs on one thread per rank)"])
])
