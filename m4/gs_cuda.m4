# GS_CHECK_CUDA
# -------------
# --with-cuda[=DIR]   default: use CUDA when nvcc and cudart are found (in DIR,
#                     $CUDA_HOME, /usr/local/cuda or on PATH); an error only
#                     when CUDA was asked for explicitly
# --without-cuda      build the CPU-only tool
# --with-cuda-arch=LIST  comma-separated sm_XY targets; machine code for each
#                     and PTX for the newest (numerically, whatever the order;
#                     without an a/f suffix, which PTX would not carry forward),
#                     so newer GPUs JIT-compile it
# --with-cuda-arch=detect  the targets of the GPUs on this machine, as
#                     $NVIDIA_SMI (default nvidia-smi) lists them; with none
#                     (no driver, no GPU) the CUDA backend is left out, as
#                     with --without-cuda, unless --with-cuda asked for it
# nvcc then compiles a small kernel with those targets and NVCCFLAGS (C++17,
# the device features the kernels use); where it fails, CUDA is an error when
# asked for explicitly, else left out with a warning in the summary.
# cudart is linked statically where the toolkit has libcudart_static.a, so
# that a CUDA build runs (on its CPU backend) where libcudart.so is missing.
# Sets HAVE_CUDA (define and conditional), NVCC, NVCC_GENCODE, NVCC_THREADS
# (nvcc compiles the targets of one file in parallel), CUDA_CPPFLAGS,
# CUDA_LDFLAGS, CUDA_LIBS; honours NVCCFLAGS.
AC_DEFUN([GS_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [build the CUDA backend (default: when found)])],
    [], [with_cuda=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST], [GPU targets, e.g. sm_80,sm_90, or detect: those of this machine's GPUs, none without one (default: sm_80,sm_90)])],
    [], [with_cuda_arch="sm_80,sm_90"])
  AC_ARG_VAR([NVCC], [CUDA compiler])
  AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc])
  AC_ARG_VAR([NVIDIA_SMI], [nvidia-smi, which --with-cuda-arch=detect asks for the GPUs' compute capabilities])
  gs_cuda_ok=no
  gs_cuda_why=
  gs_cuda_none=
  if test "x$with_cuda" != xno && test "x$with_cuda_arch" = xdetect; then
    AC_PATH_PROG([NVIDIA_SMI], [nvidia-smi], [], [$PATH$PATH_SEPARATOR/usr/bin])
    AC_MSG_CHECKING([for the GPU targets of this machine])
    dnl "9.0" -> sm_90, one each
    gs_caps=
    AS_IF([test -n "$NVIDIA_SMI"],
      [gs_caps=`"$NVIDIA_SMI" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
         sed -n 's/^ *\([[0-9]][[0-9]]*\)\.\([[0-9]]\) *$/sm_\1\2/p' | sort -u | tr '\n' ',' | sed 's/,$//'`])
    AS_IF([test -n "$gs_caps"],
      [with_cuda_arch=$gs_caps
       AC_MSG_RESULT([$gs_caps])],
      [AC_MSG_RESULT([none])
       gs_cuda_none="--with-cuda-arch=detect found no GPU (no nvidia-smi)"
       AS_IF([test -n "$NVIDIA_SMI"], [gs_cuda_none="--with-cuda-arch=detect found no GPU ($NVIDIA_SMI lists none)"])
       AS_IF([test "x$with_cuda" != xcheck],
         [AC_MSG_ERROR([--with-cuda was given but $gs_cuda_none; name the targets (--with-cuda-arch=sm_90)])])
       with_cuda=no])
  fi
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
      dnl static cudart: no libcudart.so needed where the program runs; it
      dnl loads the driver (libcuda.so) itself, when there is one
      AS_IF([test -f "$gs_cuda_libdir/libcudart_static.a"],
        [CUDA_LDFLAGS="-L$gs_cuda_libdir"
         CUDA_LIBS="-lcudart_static -ldl -lrt -lpthread -lstdc++ -lm"],
        [CUDA_LDFLAGS="-L$gs_cuda_libdir -Wl,-rpath,$gs_cuda_libdir"
         CUDA_LIBS="-lcudart -lstdc++ -lm"])
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
  NVCC_THREADS=
  GS_CUDA_ARCHS=
  if test "x$gs_cuda_ok" = xyes; then
    dnl machine code for every target; PTX for the highest number (90 < 100),
    dnl not the last listed
    gs_ptx=
    for a in `echo "$with_cuda_arch" | tr ',' ' '`; do
      n=`echo "$a" | sed 's/^sm_//; s/^compute_//'`
      AS_CASE([$n], [[[0-9]]*], [], [AC_MSG_ERROR([bad --with-cuda-arch entry: $a])])
      AS_CASE([$n], [*[[!0-9a-z]]*], [AC_MSG_ERROR([bad --with-cuda-arch entry: $a])])
      NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$n,code=sm_$n"
      GS_CUDA_ARCHS="$GS_CUDA_ARCHS sm_$n"
      v=`echo "$n" | sed 's/[[^0-9]].*//'`
      AS_IF([test -z "$gs_ptx" || test "$v" -gt "$gs_ptx"], [gs_ptx=$v])
    done
    AS_IF([test -z "$gs_ptx"], [AC_MSG_ERROR([--with-cuda-arch names no target])])
    NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$gs_ptx,code=compute_$gs_ptx"
    GS_CUDA_ARCHS="$GS_CUDA_ARCHS +PTX compute_$gs_ptx"

    dnl what the kernels need of nvcc: C++17, __int128 and inline PTX in
    dnl device code, warp shuffles, __nanosleep (sm_70 and later)
    AC_MSG_CHECKING([whether $NVCC compiles for$GS_CUDA_ARCHS])
    cat > conftest.cu <<_GS_EOF
#include <cuda_runtime.h>
#include <type_traits>
template <class T> __global__ void gs_conftest(T *p, unsigned long long *q)
{
    unsigned __int128 w = (unsigned __int128)*(p + threadIdx.x) << 64;
    if constexpr (std::is_same_v<T, long long>) w += __shfl_xor_sync(0xffffffffu, (int)*p, 1);
    unsigned long long s;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [[%1]];" : "=l"(s) : "l"(q) : "memory");
    __nanosleep(32);
    *p = (T)(w >> 64) + (T)s;
}
template __global__ void gs_conftest<long long>(long long *, unsigned long long *);
_GS_EOF
    gs_cuda_cmd="$NVCC $NVCC_GENCODE -std=c++17 $NVCCFLAGS -c conftest.cu -o conftest.$OBJEXT"
    echo "$as_me:$LINENO: $gs_cuda_cmd" >&AS_MESSAGE_LOG_FD
    AS_IF([$gs_cuda_cmd >&AS_MESSAGE_LOG_FD 2>&1 && test -s conftest.$OBJEXT],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       echo "$as_me: failed program was:" >&AS_MESSAGE_LOG_FD
       sed 's/^/| /' conftest.cu >&AS_MESSAGE_LOG_FD
       gs_cuda_why="$NVCC could not compile a test kernel for$GS_CUDA_ARCHS${NVCCFLAGS:+ with NVCCFLAGS=$NVCCFLAGS} (see config.log)"
       AS_IF([test "x$with_cuda" != xcheck],
         [AC_MSG_ERROR([--with-cuda was given but $gs_cuda_why; choose targets with --with-cuda-arch, or build without CUDA (--without-cuda)])])
       AC_MSG_WARN([building without CUDA: $gs_cuda_why])
       gs_cuda_ok=no])
    dnl several targets: nvcc compiles each file's targets side by side
    AS_IF([test "x$gs_cuda_ok" = xyes],
      [AC_MSG_CHECKING([whether $NVCC compiles the targets of a file in parallel])
       AS_IF([$NVCC --threads 0 $NVCC_GENCODE --dryrun -c conftest.cu -o conftest.$OBJEXT >/dev/null 2>&1],
         [NVCC_THREADS="--threads 0"; AC_MSG_RESULT([yes])],
         [AC_MSG_RESULT([no])])])
    rm -f conftest.cu conftest.$OBJEXT
  fi
  if test "x$gs_cuda_ok" = xyes; then
    GS_CUDA_VERSION=`$NVCC --version | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'`
    AC_DEFINE([HAVE_CUDA], [1], [Define to 1 to build the CUDA backend.])
    AC_DEFINE_UNQUOTED([GS_CUDA_ARCHS], ["$GS_CUDA_ARCHS"], [GPU targets built.])
    AC_DEFINE_UNQUOTED([GS_CUDA_VERSION], ["$GS_CUDA_VERSION"], [CUDA toolkit version built with.])
    GS_CUDA_SUMMARY="yes, CUDA $GS_CUDA_VERSION in $gs_cuda_dir, targets$GS_CUDA_ARCHS"
  else
    CUDA_CPPFLAGS=; CUDA_LDFLAGS=; CUDA_LIBS=; NVCC_GENCODE=; NVCC_THREADS=
    GS_CUDA_SUMMARY="no (CPU backend only)"
    AS_IF([test -n "$gs_cuda_none"],
      [GS_CUDA_SUMMARY="no (CPU backend only): $gs_cuda_none"])
    AS_IF([test -n "$gs_cuda_why"],
      [GS_CUDA_SUMMARY="no (CPU backend only) -- WARNING: $gs_cuda_why"])
  fi
  AM_CONDITIONAL([HAVE_CUDA], [test "x$gs_cuda_ok" = xyes])
  AC_SUBST([NVCC_GENCODE])
  AC_SUBST([NVCC_THREADS])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
])
