#!/bin/bash
# The main job on one machine: a global sum and a global prefix sum over
# generated f32 data on 2 MPI ranks, each checked element by element against
# an independent reference. On the GPUs when every rank has one, else on the
# CPU backend. Run from the build folder (where ./gpuscan is):
#   jobs/quickstart.sh [ELEMENTS]     (default 2Gi with GPUs, 64Mi without)
set -euo pipefail
gpuscan=${GPUSCAN:-./gpuscan}
mpirun=${MPIRUN:-mpirun}
# Open MPI refuses to run as root unless told; containers often are root
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    echo "note: running as root: OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 set" \
        "so that mpirun starts (docs/TROUBLESHOOTING.md)" >&2
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
if nvidia-smi -L >/dev/null 2>&1; then n=${1:-2Gi}; else n=${1:-64Mi}; fi
out=$(mktemp -d)/scan.npy
trap 'rm -rf "$(dirname "$out")"' EXIT
# --bind-to none: the 2 ranks split the machine's cores (the CPU backend gives
# each rank half of them, gpuscan info prints how many); Open MPI's default
# binds each rank to a single core
mpirun_args=(-np 2 --bind-to none)
"$mpirun" "${mpirun_args[@]}" "$gpuscan" info
echo
"$mpirun" "${mpirun_args[@]}" "$gpuscan" reduce -g "$n" -t f32 -o sum --verify
echo
"$mpirun" "${mpirun_args[@]}" "$gpuscan" scan -g "$n" -t f32 -o sum -O "$out" --verify
