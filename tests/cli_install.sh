#!/bin/sh
# cli_install.sh - the installed library as its users see it: `make install`
# into a private DESTDIR, then, with nothing but
# `pkg-config --cflags --libs gpuscan` (PKG_CONFIG_PATH on the install), the
# installed examples/host_sum.c built with cc and tests/pc_sum.cpp with g++
# (and, in a CUDA build, examples/device_sum.c with cc), each run on 2 ranks;
# gpuscan.h compiles as C99 and as C++ with -pedantic and no warning of its
# own. Also runs the examples that `make check` built in the tree. In a CUDA
# build: neither gpuscan nor those programs need libcudart.so (static cudart),
# and they run on the CPU backend with LD_LIBRARY_PATH emptied.
#
# Knobs: PKG_CONFIG (configure's), GS_TEST_CC (cc), GS_TEST_CXX (g++),
# GS_MAKE (the make that runs `make check`).
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
srcdir=${GS_SRCDIR:-$(dirname "$0")/..}
pkg_config=${PKG_CONFIG:-pkg-config}
cc=${GS_TEST_CC:-cc}
cxx=${GS_TEST_CXX:-g++}

have() {
    command -v "$1" >/dev/null 2>&1
}
have "$pkg_config" || gs_skip_all "no pkg-config ($pkg_config): the installed gpuscan.pc cannot be used"
have_cc=yes
have_cxx=yes
have "$cc" || have_cc=no
have "$cxx" || have_cxx=no
[ "$have_cc$have_cxx" != nono ] || gs_skip_all "neither $cc nor $cxx: nothing can be built on the install"
cuda=no
grep -q '^#define HAVE_CUDA 1' "$GS_BUILDDIR/config.h" 2>/dev/null && cuda=yes

# run_prog DESC NP PATTERN PROGRAM ARGS...: PROGRAM on NP ranks must exit 0
# in time and print a line that matches PATTERN (extended regular expression).
# Exit status 77 counts as "cannot run here" (device_sum without a GPU).
run_prog() {
    gs_desc=$1 gs_np=$2 gs_pat=$3
    shift 3
    timeout -k 10 "$GS_TEST_TIMEOUT" "$GS_MPIRUN" "$gs_np" "$@" \
        >"$gs_tmp/stdout" 2>"$gs_tmp/stderr" </dev/null
    gs_rc=$?
    if [ "$gs_rc" -eq 77 ]; then
        gs_skip "$gs_desc (exit 77: $(head -n 1 "$gs_tmp/stderr"))"
    elif [ "$gs_rc" -ne 0 ]; then
        gs_fail "$gs_desc" "exit $gs_rc on $gs_np rank(s): $*"
        sed -n '1,10s/^/    | /p' "$gs_tmp/stdout"
        gs_stderr_tail
    elif grep -Eq -e "$gs_pat" "$gs_tmp/stdout"; then
        gs_pass "$gs_desc"
    else
        gs_fail "$gs_desc" "no line matches /$gs_pat/ in its output:"
        sed -n '1,10s/^/    | /p' "$gs_tmp/stdout"
    fi
}

# ---- the examples built by make check ----------------------------------------
if [ -x "$GS_BUILDDIR/examples/host_sum" ]; then
    for np in 1 3; do
        run_prog "examples/host_sum (build tree) on $np rank(s)" "$np" '^OK$' \
            "$GS_BUILDDIR/examples/host_sum" 100003 "$be"
    done
else
    gs_fail "examples/host_sum was built by make check" "no $GS_BUILDDIR/examples/host_sum"
fi
if [ "$cuda" = yes ]; then
    run_prog "examples/device_sum (build tree) on 2 ranks" 2 'agree' \
        "$GS_BUILDDIR/examples/device_sum" 100003
fi

