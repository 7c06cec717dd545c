#!/bin/sh
# cli_jobs.sh - the job scripts where no SLURM is: the batch scripts run as
# SLURM runs them, a copy in a spool folder with SLURM_* set, find jobs/ and
# the build from the submit folder or the variables, or say what to set; the
# local runner says why a run failed; as root the scripts say that they let
# mpirun run as root.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

jobs=${GS_SRCDIR:-.}/jobs
spool=$gs_tmp/spool
elsewhere=$gs_tmp/elsewhere
mkdir "$spool" "$elsewhere"

# spooled SCRIPT SUBMIT_DIR VAR=VALUE...: SCRIPT as SLURM runs it: copied to
# the spool folder under SLURM's name for it, run from SUBMIT_DIR, with
# SLURM_SUBMIT_DIR and SLURM_JOB_ID set, no GPU on the node, and the
# variables given; output in $gs_tmp/stdout and stderr, status in gs_rc.
spooled() {
    cp "$jobs/$1" "$spool/slurm_script"
    sp_dir=$2
    shift 2
    (cd "$sp_dir" && env SLURM_SUBMIT_DIR="$sp_dir" SLURM_JOB_ID=42 SLURM_GPUS_ON_NODE=0 "$@" \
        timeout -k 10 "$GS_TEST_TIMEOUT" bash "$spool/slurm_script") >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"
    gs_rc=$?
}

# expect_stage DESC RC PATTERN: the last spooled run exited RC with PATTERN
# on stderr.
expect_stage() {
    if [ "$gs_rc" -eq "$2" ] && grep -Eq -e "$3" "$gs_tmp/stderr"; then
        gs_pass "$1"
    else
        gs_fail "$1" "exit $gs_rc (expected $2), stderr does not match /$3/ or does:"
        gs_stderr_tail
    fi
}

# past the search: the script found jobs/ and gpuscan and stops at the node's
# missing GPU (SLURM_GPUS_ON_NODE=0), the first thing it checks after them
no_gpu='no GPU on .*gpus-per-node'
for script in scaling_node.sbatch scaling_nodes.sbatch; do
    spooled "$script" "$GS_BUILDDIR"
    expect_stage "$script spooled, submitted from the build folder: finds jobs/ and gpuscan" 1 "$no_gpu"
    spooled "$script" "$elsewhere" GPUSCAN_BUILD="$GS_BUILDDIR"
    expect_stage "$script spooled, submitted elsewhere with GPUSCAN_BUILD: finds jobs/ and gpuscan" 1 "$no_gpu"
    spooled "$script" "$elsewhere" GPUSCAN_JOBS="$jobs" GPUSCAN="$GS_BIN"
    expect_stage "$script spooled with GPUSCAN_JOBS and GPUSCAN: finds them" 1 "$no_gpu"
    spooled "$script" "$elsewhere"
    expect_stage "$script spooled, submitted from an unrelated folder: says to set GPUSCAN_JOBS" 2 \
        'cannot find .*jobs.*GPUSCAN_JOBS='
    spooled "$script" "$elsewhere" GPUSCAN_JOBS="$jobs"
    expect_stage "$script spooled without a build: says to set GPUSCAN_BUILD" 2 \
        'no gpuscan binary at .*GPUSCAN_BUILD='
done

# ---- the local runner: why a run failed ----------------------------------------------
# an mpirun that, as Open MPI does on a machine of one core, refuses more ranks
cat >"$gs_tmp/mpirun" <<'EOF'
#!/bin/sh
[ "$1" = -np ] || { echo "mpirun wrapper: expected -np N, got $*" >&2; exit 99; }
np=$2
shift 2
if [ "$np" -gt 1 ]; then
    echo "There are not enough slots available in the system to satisfy the $np"
    echo "slots that were requested by the application:"
    exit 1
fi
exec "$GS_MPIRUN" "$np" "$@"
EOF
chmod +x "$gs_tmp/mpirun"
export GS_MPIRUN
# an mpirun that passes the runs on to the tests' launcher
printf '#!/bin/sh\nnp=$2\nshift 2\nexec "$GS_MPIRUN" "$np" "$@"\n' >"$gs_tmp/mpirun_np"
chmod +x "$gs_tmp/mpirun_np"
# ranks_in_table FOLDER: the rank counts of FOLDER/scaling.csv's rows
ranks_in_table() { awk -F, 'NR > 1 { print $3 }' "$1/scaling.csv" | sort -nu | tr '\n' ' '; }
# first a study whose points both run; then the same study in the same
# folder, its 2-rank point failing (below)
if GPUSCAN=$GS_BIN MPIRUN=$gs_tmp/mpirun_np timeout -k 10 $((2 * GS_TEST_TIMEOUT)) \
    bash "$jobs/scaling_local.sh" -g 2 -s strong -N 4096 -P -o "$gs_tmp/local" -- --backend cpu -t i64 -n 1 -w 0 \
    >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"; then
    expect_same "scaling_local.sh -g 2: rows for 1 and 2 ranks" "$(ranks_in_table "$gs_tmp/local")" "1 2 "
else
    gs_fail "scaling_local.sh -g 2: rows for 1 and 2 ranks" "exit $?"
    gs_stderr_tail
fi
if GPUSCAN=$GS_BIN MPIRUN=$gs_tmp/mpirun timeout -k 10 $((2 * GS_TEST_TIMEOUT)) \
    bash "$jobs/scaling_local.sh" -g 2 -s strong -N 4096 -P -o "$gs_tmp/local" -- --backend cpu -t i64 -n 1 -w 0 \
    >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"; then
    gs_fail "scaling_local.sh -g 2 with 1 slot fails"
