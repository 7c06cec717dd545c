# GS_CHECK_CUDA
# -------------
# --with-cuda[=DIR]   default: use CUDA when nvcc and cudart are found (in DIR,
#                     $CUDA_HOME, /usr/local/cuda or on PATH); an error only
#                     when CUDA was asked for explicitly
# --without-cuda      build the CPU-only tool
# --with-cuda-arch=LIST  comma-separated sm_XY targets; machine code for each
#                     and PTX for the newest, so newer GPUs JIT-compile it
# Sets HAVE_CUDA (define and conditional), NVCC, NVCC_GENCODE, CUDA_CPPFLAGS,
# CUDA_LDFLAGS, CUDA_LIBS; honours NVCCFLAGS.
AC_DEFUN([GS_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [build the CUDA backend (default: when found)])],
    [], [with_cuda=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST], [GPU targets, e.g. sm_80,sm_90 (default: sm_80,sm_90)])],
    [], [with_cuda_arch="sm_80,sm_90"])
  AC_ARG_VAR([NVCC], [CUDA compiler])
  AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc])
  gs_cuda_ok=no
  if test "x$with_cuda" != xno; then
    gs_cuda_dir=
    case "$with_cuda" in
      yes|check) gs_cuda_dir=${CUDA_HOME:-${CUDA_PATH:-}} ;;
      *) gs_cuda_dir=$with_cuda ;;
    esac
    gs_cuda_search="$PATH$PATH_SEPARATOR/usr/local/cuda/bin"
    AS_IF([test -n "$gs_cuda_dir"], [gs_cuda_search="$gs_cuda_dir/bin"])
    AS_IF([test -z "$NVCC"], [AC_PATH_PROG([NVCC], [nvcc], [], [$gs_cuda_search])])
    if test -n "$NVCC"; then
      AS_IF([test -z "$gs_cuda_dir"], [gs_cuda_dir=`AS_DIRNAME(["$NVCC"])`; gs_cuda_dir=`AS_DIRNAME(["$gs_cuda_dir"])`])
      gs_cuda_libdir=
      for d in "$gs_cuda_dir/lib64" "$gs_cuda_dir/targets/x86_64-linux/lib" "$gs_cuda_dir/targets/sbsa-linux/lib" "$gs_cuda_dir/lib"; do
        AS_IF([test -z "$gs_cuda_libdir" && test -d "$d"], [gs_cuda_libdir=$d])
      done
      CUDA_CPPFLAGS="-I$gs_cuda_dir/include"
      CUDA_LDFLAGS="-L$gs_cuda_libdir -Wl,-rpath,$gs_cuda_libdir"
      CUDA_LIBS="-lcudart -lstdc++ -lm"
      gs_save_CPPFLAGS=$CPPFLAGS; gs_save_LDFLAGS=$LDFLAGS; gs_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"; LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"; LIBS="$CUDA_LIBS $LIBS"
      AC_MSG_CHECKING([for cudart in $gs_cuda_dir])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
          [[int n; return cudaGetDeviceCount(&n) == cudaSuccess ? 0 : 1;]])],
        [gs_cuda_ok=yes])
      AC_MSG_RESULT([$gs_cuda_ok])
      CPPFLAGS=$gs_save_CPPFLAGS; LDFLAGS=$gs_save_LDFLAGS; LIBS=$gs_save_LIBS
    fi
    if test "x$gs_cuda_ok" = xno && test "x$with_cuda" != xcheck; then
      AC_MSG_ERROR([--with-cuda was given but nvcc and the CUDA runtime were not found${gs_cuda_dir:+ in $gs_cuda_dir}])
    fi
  fi
  NVCC_GENCODE=
  GS_CUDA_ARCHS=
  if test "x$gs_cuda_ok" = xyes; then
    gs_last=
    for a in `echo "$with_cuda_arch" | tr ',' ' '`; do
      n=`echo "$a" | sed 's/^sm_//; s/^compute_//'`
      AS_CASE([$n], [*[[!0-9a-z]]*|""], [AC_MSG_ERROR([bad --with-cuda-arch entry: $a])])
      NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$n,code=sm_$n"
      GS_CUDA_ARCHS="$GS_CUDA_ARCHS sm_$n"
      gs_last=$n
    done
    NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$gs_last,code=compute_$gs_last"
    GS_CUDA_ARCHS="$GS_CUDA_ARCHS +PTX compute_$gs_last"
    GS_CUDA_VERSION=`$NVCC --version | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'`
    AC_DEFINE([HAVE_CUDA], [1], [Define to 1 to build the CUDA backend.])
    AC_DEFINE_UNQUOTED([GS_CUDA_ARCHS], ["$GS_CUDA_ARCHS"], [GPU targets built.])
    AC_DEFINE_UNQUOTED([GS_CUDA_VERSION], ["$GS_CUDA_VERSION"], [CUDA toolkit version built with.])
    GS_CUDA_SUMMARY="yes, CUDA $GS_CUDA_VERSION in $gs_cuda_dir, targets$GS_CUDA_ARCHS"
  else
    CUDA_CPPFLAGS=; CUDA_LDFLAGS=; CUDA_LIBS=
    GS_CUDA_SUMMARY="no (CPU backend only)"
  fi
  AM_CONDITIONAL([HAVE_CUDA], [test "x$gs_cuda_ok" = xyes])
  AC_SUBST([NVCC_GENCODE])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
])
