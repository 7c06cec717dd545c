#!/bin/bash
# scaling_local.sh - a strong- and weak-scaling study on this machine,
# without SLURM: `gpuscan bench` under `mpirun -np P` for P = 1 .. G, one CSV
# (RESULTS/scaling.csv) and, with gnuplot, its plots.
#
# usage: jobs/scaling_local.sh [-g G] [-s strong|weak|both] [-N STRONG_N] [-W WEAK_N]
#                              [-B shared|per-task] [-o RESULTS] [-P] [-- BENCH_ARGS...]
#   -g G        largest rank count (default: the GPUs nvidia-smi lists; without a GPU,
#               the CPU backend on up to `nproc` ranks)
#   -s STUDY    strong, weak or both (default both)
#   -N COUNT    global elements of the strong study (default 4Gi = 2^32 on GPUs, 64Mi on CPUs)
#   -W COUNT    elements per rank of the weak study (default 2Gi = 2^31 on GPUs, 16Mi on CPUs)
#   -B BINDING  shared: each rank sees every GPU (gpuscan binds node-local rank modulo
#               count); per-task: each rank sees only its own GPU (default shared)
#   -o RESULTS  results folder (default scaling-local)
#   -P          no plots
#   BENCH_ARGS  passed to `gpuscan bench` (default: -t f32 -o sum -n 20 -w 5 -c 1)
# Environment: GPUSCAN (default ./gpuscan), MPIRUN (default mpirun), MPIRUN_ARGS.
# On the CPU backend OMP_NUM_THREADS defaults to 1, so P ranks use P cores.
set -euo pipefail
jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=scaling_lib.sh
source "$jobs_dir/scaling_lib.sh"

usage() {
    sed -n '5,19s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    exit "$1"
}

max_ranks='' study=both strong_n='' weak_n='' results=scaling-local plot=1
GPU_BINDING=shared
while getopts 'g:s:N:W:B:o:Ph' opt; do
    case $opt in
        g) max_ranks=$OPTARG ;;
        s) study=$OPTARG ;;
        N) strong_n=$OPTARG ;;
        W) weak_n=$OPTARG ;;
        B) GPU_BINDING=$OPTARG ;;
        o) results=$OPTARG ;;
        P) plot=0 ;;
        h) usage 0 ;;
        *) usage 2 >&2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" != -- ] || shift
bench_args=("$@")
[ "${#bench_args[@]}" -gt 0 ] || bench_args=(-t f32 -o sum -n 20 -w 5 -c 1)

case $study in
    both) studies="strong weak" ;;
    strong | weak) studies=$study ;;
    *) usage 2 >&2 ;;
esac
export GPUSCAN=${GPUSCAN:-./gpuscan} LAUNCHER=local GPU_BINDING
if [ ! -x "$GPUSCAN" ]; then
    echo "scaling_local.sh: $GPUSCAN is not the gpuscan binary (set GPUSCAN, or run from the build folder)" >&2
    exit 2
fi
gs_allow_root

gpus=$(gs_gpu_count)
if [ "$gpus" -gt 0 ]; then
    backend=cuda
    max_ranks=${max_ranks:-$gpus}
    strong_n=${strong_n:-4Gi} weak_n=${weak_n:-2Gi}
else
    backend=cpu
    max_ranks=${max_ranks:-$(nproc)}
    strong_n=${strong_n:-64Mi} weak_n=${weak_n:-16Mi}
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fi
case $max_ranks in
    '' | *[!0-9]* | 0) usage 2 >&2 ;;
esac

points=
for ((ranks = 1; ranks <= max_ranks; ranks++)); do points+=" $ranks:1"; done
echo "gpuscan scaling on $(hostname): backend $backend, 1..$max_ranks rank(s), $study scaling," \
    "strong $strong_n elements, weak $weak_n per rank; results in $results"
status=0
gs_run_study "$results" "$studies" "$strong_n" "$weak_n" "$points" -- \
    --backend "$backend" "${bench_args[@]}" || status=$?
if [ "$plot" -eq 1 ] && [ -s "$results/scaling.csv" ]; then gs_plot "$results"; fi
exit "$status"
