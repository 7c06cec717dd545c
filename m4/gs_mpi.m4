# GS_CHECK_MPI
# ------------
# Find MPI for the C compiler in $CC, which need not be an MPI wrapper (the GPU
# nodes export CC=/opt/gcc/bin/gcc). In order:
#   1. $CC already compiles and links MPI programs (CC=mpicc): nothing to add;
#   2. the wrapper in $MPICC, else the first mpicc on PATH: take its compile
#      and link flags (Open MPI's --showme, MPICH's -compile_info/-link_info);
#   3. pkg-config's ompi-c or mpich.
# Sets and substitutes MPI_CFLAGS, MPI_LIBS and MPIRUN. Stops when none works.
#
# Also PC_MPI_CFLAGS and PC_MPI_LIBS: the MPI flags for gpuscan.pc, whose
# users compile with any cc or c++, not with the compiler that built the
# library. They are MPI_CFLAGS and MPI_LIBS, except in case 1, where those
# are empty: then they are asked of the wrapper in $CC (else of $MPICC), and
# configure warns when neither tells them.
AC_DEFUN([GS_CHECK_MPI], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper whose flags are used (default: mpicc on PATH)])
  AC_ARG_VAR([MPIRUN], [MPI launcher for the tests (default: mpirun beside the wrapper)])
  gs_mpi_found=no; gs_mpi_as_is=no
  AC_MSG_CHECKING([whether $CC links MPI programs as it is])
  _GS_MPI_TRY_LINK([], [], [gs_mpi_found=yes; gs_mpi_how="$CC"; gs_mpi_as_is=yes])
  AC_MSG_RESULT([$gs_mpi_found])
  if test "x$gs_mpi_found" = xno; then
    AS_IF([test -z "$MPICC"], [AC_PATH_PROGS([MPICC], [mpicc mpicc.openmpi mpicc.mpich])])
    if test -n "$MPICC"; then
      AC_MSG_CHECKING([for the compile and link flags of $MPICC])
      _GS_MPI_WRAPPER_FLAGS([$MPICC])
      AC_MSG_RESULT([$gs_cf $gs_lf])
      AC_MSG_CHECKING([whether $CC links MPI programs with those flags])
      _GS_MPI_TRY_LINK([$gs_cf], [$gs_lf],
        [gs_mpi_found=yes; gs_mpi_how="$MPICC"; MPI_CFLAGS="$gs_cf"; MPI_LIBS="$gs_lf"])
      AC_MSG_RESULT([$gs_mpi_found])
    fi
  fi
  if test "x$gs_mpi_found" = xno; then
    m4_ifdef([PKG_CHECK_MODULES], [
      PKG_CHECK_MODULES([MPI], [ompi-c], [gs_mpi_found=yes; gs_mpi_how="pkg-config ompi-c"],
        [PKG_CHECK_MODULES([MPI], [mpich], [gs_mpi_found=yes; gs_mpi_how="pkg-config mpich"],
          [:])])])
  fi
  if test "x$gs_mpi_found" = xno; then
    AC_MSG_ERROR([no MPI found: gpuscan needs an MPI library (Open MPI or MPICH).
  Install one (Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin),
  or point MPICC at the MPI C compiler wrapper, or run configure with CC=mpicc.])
  fi
  if test -z "$MPIRUN"; then
    gs_mpi_bindir=
    AS_IF([test -n "$MPICC"], [gs_mpi_bindir=`AS_DIRNAME(["$(command -v $MPICC)"])`])
    AC_PATH_PROGS([MPIRUN], [mpirun mpiexec], [], [$gs_mpi_bindir$PATH_SEPARATOR$PATH])
  fi
  PC_MPI_CFLAGS=$MPI_CFLAGS
  PC_MPI_LIBS=$MPI_LIBS
  if test "x$gs_mpi_as_is" = xyes; then
    # $CC adds the MPI flags itself; a user of gpuscan.pc needs them spelled out
    AC_MSG_CHECKING([for the MPI flags that $CC adds, for gpuscan.pc])
    _GS_MPI_WRAPPER_FLAGS([$CC])
    if test -z "$gs_cf$gs_lf" && test -n "$MPICC"; then
      _GS_MPI_WRAPPER_FLAGS([$MPICC])
    fi
    PC_MPI_CFLAGS=$gs_cf
    PC_MPI_LIBS=$gs_lf
    AS_IF([test -n "$gs_cf$gs_lf"], [AC_MSG_RESULT([$gs_cf $gs_lf])], [AC_MSG_RESULT([none])
      AC_MSG_WARN([$CC does not tell its MPI flags (--showme, -compile_info): gpuscan.pc gets none,
  and its users must compile with an MPI compiler wrapper; set MPICC to one that tells them])])
  fi
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AC_SUBST([PC_MPI_CFLAGS])
  AC_SUBST([PC_MPI_LIBS])
  GS_MPI_SUMMARY="$gs_mpi_how"
])

# _GS_MPI_WRAPPER_FLAGS(WRAPPER)
# ------------------------------
# The compile and link flags that the MPI compiler wrapper WRAPPER adds, in
# gs_cf and gs_lf (Open MPI's --showme, MPICH's and Intel MPI's
# -compile_info/-link_info); both empty when it tells neither.
AC_DEFUN([_GS_MPI_WRAPPER_FLAGS], [
  if gs_cf=`$1 --showme:compile 2>/dev/null` && gs_lf=`$1 --showme:link 2>/dev/null`; then :
  elif gs_cf=`$1 -compile_info 2>/dev/null` && gs_lf=`$1 -link_info 2>/dev/null`; then
    # MPICH prints the whole command line: keep the options
    gs_cf=`echo "$gs_cf" | tr ' ' '\n' | grep -E '^-(I|D|pthread)' | tr '\n' ' '`
    gs_lf=`echo "$gs_lf" | tr ' ' '\n' | grep -E '^-(L|l|Wl|pthread)' | tr '\n' ' '`
  else
    gs_cf=; gs_lf=
  fi
])

# _GS_MPI_TRY_LINK(CFLAGS, LIBS, ACTION-IF-OK)
AC_DEFUN([_GS_MPI_TRY_LINK], [
  gs_save_CFLAGS=$CFLAGS; gs_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $1"; LIBS="$2 $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
      [[MPI_Init(0, 0); MPI_Exscan(0, 0, 0, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD); MPI_Finalize();]])],
    [$3])
  CFLAGS=$gs_save_CFLAGS; LIBS=$gs_save_LIBS
])
