#!/bin/bash
# bind_one_gpu.sh PROGRAM ARGS...: run PROGRAM seeing one GPU only, the one
# of this task's node-local rank (modulo the GPUs visible): the binding that
# SLURM's --gpus-per-task=1 makes, made by hand so that a study can run both
# ways on any launcher. (With every GPU visible, gpuscan itself takes
# node-local rank modulo count; with one visible, it takes that one.)
set -euo pipefail
# the node-local rank, as SLURM, Open MPI, MPICH/Hydra and PALS name it
local_rank=${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${PALS_LOCAL_RANKID:-0}}}}
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=, read -ra gpus <<<"$CUDA_VISIBLE_DEVICES"
else
    mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null || true)
fi
if [ "${#gpus[@]}" -gt 0 ]; then
    export CUDA_VISIBLE_DEVICES=${gpus[local_rank % ${#gpus[@]}]}
fi
exec "$@"
