# scaling_lib.sh - what the scaling scripts share, sourced by scaling_local.sh,
# scaling_node.sbatch and scaling_nodes.sbatch: element counts, launchers,
# one `gpuscan bench` point per rank count, and the scaling table.
# shellcheck shell=bash
#
# Settings read from the environment (the scripts set their defaults):
#   GPUSCAN      the gpuscan binary
#   LAUNCHER     local (mpirun -np P), srun (srun --mpi=pmix) or mpirun (inside
#                a SLURM allocation, ranks spread evenly over the nodes)
#   GPU_BINDING  shared: every rank sees all GPUs of its node and gpuscan takes
#                node-local rank modulo their count; per-task: each rank sees
#                only its own GPU (bind_one_gpu.sh), as SLURM's --gpus-per-task
#                leaves it. gpuscan works either way; this lets a study show it.
#   MPIRUN       the mpirun command (LAUNCHER local or mpirun)
#   MPIRUN_ARGS, SRUN_ARGS  extra launcher options, split on spaces
#   GPUS_PER_TASK, GPU_BIND  srun's --gpus-per-task and --gpu-bind for every
#                run (LAUNCHER srun; unset: SLURM's defaults), e.g.
#                GPUS_PER_TASK=1 GPU_BIND=closest
#
# The results folder gets:
#   logs/STUDY-npP.txt  what each bench run printed
#   raw/STUDY-npP.csv   each bench run's --csv
#   points.csv          every row of every run, with the study in front
#   scaling.csv         one row per (study, series, ranks) with speedup and
#                       parallel efficiency (gs_scaling_table below)