# ---- make install into a private DESTDIR -------------------------------------
# own_make ARGS...: a make of its own in the build tree, not a part of the
# `make check` that runs this script: without that make's MAKEFLAGS (its
# jobserver is not open to tests), serial. Everything is built already, so
# an install only copies files.
own_make() (
    unset MAKEFLAGS MFLAGS MAKELEVEL
    ${GS_MAKE:-make} -C "$GS_BUILDDIR" "$@"
)
dest=$gs_tmp/dest
if own_make install DESTDIR="$dest" >"$gs_tmp/install.log" 2>&1; then
    gs_pass "make install DESTDIR=..."
else
    gs_fail "make install DESTDIR=..." "failed; the end of its output:"
    tail -n 15 "$gs_tmp/install.log" | sed 's/^/    | /'
    gs_summary
fi

# ---- make install prefix=X: a gpuscan.pc that names X ------------------------
# (make, not configure, writes gpuscan.pc: before, it named the configured
# prefix). The build tree's gpuscan.pc is made again for the configured one
# after it.
px=$gs_tmp/px
if own_make install prefix="$px" >"$gs_tmp/install_px.log" 2>&1; then
    px_pc=$(find "$px" -name gpuscan.pc -type f | head -n 1)
    px_inc=$([ -n "$px_pc" ] && PKG_CONFIG_PATH=$(dirname "$px_pc") "$pkg_config" --variable=includedir gpuscan)
    expect_same "make install prefix=X: its gpuscan.pc names X's include folder" "$px_inc" "$px/include"
    gs_check "make install prefix=X: X's include folder holds gpuscan.h" test -f "$px/include/gpuscan.h"
else
    gs_fail "make install prefix=X" "failed; the end of its output:"
    tail -n 15 "$gs_tmp/install_px.log" | sed 's/^/    | /'
fi
own_make gpuscan.pc >>"$gs_tmp/install_px.log" 2>&1 ||
    gs_fail "gpuscan.pc made again for the configured prefix" "make failed"

# The installed gpuscan.pc names the configured prefix; a copy of it names the
# DESTDIR one. Each of its directory variables whose value is an absolute path
# (not ${prefix}/...) gets DESTDIR in front. (PKG_CONFIG_SYSROOT_DIR would
# also prefix the MPI and CUDA -I and -L flags, which are not in DESTDIR.)
pc=$(find "$dest" -name gpuscan.pc -type f | head -n 1)
if [ -z "$pc" ]; then
    gs_fail "make install installs gpuscan.pc" "none under $dest"
    gs_summary
fi
gs_pass "make install installs gpuscan.pc"
mkdir "$gs_tmp/pc"
dest_sed=$(printf '%s\n' "$dest" | sed 's/[\\|&]/\\&/g')
sed -e "s|^prefix=/|prefix=$dest_sed/|" -e "s|^exec_prefix=/|exec_prefix=$dest_sed/|" \
    -e "s|^libdir=/|libdir=$dest_sed/|" -e "s|^includedir=/|includedir=$dest_sed/|" \
    "$pc" >"$gs_tmp/pc/gpuscan.pc"
PKG_CONFIG_PATH=$gs_tmp/pc
export PKG_CONFIG_PATH
unset PKG_CONFIG_SYSROOT_DIR

