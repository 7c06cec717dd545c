#!/bin/sh
# cli_symbols.sh - the installed archive exports the public API and nothing
# else of its own: every global symbol that src/libgpuscan.a defines is a
# function that gpuscan.h marks GS_API, or a weak copy of header-only library
# code (libstdc++, CUB, NVTX: COMDAT, merged with an application's own), and
# every public function is there. Internal names (backends, MPI layer,
# pipeline, kernels, templates over gpuscan's types) must stay local, so that
# none can clash with an application's.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

archive=$GS_BUILDDIR/src/libgpuscan.a
header=$GS_SRCDIR/src/gpuscan.h
command -v nm >/dev/null 2>&1 || gs_skip_all "no nm here"

sed -n 's/^GS_API .*[ *]\(gs_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u >"$gs_tmp/api"
# strong symbols, and weak ones that carry a gpuscan name: gpuscan's own
nm -g --defined-only "$archive" |
    awk 'NF == 3 && ($2 !~ /^[WwVv]$/ || $3 ~ /gs_/) { print $3 }' | sort -u >"$gs_tmp/exported"

gs_check "gpuscan.h marks its functions GS_API" [ "$(wc -l <"$gs_tmp/api")" -ge 20 ]
extra=$(comm -13 "$gs_tmp/api" "$gs_tmp/exported")
if [ -z "$extra" ]; then
    gs_pass "libgpuscan.a exports nothing beyond the public API"
else
    # shellcheck disable=SC2086  # one detail line per symbol
    gs_fail "libgpuscan.a exports internal symbols" $extra
fi
missing=$(comm -23 "$gs_tmp/api" "$gs_tmp/exported")
if [ -z "$missing" ]; then
    gs_pass "libgpuscan.a exports every public function"
else
    # shellcheck disable=SC2086
    gs_fail "public functions missing from libgpuscan.a" $missing
fi

gs_summary
