# GS_CHECK_HDF5
# -------------
# Parallel HDF5 for FILE.h5 inputs and outputs (mpi/gs_h5.c), opened through
# its MPI-IO driver. Needs the MPI flags (GS_CHECK_MPI first). Candidates, in
# order, the first that compiles and links with $CC and MPI's flags wins:
#   --with-hdf5=DIR: DIR/bin/h5pcc, else DIR/include and DIR/lib (-lhdf5);
#   otherwise pkg-config's hdf5-openmpi, hdf5-mpich, then h5pcc ($H5PCC or
#   on PATH), then pkg-config's hdf5 (which may be a serial build).
# A serial HDF5 (no H5_HAVE_PARALLEL) cannot open files with MPI-IO: refused
# with an error when HDF5 was asked for (--with-hdf5[=DIR]), skipped with a
# notice when it is optional (the default). --without-hdf5 leaves it out.
# Defines HAVE_HDF5; substitutes HDF5_CFLAGS, HDF5_LIBS and GS_HDF5 (yes or
# no, for the tests); sets GS_HDF5_SUMMARY; AM_CONDITIONAL HAVE_HDF5.
AC_DEFUN([GS_CHECK_HDF5], [
  AC_ARG_VAR([H5PCC], [parallel HDF5's compiler wrapper, whose flags are used (default: h5pcc on PATH)])
  AC_ARG_WITH([hdf5],
    [AS_HELP_STRING([--with-hdf5@<:@=DIR@:>@],
      [parallel HDF5 for .h5 inputs and outputs, installed under DIR (default: used when found)])],
    [], [with_hdf5=check])
  gs_hdf5_ok=no; gs_hdf5_serial=; gs_hdf5_how=
  HDF5_CFLAGS=; HDF5_LIBS=
  if test "x$with_hdf5" != xno; then
    gs_hdf5_try() {
      # $[1]: where the flags came from; $[2], $[3]: compile and link flags
      test "x$gs_hdf5_ok" = xyes && return 0
      gs_save_CPPFLAGS=$CPPFLAGS; gs_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS $MPI_CFLAGS $[2]"; LIBS="$[3] $MPI_LIBS $LIBS"
      AC_MSG_CHECKING([for a parallel HDF5 from $[1]])
      AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>]], [[return H5open();]])],
        [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>
#ifndef H5_HAVE_PARALLEL
#error serial HDF5
#endif]], [])],
          [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>]],
              [[hid_t p = H5Pcreate(H5P_FILE_ACCESS); return H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL) < 0;]])],
            [gs_hdf5_ok=yes; gs_hdf5_how=$[1]; HDF5_CFLAGS=$[2]; HDF5_LIBS=$[3]; AC_MSG_RESULT([yes])],
            [AC_MSG_RESULT([no (does not link)])])],
          [gs_hdf5_serial=$[1]; AC_MSG_RESULT([no (a serial HDF5)])])],
        [AC_MSG_RESULT([no])])
      CPPFLAGS=$gs_save_CPPFLAGS; LIBS=$gs_save_LIBS
    }
    # the compile and link flags of an h5pcc wrapper, less its compiler (shared libraries where it can)
    gs_hdf5_wrapper() {
      gs_w=`$[1] -shlib -show 2>/dev/null` || gs_w=`$[1] -show 2>/dev/null` || return 0
      gs_cf=; gs_lf=
      for gs_word in `echo "$gs_w" | cut -d' ' -f2-`; do
        case $gs_word in
          -I*|-D*) gs_cf="$gs_cf $gs_word" ;;
          -L*|-l*|-Wl,*|*.a|*.so) gs_lf="$gs_lf $gs_word" ;;
        esac
      done
      gs_hdf5_try "$[1]" "$gs_cf" "$gs_lf"
    }
    case $with_hdf5 in
      yes|check) ;;
      *) if test -x "$with_hdf5/bin/h5pcc"; then gs_hdf5_wrapper "$with_hdf5/bin/h5pcc"; fi
         gs_hdf5_try "$with_hdf5" "-I$with_hdf5/include" "-L$with_hdf5/lib -Wl,-rpath,$with_hdf5/lib -lhdf5" ;;
    esac
    if test "x$with_hdf5" = xyes || test "x$with_hdf5" = xcheck; then
      m4_ifdef([PKG_CHECK_MODULES], [
        for gs_pc in hdf5-openmpi hdf5-mpich; do
          if test -n "$PKG_CONFIG" && $PKG_CONFIG --exists $gs_pc 2>/dev/null; then
            gs_hdf5_try "pkg-config $gs_pc" "`$PKG_CONFIG --cflags $gs_pc`" "`$PKG_CONFIG --libs $gs_pc`"
          fi
        done])
      AS_IF([test -z "$H5PCC"], [AC_PATH_PROGS([H5PCC], [h5pcc])])
      if test -n "$H5PCC"; then gs_hdf5_wrapper "$H5PCC"; fi
      m4_ifdef([PKG_CHECK_MODULES], [
        if test -n "$PKG_CONFIG" && $PKG_CONFIG --exists hdf5 2>/dev/null; then
          gs_hdf5_try "pkg-config hdf5" "`$PKG_CONFIG --cflags hdf5`" "`$PKG_CONFIG --libs hdf5`"
        fi])
    fi
    if test "x$gs_hdf5_ok" = xno; then
      if test -n "$gs_hdf5_serial"; then
        gs_hdf5_why="the HDF5 from $gs_hdf5_serial is serial (no H5_HAVE_PARALLEL); gpuscan opens .h5 files with HDF5's MPI-IO driver and needs a parallel HDF5 built with the same MPI (Debian: apt-get install libhdf5-openmpi-dev)"
      else
        gs_hdf5_why="no parallel HDF5 found (Debian: apt-get install libhdf5-openmpi-dev; or --with-hdf5=DIR, or H5PCC=/path/to/h5pcc)"
      fi
      AS_IF([test "x$with_hdf5" = xcheck],
        [AC_MSG_NOTICE([HDF5 left out: $gs_hdf5_why])],
        [AC_MSG_ERROR([--with-hdf5: $gs_hdf5_why])])
    fi
  fi
  if test "x$gs_hdf5_ok" = xyes; then
    AC_DEFINE([HAVE_HDF5], [1], [Define to 1 to read and write .h5 files with parallel HDF5])
    GS_HDF5=yes
    GS_HDF5_SUMMARY="yes ($gs_hdf5_how)"
  else
    GS_HDF5=no
    AS_IF([test "x$with_hdf5" = xno], [GS_HDF5_SUMMARY="no (--without-hdf5)"],
          [GS_HDF5_SUMMARY="no ($gs_hdf5_why)"])
  fi
  AM_CONDITIONAL([HAVE_HDF5], [test "x$gs_hdf5_ok" = xyes])
  AC_SUBST([HDF5_CFLAGS])
  AC_SUBST([HDF5_LIBS])
  AC_SUBST([GS_HDF5])
])
