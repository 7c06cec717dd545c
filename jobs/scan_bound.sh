#!/bin/bash
# scan_bound.sh - how close a distributed scan comes to its bound
# (docs/SCALING.md, "The distributed scan's bound"): on several ranks a scan
# needs each rank's offset first, so it runs a reduction pass, MPI_Exscan and
# the scan pass. On device-resident data the bound of R ranks with N elements
# each is T_reduce(N) + T_scan(N) of one rank; fed from a file, the reduction
# pass is the pass that loads the shard, so the bound is the file's read plus
# the output's write.
#
# usage: jobs/scan_bound.sh [-n N] [-r R] [-t TYPE] [-o RESULTS] [-F]
#   -n N        elements per rank (default 1Gi = 2^30 with a GPU, 4Mi without)
#   -r R        ranks of the distributed runs (default: the GPUs listed, at least 2;
#               with fewer GPUs than ranks, ranks share them: the output says so)
#   -t TYPE     element type (default f32); the op is sum
#   -o RESULTS  folder for the logs and CSV files (default scan-bound)
#   -F          no file-fed runs (they write R*N elements twice under $TMPDIR)
# Environment: GPUSCAN (default ./gpuscan), MPIRUN (default mpirun), MPIRUN_ARGS.
# Prints one table; exit 1 when a run failed.
set -euo pipefail
jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=scaling_lib.sh
source "$jobs_dir/scaling_lib.sh"

usage() {
    sed -n '10,18s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    exit "$1"
}

per_rank='' ranks='' type=f32 results=scan-bound files=1
while getopts 'n:r:t:o:Fh' opt; do
    case $opt in
        n) per_rank=$OPTARG ;;
        r) ranks=$OPTARG ;;
        t) type=$OPTARG ;;
        o) results=$OPTARG ;;
        F) files=0 ;;
        h) usage 0 ;;
        *) usage 2 >&2 ;;
    esac
done
gs_find_gpuscan . scan_bound.sh || exit
gs_allow_root
gpus=$(gs_gpu_count)
[ -n "$per_rank" ] || per_rank=$([ "$gpus" -gt 0 ] && echo 1Gi || echo 4Mi)
per_rank=$(gs_elements "$per_rank")
[ -n "$ranks" ] || ranks=$((gpus > 2 ? gpus : 2))
case $ranks in '' | *[!0-9]* | 0 | 1) echo "scan_bound.sh: -r $ranks: at least 2 ranks" >&2 && exit 2 ;; esac
mkdir -p "$results"
[ "$gpus" -ge "$ranks" ] || echo "note: $ranks ranks on $gpus GPU(s): ranks share a device (or the CPU backend)," \
    "so the distributed figures are not those of $ranks separate GPUs"

failed=0
# bench_time P ELEMENTS NAME ARGS...: the median time (µs) of one bench row;
# nan when the run failed (it runs in $(...): the caller checks for nan)
bench_time() {
    local np=$1 elements=$2 name=$3
    shift 3
    gs_launch "$np" 1
    if ! "${GS_LAUNCH[@]}" bench -b "$elements" -t "$type" -o sum -n 10 -w 3 -c 1 --csv "$results/$name.csv" "$@" \
        >"$results/$name.txt" 2>&1; then
        gs_why_failed "$results/$name.txt" "$np"
        echo nan
        return
    fi
    awk -F, 'NR == 2 { print $9 }' "$results/$name.csv"
}
# scan_seconds P IN OUT NAME: wall seconds of `gpuscan scan -i IN -O OUT` (a
# second run, the first warms the page cache), and its read + write seconds;
# nan when a run failed
scan_seconds() {
    local np=$1 in=$2 out=$3 name=$4
    gs_launch "$np" 1
    local run
    for run in warm-up timed; do
        if ! "${GS_LAUNCH[@]}" scan -i "$in" -O "$out" --resident --json "$results/$name.json" \
            >"$results/$name-$run.txt" 2>&1; then
            gs_why_failed "$results/$name-$run.txt" "$np"
            echo "nan nan 0"
            return
        fi
    done
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["seconds"], r["phases"]["read"]["max"] + r["phases"]["write"]["max"], r["input_passes"])' "$results/$name.json"
}

total=$((per_rank * ranks))
t_reduce=$(bench_time 1 "$per_rank" reduce-np1 --reduce --resident)
t_scan=$(bench_time 1 "$per_rank" scan-np1 --scan --resident)
t_dist=$(bench_time "$ranks" "$total" "scan-np$ranks" --scan --resident)
rows=("resident (on the device)|$per_rank|$t_scan|$(awk -v a="$t_reduce" -v b="$t_scan" 'BEGIN { printf "%.2f", a + b }')|$t_dist")

if [ "$files" = 1 ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/scan-bound.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    gs_launch 1 1
    # the input: any data of the type (here the prefix sums of generated data)
    if "${GS_LAUNCH[@]}" scan -g "$total" -t "$type" -O "$tmp/in.npy" >"$results/make-input.txt" 2>&1; then
        read -r s1 io1 p1 <<<"$(scan_seconds 1 "$tmp/in.npy" "$tmp/out.npy" file-np1)"
        read -r sr ior pr <<<"$(scan_seconds "$ranks" "$tmp/in.npy" "$tmp/out.npy" "file-np$ranks")"
        to_us() { awk -v s="$1" 'BEGIN { printf "%.2f", s * 1e6 }'; }
        rows+=("file 1 rank (passes $p1)|$total|$(to_us "$s1")|$(to_us "$io1")|$(to_us "$s1")")
        rows+=("file $ranks ranks (passes $pr)|$total|$(to_us "$s1")|$(to_us "$ior")|$(to_us "$sr")")
    else
        gs_why_failed "$results/make-input.txt" 1
        failed=1
    fi
fi

for t in "$t_reduce" "$t_scan" "$t_dist" "${s1:-}" "${sr:-}"; do
    [ "$t" != nan ] || failed=1
done

# the table: bound/measured is 1 at the bound (for file rows: the share of
# the run that is the file's read and the output's write); "one rank" is
# the one-rank time of the same work per rank (resident) or of the same file
{
    echo "case,elements per rank or in all,one rank us,bound us,measured us,bound/measured,one rank/measured"
    for row in "${rows[@]}"; do
        IFS='|' read -r name n one bound measured <<<"$row"
        awk -v OFS=, -v name="$name" -v n="$n" -v one="$one" -v bound="$bound" -v m="$measured" \
            'BEGIN { print name, n, one, bound, m, (m > 0 ? sprintf("%.3f", bound / m) : "nan"),
                     (m > 0 ? sprintf("%.3f", one / m) : "nan") }'
    done
} >"$results/scan_bound.csv"
echo "# scan bound: $type sum, $ranks ranks, $gpus GPU(s); times in microseconds (logs: $results)"
awk -F, '{ printf "%-28s %14s %12s %12s %12s %14s %17s\n", $1, $2, $3, $4, $5, $6, $7 }' "$results/scan_bound.csv"
exit "$failed"
