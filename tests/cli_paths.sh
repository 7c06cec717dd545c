#!/bin/sh
# cli_paths.sh - long paths: inputs and outputs whose names run from 200
# characters up to PATH_MAX, in nested folders, read and written on 1 and 2
# ranks. Open MPI's MPI-IO once aborted on them ("buffer overflow detected"
# from a 256-byte buffer of its shared-file-pointer component); they must
# work, or fail with a message when the output's temporary name cannot
# exist, and leave nothing behind.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
ref=$gs_tmp/ref.npy
if ! expect_ok "a short-path scan, the reference" 0 scan -g 1000 -t i64 --seed 5 -O "$ref" --backend "$be" -q ||
    ! expect_ok "a short-path reduce, the reference" 0 reduce -i "$ref" --backend "$be"; then
    gs_summary
fi
# the result line of the last run
result() { sed -n 's/^result *//p' "$gs_tmp/stdout"; }
ref_sum=$(result)

# deep_dir LENGTH: creates and prints a folder under $gs_tmp whose path is
# LENGTH characters long (folder names of at most 200 characters).
deep_dir() {
    deep_path=$gs_tmp/d
    while [ $((${#deep_path} + 201)) -lt "$1" ]; do
        deep_path=$deep_path/$(printf '%0200d' 0 | tr 0 p)
    done
    deep_left=$(($1 - ${#deep_path} - 1))
    [ "$deep_left" -gt 0 ] && deep_path=$deep_path/$(printf "%0${deep_left}d" 0 | tr 0 q)
    mkdir -p "$deep_path" && printf '%s' "$deep_path"
}

# Lengths of the output's path: past the 246 and 210 characters that broke
# Open MPI, and up to the longest that leaves its temporary name (about 30
# characters more) under PATH_MAX (4096 with the final NUL).
for len in 200 256 1000 4050; do
    dir=$(deep_dir $((len - 6))) || { gs_fail "$len-character paths: mkdir"; continue; }
    out=$dir/y.npy
    for np in 1 2; do
        rm -f "$out"
        if expect_ok "scan -O a $len-character path on $np rank(s)" "$np" \
            scan -g 1000 -t i64 --seed 5 -O "$out" --backend "$be" -q; then
            gs_check "scan -O a $len-character path on $np rank(s): the output is right" cmp "$ref" "$out"
        fi
        if expect_ok "reduce -i a $len-character path on $np rank(s)" "$np" reduce -i "$out" --backend "$be"; then
            expect_same "reduce -i a $len-character path on $np rank(s): the sum" "$(result)" "$ref_sum"
        fi
    done
    # a relative path to the same file, from a folder in the middle
    rel=${out#"$gs_tmp"/}
    if (cd "$gs_tmp" && run_np 0 reduce -i "$rel" --backend "$be"); then
        expect_same "reduce -i a relative $len-character path: the sum" "$(result)" "$ref_sum"
    else
        gs_fail "reduce -i a relative $len-character path" "exit $?: gpuscan reduce -i $rel"
        gs_stderr_tail
    fi
    rm -f "$out"
    expect_empty_dir "$len-character paths: nothing left beside the output" "$dir"
done
# HDF5 files go through the same links (HDF5's MPI-IO driver opens them
# with Open MPI's I/O): the same data written and read back as a dataset
if [ "${GS_HDF5:-no}" = yes ]; then
    for len in 300 2000; do
        dir=$(deep_dir $((len - 5))) || { gs_fail "$len-character HDF5 paths: mkdir"; continue; }
        if expect_ok "scan -O a $len-character HDF5 path on 2 ranks" 2 \
            scan -g 1000 -t i64 --seed 5 -O "$dir/y.h5:/g/cs" --backend "$be" -q &&
            expect_ok "reduce -i a $len-character HDF5 path on 2 ranks" 2 reduce -i "$dir/y.h5:/g/cs" --backend "$be"; then
            expect_same "a $len-character HDF5 path: the sum of the scan read back" "$(result)" "$ref_sum"
        fi
        rm -f "$dir/y.h5"
        expect_empty_dir "$len-character HDF5 paths: nothing left beside the output" "$dir"
    done
fi
# the long names were opened through links in TMPDIR (mpi/gs_mpiio.c)
set -- "$gs_mpi_tmp"/gs-link.*
gs_check "no link left in the runs' TMPDIR" test ! -e "$1"

# Outputs whose temporary cannot exist: a clear error, nothing written.
dir=$(deep_dir 4080)
expect_fail "scan -O a 4086-character path: the temporary's name is too long" 2 1 'y\.npy' 'too long' \
    -- scan -g 10 -O "$dir/y.npy" --backend "$be"
expect_empty_dir "scan -O a 4086-character path: nothing written" "$dir"
dir=$(deep_dir 300)
long_name=$(printf '%0240d' 0 | tr 0 n).npy
expect_fail "scan -O a 244-character file name: the temporary's name is too long" 2 1 'nnn\.npy' 'too long' \
    -- scan -g 10 -O "$dir/$long_name" --backend "$be"
expect_empty_dir "scan -O a 244-character file name: nothing written" "$dir"

gs_summary