incdir=$("$pkg_config" --variable=includedir gpuscan)
libdir=$("$pkg_config" --variable=libdir gpuscan)
gs_check "gpuscan.pc's includedir holds gpuscan.h" test -f "$incdir/gpuscan.h"
gs_check "gpuscan.pc's includedir holds gpuscan_version.h" test -f "$incdir/gpuscan_version.h"
gs_check "gpuscan.pc's libdir holds libgpuscan.a" test -f "$libdir/libgpuscan.a"
in_dest=no
case $incdir/:$libdir/ in "$dest"/*:"$dest"/*) in_dest=yes ;; esac
expect_same "gpuscan.pc's directories are the DESTDIR ones" "$in_dest" yes
if "$pkg_config" --cflags --libs gpuscan >"$gs_tmp/flags" 2>&1; then
    gs_pass "pkg-config --cflags --libs gpuscan"
    sed 's/^/    | /' "$gs_tmp/flags"
else
    gs_fail "pkg-config --cflags --libs gpuscan" "failed:"
    sed 's/^/    | /' "$gs_tmp/flags"
    gs_summary
fi
cflags=$("$pkg_config" --cflags gpuscan)
libs=$("$pkg_config" --libs gpuscan)

# the installed examples
host_sum_c=$(find "$dest" -path '*/examples/host_sum.c' -type f | head -n 1)
device_sum_c=$(find "$dest" -path '*/examples/device_sum.c' -type f | head -n 1)
gs_check "make install installs examples/host_sum.c" test -n "$host_sum_c"
gs_check "make install installs examples/device_sum.c" test -n "$device_sum_c"

# ---- gpuscan.h: C99 and C++, -pedantic, no warning of its own -----------------
# Warnings located in MPI's headers are not gpuscan's: shown, not counted.
# header_check DESC COMPILER FLAGS... -- FILE
header_check() {
    gs_desc=$1
    shift
    # shellcheck disable=SC2086  # the pkg-config flags are words
    if ! "$@" $cflags -o "$gs_tmp/hdr.o" >"$gs_tmp/check" 2>&1; then
        gs_fail "$gs_desc" "failed: $* $cflags"
        sed -n '1,15s/^/    | /p' "$gs_tmp/check"
    elif grep -Eq 'gpuscan(_version)?\.h:[0-9]+:[0-9]+: ' "$gs_tmp/check"; then
        gs_fail "$gs_desc" "warnings in gpuscan's headers:"
        sed -n '1,15s/^/    | /p' "$gs_tmp/check"
    else
        gs_pass "$gs_desc"
        [ ! -s "$gs_tmp/check" ] || sed -n '1,6s/^/    (not gpuscan'"'"'s) | /p' "$gs_tmp/check"
    fi
}
printf '#include "gpuscan.h"\nint gs_check_header(void) { return GS_OK; }\n' >"$gs_tmp/hdr.c"
cp "$gs_tmp/hdr.c" "$gs_tmp/hdr.cpp"
if [ "$have_cc" = yes ]; then
    header_check "gpuscan.h compiles with $cc -std=c99 -pedantic -Wall -Wextra" \
        "$cc" -std=c99 -pedantic -Wall -Wextra -c "$gs_tmp/hdr.c"
fi
if [ "$have_cxx" = yes ]; then
    header_check "gpuscan.h compiles with $cxx -std=c++11 -pedantic -Wall -Wextra" \
        "$cxx" -std=c++11 -pedantic -Wall -Wextra -c "$gs_tmp/hdr.cpp"
fi

# ---- programs built on the install with pkg-config alone ----------------------
# build DESC OUTPUT COMPILER SOURCE: COMPILER SOURCE -o OUTPUT $cflags $libs
build() {
    gs_desc=$1 gs_out=$2
    shift 2
    # shellcheck disable=SC2086  # the pkg-config flags are words
    if "$@" -o "$gs_out" $cflags $libs >"$gs_tmp/check" 2>&1; then
        gs_pass "$gs_desc"
        return 0
    fi
    gs_fail "$gs_desc" "failed: $* -o $gs_out \$(pkg-config --cflags --libs gpuscan)"
    sed -n '1,15s/^/    | /p' "$gs_tmp/check"
    return 1
}

if [ "$have_cc" = yes ] && [ -n "$host_sum_c" ]; then
    if build "$cc host_sum.c \$(pkg-config --cflags --libs gpuscan)" "$gs_tmp/host_sum" \
        "$cc" "$host_sum_c"; then
        run_prog "host_sum (installed, $cc) on 2 ranks" 2 '^OK$' "$gs_tmp/host_sum" 100003 "$be"
        gs_check "host_sum: the sum of 0 .. 100002 on 2 ranks" \
            grep -Eq 'sum +5000250003 \(expected 5000250003\)' "$gs_tmp/stdout"
    fi