GS_JOBS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# gs_elements COUNT: COUNT (digits with an optional k M G T, powers of 10, or
# Ki Mi Gi Ti, powers of 2: gpuscan's suffixes) as a plain integer.
gs_elements() {
    local digits=${1%%[!0-9]*}
    local suffix=${1#"$digits"}
    if [ -z "$digits" ]; then
        echo "not an element count: '$1'" >&2
        return 1
    fi
    local scale
    case $suffix in
        '') scale=1 ;;
        k | K) scale=1000 ;;
        M) scale=1000000 ;;
        G) scale=1000000000 ;;
        T) scale=1000000000000 ;;
        Ki) scale=$((1 << 10)) ;;
        Mi) scale=$((1 << 20)) ;;
        Gi) scale=$((1 << 30)) ;;
        Ti) scale=$((1 << 40)) ;;
        *)
            echo "not an element count: '$1' (suffixes k M G T Ki Mi Gi Ti)" >&2
            return 1
            ;;
    esac
    # bash's arithmetic wraps at 2^63: refuse what does not fit
    digits=${digits#"${digits%%[!0]*}"}
    if [ "${#digits}" -gt 19 ] || { [ -n "$digits" ] && [ $((10#$digits)) -lt 0 ]; } ||
        { [ -n "$digits" ] && [ $((10#$digits)) -gt $((0x7fffffffffffffff / scale)) ]; }; then
        echo "not an element count: '$1' (beyond 2^63 - 1)" >&2
        return 1
    fi
    echo $((10#${digits:-0} * scale))
}

# gs_gpu_count: the GPUs nvidia-smi lists here (0 without a driver).
gs_gpu_count() {
    local listed
    listed=$(nvidia-smi -L 2>/dev/null) || listed=
    grep -c '^GPU ' <<<"$listed" || true
}

# gs_slurm_gpus_per_node: GPUs SLURM gave this job on each node, else the
# GPUs visible here.
gs_slurm_gpus_per_node() {
    # SLURM_GPUS_PER_NODE may carry a type: "h100:4"
    local n=${SLURM_GPUS_ON_NODE:-${SLURM_GPUS_PER_NODE##*:}}
    case $n in
        '' | *[!0-9]*) gs_gpu_count ;;
        *) echo "$n" ;;
    esac
}

# gs_launch RANKS NODES: GS_LAUNCH becomes the command that starts gpuscan on
# RANKS ranks spread evenly over NODES nodes.
gs_launch() {
    local ranks=$1 nodes=$2
    local per_node=$(((ranks + nodes - 1) / nodes))
    local -a extra
    case ${LAUNCHER:-local} in
        local)
            read -ra extra <<<"${MPIRUN_ARGS:-}"
            GS_LAUNCH=("${MPIRUN:-mpirun}" -np "$ranks" ${extra[@]+"${extra[@]}"})
            ;;
        mpirun)
            read -ra extra <<<"${MPIRUN_ARGS:-}"
            GS_LAUNCH=("${MPIRUN:-mpirun}" -np "$ranks" --map-by "ppr:$per_node:node" ${extra[@]+"${extra[@]}"})
            ;;
        srun)
            read -ra extra <<<"${SRUN_ARGS:-}"
            # srun does not pass the job's --cpus-per-task on to its steps (SLURM >= 22.05)
            GS_LAUNCH=(srun --mpi=pmix --nodes="$nodes" --ntasks="$ranks" --ntasks-per-node="$per_node"
                --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}" --kill-on-bad-exit=1)
            [ -z "${GPUS_PER_TASK:-}" ] || GS_LAUNCH+=(--gpus-per-task="$GPUS_PER_TASK")
            [ -z "${GPU_BIND:-}" ] || GS_LAUNCH+=(--gpu-bind="$GPU_BIND")
            GS_LAUNCH+=(${extra[@]+"${extra[@]}"})
            ;;
        *)
            echo "LAUNCHER=$LAUNCHER: use local, srun or mpirun" >&2
            return 1
            ;;
    esac
    case ${GPU_BINDING:-shared} in
        shared) ;;
        per-task) GS_LAUNCH+=("$GS_JOBS_DIR/bind_one_gpu.sh") ;;
        *)
            echo "GPU_BINDING=$GPU_BINDING: use shared or per-task" >&2
            return 1
            ;;
    esac
    GS_LAUNCH+=("${GPUSCAN:?GPUSCAN is not set}")
}

# gs_bench_point OUT STUDY RANKS NODES ELEMENTS BENCH_ARGS...: one
# `gpuscan bench` of ELEMENTS global elements on RANKS ranks; its rows are
# appended to OUT/points.csv. Returns the bench's exit status. The bench
# writes its CSV beside the point's raw file, which it replaces only when
# it wrote one: a run that fails before it writes leaves an earlier study's
# file of that point as it was, and out of this study's table.
gs_bench_point() {
    local out=$1 study=$2 ranks=$3 nodes=$4 elements=$5
    shift 5
    local raw=$out/raw/$study-np$ranks.csv log=$out/logs/$study-np$ranks.txt
    mkdir -p "$out/raw" "$out/logs"
    rm -f "$raw.new"
    gs_launch "$ranks" "$nodes" || return
    local status=0
    "${GS_LAUNCH[@]}" bench -b "$elements" -e "$elements" "$@" --csv "$raw.new" >"$log" 2>&1 || status=$?
    if [ -s "$raw.new" ] && mv -f "$raw.new" "$raw"; then
        [ -s "$out/points.csv" ] || sed -n '1s/^/study,/p' "$raw" >"$out/points.csv"
        sed -n "2,\$s/^/$study,/p" "$raw" >>"$out/points.csv"
    fi
    printf '%-6s %4d rank(s) on %d node(s), %s elements: %s (%s)\n' "$study" "$ranks" "$nodes" \
        "$elements" "$([ "$status" -eq 0 ] && echo ok || echo "FAILED, exit $status")" "$log"
    [ "$status" -eq 0 ] || gs_why_failed "$log" "$ranks"
    return "$status"
}

# gs_why_failed LOG RANKS: why a run failed, on stderr (the error is in the
# log, not on the terminal): the log's error lines (gpuscan's, and the
# launcher's first words on what it refused), else its last lines; and advice
# for too many ranks.
gs_why_failed() {
    echo "  the command: ${GS_LAUNCH[*]} bench ..." >&2
    { grep -Ei -m 6 'error|not enough slots|refus|abort' "$1" ||
        grep -v '^[[:space:]]*$' "$1" | tail -n 6; } | sed 's/^/  | /' >&2
    if grep -q 'not enough slots' "$1"; then
        echo "  $2 rank(s) are more than this machine's slots (its cores): ask for fewer ranks," \
            "or let ranks share cores with MPIRUN_ARGS=--oversubscribe (slower, fine for tests)" >&2
    fi
}

# gs_allow_root: Open MPI's mpirun refuses to run as root unless told to;
# containers and cloud shells often run as root. Says so when it tells it.
gs_allow_root() {
    [ "$(id -u)" -eq 0 ] || return 0
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    echo "note: running as root: OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 set" \
        "so that mpirun starts (docs/TROUBLESHOOTING.md)" >&2
}

# gs_find_gpuscan BUILD WHO: GPUSCAN, else BUILD/gpuscan, exported as
# GPUSCAN; WHO (the script) and what to set in the error when neither is a
# gpuscan binary.
gs_find_gpuscan() {
    GPUSCAN=${GPUSCAN:-$1/gpuscan}
    if [ ! -x "$GPUSCAN" ] || [ -d "$GPUSCAN" ]; then
        echo "$2: no gpuscan binary at $GPUSCAN: submit from the build folder, or set" \
            "GPUSCAN_BUILD=/path/to/build (or GPUSCAN=/path/to/gpuscan)" >&2
        return 2
    fi
    export GPUSCAN
}

# gs_run_study OUT STUDIES STRONG_N WEAK_N POINTS -- BENCH_ARGS...
#   STUDIES   "strong", "weak" or "strong weak"
#   STRONG_N  global elements of every strong-scaling point
#   WEAK_N    elements per rank of the weak-scaling points
#   POINTS    "RANKS:NODES ..." in increasing order; the first is the base
# Runs every point, goes on past a failed one, then writes OUT/scaling.csv.
# Returns 1 when any point failed.
gs_run_study() {
    local out=$1 studies=$2 strong=$3 weak=$4 points=$5
    shift 5
    [ "${1:-}" != -- ] || shift
    strong=$(gs_elements "$strong") || return
    weak=$(gs_elements "$weak") || return
    mkdir -p "$out"
    rm -f "$out/points.csv"
    local failed=0 study point ranks nodes elements
    for study in $studies; do
        for point in $points; do
            ranks=${point%%:*} nodes=${point#*:}
            case $study in
                strong) elements=$strong ;;
                weak) elements=$((weak * ranks)) ;;
                *)
                    echo "unknown study '$study' (strong, weak)" >&2
                    return 1
                    ;;
            esac
            gs_bench_point "$out" "$study" "$ranks" "$nodes" "$elements" "$@" || failed=1
        done
    done
    if [ -s "$out/points.csv" ]; then
        gs_scaling_table "$out/points.csv" >"$out/scaling.csv"
        echo "scaling table: $out/scaling.csv"
        column -t -s, "$out/scaling.csv" 2>/dev/null || cat "$out/scaling.csv"
    fi
    return "$failed"
}

# gs_scaling_table POINTS_CSV: one row per (study, series, ranks), series
# being kind-type-op-mode (and -exact for the bench's exact rows), sorted, with
#   strong: efficiency = P0 T0 / (P T)    weak: efficiency = T0 / T
#   speedup = P x efficiency (ideal: P)
# where P0, T0 are the series' smallest rank count and its median time.
gs_scaling_table() {
    echo "study,series,ranks,elements,time_us,gbps_rank,gbps_total,ceiling_pct,wrong,speedup,efficiency"
    awk -F, -v OFS=, '
        FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        function series() {
            return $col["kind"] "-" $col["type"] "-" $col["op"] "-" $col["mode"] \
                   (("exact" in col) && $col["exact"] == "yes" ? "-exact" : "")
        }
        NR == FNR {
            key = $col["study"] SUBSEP series()
            if (!(key in p0) || $col["ranks"] + 0 < p0[key]) { p0[key] = $col["ranks"] + 0; t0[key] = $col["time_us"] }
            next
        }
        {
            key = $col["study"] SUBSEP series()
            p = $col["ranks"]; t = $col["time_us"]
            eff = t > 0 ? ($col["study"] == "strong" ? p0[key] * t0[key] / (p * t) : t0[key] / t) : 0
            print $col["study"], series(), p, $col["elements"], t, $col["gbps_rank"], $col["gbps_total"],
                  $col["ceiling_pct"], $col["wrong"], sprintf("%.4f", p * eff), sprintf("%.4f", eff)
        }' "$1" "$1" | sort -t, -k1,1 -k2,2 -k3,3n
}

# gs_plot OUT: OUT/scaling-{strong,weak}.{png,svg} from OUT/scaling.csv, when
# gnuplot is installed.
gs_plot() {
    if ! command -v gnuplot >/dev/null; then
        echo "gnuplot not found: no plots (jobs/plot_scaling.gp makes them from $1/scaling.csv)"
        return 0
    fi
    gnuplot -e "csv='$1/scaling.csv'; out='$1/scaling'" "$GS_JOBS_DIR/plot_scaling.gp"
}