else
    gs_pass "scaling_local.sh -g 2 with 1 slot fails"
    gs_check "scaling_local.sh: the failed run's log lines on stderr" grep -q 'not enough slots available' "$gs_tmp/stderr"
    gs_check "scaling_local.sh: the failed command on stderr" grep -Eq 'the command: .*mpirun -np 2 ' "$gs_tmp/stderr"
    gs_check "scaling_local.sh: advice for too many ranks" grep -Eq 'fewer ranks.*--oversubscribe' "$gs_tmp/stderr"
    gs_check "scaling_local.sh: the 1-rank point still ran" grep -Eq 'strong +1 rank.*: ok' "$gs_tmp/stdout"
    expect_same "scaling_local.sh: the failed point is out of the table, not its earlier run's rows" \
        "$(ranks_in_table "$gs_tmp/local")" "1 "
    gs_check "scaling_local.sh: the earlier run's file of the failed point is kept" \
        test -s "$gs_tmp/local/raw/strong-np2.csv"
fi

# ---- root --------------------------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
    gs_check "scaling_local.sh as root says it lets mpirun run as root" \
        grep -q 'running as root: OMPI_ALLOW_RUN_AS_ROOT=1' "$gs_tmp/stderr"
else
    expect_same "scaling_local.sh as a user says nothing of root" "$(grep -c 'as root' "$gs_tmp/stderr")" 0
fi

# ---- scan_bound.sh: the distributed scan against its bound --------------------------
mkdir "$gs_tmp/bound-tmp"
if GPUSCAN=$GS_BIN MPIRUN=$gs_tmp/mpirun_np TMPDIR=$gs_tmp/bound-tmp timeout -k 10 $((2 * GS_TEST_TIMEOUT)) \
    bash "$jobs/scan_bound.sh" -n 100003 -r 2 -o "$gs_tmp/bound" >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"; then
    gs_pass "scan_bound.sh -n 100003 -r 2"
    # every row: a positive time in each column and both ratios; files read once
    expect_same "scan_bound.sh: a resident row and two file rows, each complete" \
        "$(awk -F, 'NR > 1 && $3 > 0 && $4 > 0 && $5 > 0 && $6 ~ /^[0-9.]+$/ && $7 ~ /^[0-9.]+$/ { print $1 }' \
            "$gs_tmp/bound/scan_bound.csv" | tr '\n' '|')" \
        "resident (on the device)|file 1 rank (passes 1)|file 2 ranks (passes 1)|"
    expect_same "scan_bound.sh: the resident bound is the one-rank reduce plus scan" \
        "$(awk -F, 'NR == 2 { print $4 }' "$gs_tmp/bound/scan_bound.csv")" \
        "$(awk -F, 'FNR == 2 { s += $9 } END { printf "%.2f", s }' "$gs_tmp/bound/reduce-np1.csv" "$gs_tmp/bound/scan-np1.csv")"
    expect_same "scan_bound.sh leaves no temporary folder" "$(find "$gs_tmp/bound-tmp" -name 'scan-bound.*' | wc -l)" 0
else
    gs_fail "scan_bound.sh -n 100003 -r 2" "exit $?"
    gs_stderr_tail
fi
# runs that fail (an unknown type): exit 1, whatever the table shows
GPUSCAN=$GS_BIN MPIRUN=$gs_tmp/mpirun_np TMPDIR=$gs_tmp/bound-tmp timeout -k 10 "$GS_TEST_TIMEOUT" \
    bash "$jobs/scan_bound.sh" -n 1000 -r 2 -t f16 -F -o "$gs_tmp/bound-bad" >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"
expect_same "scan_bound.sh whose runs fail: exit 1" "$?" 1
GPUSCAN=$GS_BIN bash "$jobs/scan_bound.sh" -r 1 >"$gs_tmp/stdout" 2>"$gs_tmp/stderr"
gs_rc=$?
expect_same "scan_bound.sh -r 1: a usage error that says why" \
    "$gs_rc:$(grep -c 'at least 2 ranks' "$gs_tmp/stderr")" "2:1"

# element counts of the scripts: suffixes, and no silent wrap past 2^63 - 1
# shellcheck source=jobs/scaling_lib.sh
expect_same "gs_elements: counts, and those beyond 2^63 - 1 refused" \
    "$(. "$jobs/scaling_lib.sh" && for c in 0 4Gi 3k 9223372036854775807 8796093022208Mi 18446744073709551617; do
        gs_elements "$c" 2>/dev/null || echo refused
    done | tr '\n' ' ')" "0 4294967296 3000 9223372036854775807 refused refused "

# the scaling table keeps the bench's exact rows a series of their own
printf '%s\n' study,kind,type,op,mode,ranks,elements,time_us,gbps_rank,gbps_total,ceiling_pct,wrong,exact \
    strong,reduce,f32,sum,resident,1,100,10,1,1,1,0,no strong,reduce,f32,sum,resident,1,100,30,1,1,1,0,yes \
    strong,reduce,f32,sum,resident,2,100,5,1,1,1,0,no strong,reduce,f32,sum,resident,2,100,15,1,1,1,0,yes \
    >"$gs_tmp/points.csv"
# shellcheck source=jobs/scaling_lib.sh
(. "$jobs/scaling_lib.sh" && gs_scaling_table "$gs_tmp/points.csv") >"$gs_tmp/table.csv"
expect_same "scaling table: exact rows are their own series, 2x on 2 ranks" \
    "$(grep -c -e '^strong,reduce-f32-sum-resident,2,.*,2.0000,1.0000$' \
               -e '^strong,reduce-f32-sum-resident-exact,2,.*,2.0000,1.0000$' "$gs_tmp/table.csv")" 2

gs_summary