else
    gs_skip "host_sum built with cc on the install (no $cc)"
fi

if [ "$have_cxx" = yes ]; then
    if build "$cxx pc_sum.cpp \$(pkg-config --cflags --libs gpuscan)" "$gs_tmp/pc_sum" \
        "$cxx" "$srcdir/tests/pc_sum.cpp"; then
        run_prog "pc_sum (C++, $cxx) on 2 ranks" 2 \
            '^pc_sum: sum 25150 \(expected 25150\), max 200 \(expected 200\) on 2 rank\(s\): OK$' \
            "$gs_tmp/pc_sum" "$be"
    fi
else
    gs_skip "pc_sum.cpp built with g++ on the install (no $cxx)"
fi

if [ "$cuda" = yes ]; then
    # a CUDA toolkit is seldom on the default include path (where it is, as in
    # some containers, the build below cannot tell)
    cuda_inc=
    for f in $cflags; do
        case $f in -I*) [ -f "${f#-I}/cuda_runtime_api.h" ] && cuda_inc=${f#-I} ;; esac
    done
    gs_check "gpuscan.pc's Cflags name the directory of cuda_runtime_api.h (CUDA build)" \
        test -n "$cuda_inc"
fi
if [ "$cuda" = yes ] && [ "$have_cc" = yes ] && [ -n "$device_sum_c" ]; then
    # cuda_runtime_api.h from gpuscan.pc's Cflags, cudart from its Libs
    if build "$cc device_sum.c \$(pkg-config --cflags --libs gpuscan) (CUDA build)" \
        "$gs_tmp/device_sum" "$cc" "$device_sum_c"; then
        run_prog "device_sum (installed, $cc) on 2 ranks" 2 'agree' "$gs_tmp/device_sum" 100003
    fi
fi

# ---- a CUDA build runs where the CUDA runtime is not ------------------------------
# cudart is linked statically (configure), so a CUDA build's CPU backend runs
# on nodes without libcudart.so: neither the tool nor a program built with
# pkg-config needs it, and both run with LD_LIBRARY_PATH emptied (where no
# GPU driver is, as on the CI machine, the CUDA build falls back to the CPU
# backend by itself).
if [ "$cuda" = yes ] && have ldd; then
    for prog in "$GS_BIN" "$gs_tmp/host_sum" "$gs_tmp/pc_sum"; do
        [ -x "$prog" ] || continue
        if ldd "$prog" >"$gs_tmp/ldd" 2>&1 && ! grep -q 'libcudart' "$gs_tmp/ldd"; then
            gs_pass "$(basename "$prog") needs no libcudart.so (CUDA build, static cudart)"
        else
            gs_fail "$(basename "$prog") needs no libcudart.so (CUDA build, static cudart)" "ldd $prog:"
            sed -n '1,20s/^/    | /p' "$gs_tmp/ldd"
        fi
    done
    # the last runs of this script: LD_LIBRARY_PATH stays empty
    LD_LIBRARY_PATH=
    export LD_LIBRARY_PATH
    if run_np 2 reduce -g 100003 -t i64 -o sum --backend cpu; then
        gs_pass "gpuscan (CUDA build) reduces on the CPU backend with LD_LIBRARY_PATH emptied"
    else
        gs_fail "gpuscan (CUDA build) reduces on the CPU backend with LD_LIBRARY_PATH emptied" "exit $gs_rc"
        gs_stderr_tail
    fi
    if [ -x "$gs_tmp/host_sum" ]; then
        run_prog "host_sum (installed) on the CPU backend with LD_LIBRARY_PATH emptied" \
            2 '^OK$' "$gs_tmp/host_sum" 100003 cpu
    fi
fi

gs_summary
