#!/bin/sh
# cli_reports.sh - the report files of every command (--json, bench's --csv):
# never written through a link planted beside the target; a target that is
# not a regular file (FIFO, folder, symbolic link) refused and left as it
# is; the old file's permissions kept, a new file's taken from the umask;
# host names and paths escaped, so that the JSON parses whatever they hold.
# shellcheck source=tests/gs_test.sh
. "$(dirname "$0")/gs_test.sh"

be=$GS_TEST_BACKEND
# a Python that reads JSON, for the checks and for json_get
gs_python=$(gs_find_python json) || gs_python=
reports="reduce scan bench bench-csv"
[ "$be" != cuda ] || reports="$reports ladder"
mkdir "$gs_tmp/scan-out"

# with_report REPORT FILE EXPECT...: EXPECT... (expect_ok DESC NP, or
# expect_fail DESC NP RC PATTERN... --) followed by the arguments of a small
# run that writes REPORT to FILE.
with_report() {
    wr_report=$1 wr_file=$2
    shift 2
    case $wr_report in
        reduce) "$@" reduce -g 1000 -t i64 --backend "$be" --json "$wr_file" ;;
        scan) "$@" scan -g 1000 -t i64 -O "$gs_tmp/scan-out/y.npy" --backend "$be" --json "$wr_file" ;;
        bench) "$@" bench -b 1000 -n 2 -w 0 -t i64 --backend "$be" --json "$wr_file" ;;
        bench-csv) "$@" bench -b 1000 -n 2 -w 0 -t i64 --backend "$be" --csv "$wr_file" ;;
        ladder) "$@" ladder -g 64Ki -n 2 -w 1 --json "$wr_file" ;;
        *) echo "ERROR: with_report: no report '$wr_report'" >&2; exit 99 ;;
    esac
}

# valid_report REPORT FILE: FILE holds a whole report (JSON that parses, or a
# CSV with its header and a row).
# shellcheck disable=SC2317  # called through gs_check
valid_report() {
    case $1 in
        bench-csv) [ "$(sed -n '1s/,.*//p' "$2")" = backend ] && [ "$(wc -l <"$2")" -ge 2 ] ;;
        *) [ -z "$gs_python" ] || "$gs_python" -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$2" ;;
    esac
}

# holds DIR NAMES...: DIR holds exactly NAMES (sorted), hidden files included.
# shellcheck disable=SC2317  # called through gs_check
holds() {
    holds_dir=$1
    shift
    [ "$(ls -A "$holds_dir")" = "$(printf '%s\n' "$@")" ]
}

# mode_of FILE: its permissions as ls prints them, "-rw-r-----".
mode_of() {
    # shellcheck disable=SC2012  # the mode column, not names
    ls -ld "$1" | cut -c1-10
}

# plain_file FILE: a regular file, not a link to one.
# shellcheck disable=SC2317  # called through gs_check
plain_file() {
    [ -f "$1" ] && [ ! -L "$1" ]
}

# ---- a link planted at a predictable temporary name is not followed -----------------
# A writer whose temporary is PATH.tmp.<pid> (as gpuscan's once was) opens a
# link planted there and writes through it. Links at every pid that the next
# few thousand processes can get make sure that such a writer meets one.

# planted_intact DIR: DIR holds the report r.out and the 3000 links to the
# victim, nothing else.
# shellcheck disable=SC2317  # called through gs_check
planted_intact() {
    # shellcheck disable=SC2012  # counts names, which are ours
    [ "$(find "$1" -type l -lname "$gs_tmp/victim" | wc -l)" -eq 3000 ] &&
        [ "$(ls -A "$1" | wc -l)" -eq 3001 ] && plain_file "$1/r.out"
}

if [ -n "$gs_python" ]; then
    for report in $reports; do
        dir=$gs_tmp/planted-$report
        mkdir "$dir"
        echo precious >"$gs_tmp/victim"
        "$gs_python" -c 'import os, sys
d, victim = sys.argv[1], sys.argv[2]
try:
    top = int(open("/proc/sys/kernel/pid_max").read())
except OSError:
    top = 1 << 22
for i in range(1, 3001):
    pid = os.getpid() + i
    if pid >= top:
        pid = pid - top + 300   # pids wrap around to 300
    os.symlink(victim, os.path.join(d, "r.out.tmp.%d" % pid))' "$dir" "$gs_tmp/victim"
        with_report "$report" "$dir/r.out" expect_ok "$report: a report beside 3000 planted links" 1
        gs_check "$report: the planted links' target is untouched" \
            [ "$(cat "$gs_tmp/victim")" = precious ]
        gs_check "$report: the report is a regular file, not a link" plain_file "$dir/r.out"
        gs_check "$report: the report is valid" valid_report "$report" "$dir/r.out"
        gs_check "$report: the 3000 links are still there, and nothing else" planted_intact "$dir"
    done
else
    gs_skip "planted links at the old temporary name (no python3)"
fi

# ---- targets that are not regular files are refused and left as they are -----------
for report in $reports; do
    dir=$gs_tmp/special-$report
    mkdir "$dir"
    mkfifo "$dir/fifo"
    for np in 1 2; do
        with_report "$report" "$dir/fifo" expect_fail "$report: a FIFO as the report is refused [$np rank(s)]" \
            "$np" 1 '/fifo: cannot write' 'a FIFO, not a regular file' --
        gs_check "$report: the FIFO is still a FIFO [$np rank(s)]" [ -p "$dir/fifo" ]
        gs_check "$report: no temporary left beside the FIFO [$np rank(s)]" holds "$dir" fifo
    done
    mkdir "$dir/folder"
    with_report "$report" "$dir/folder" expect_fail "$report: a folder as the report is refused" \
        1 1 '/folder: cannot write' 'a folder, not a regular file' --
    gs_check "$report: the folder is still an empty folder" holds "$dir/folder"
    echo precious >"$dir/target"
    ln -s target "$dir/link"
    with_report "$report" "$dir/link" expect_fail "$report: a symbolic link as the report is refused" \
        1 1 '/link: cannot write' 'a symbolic link, not a regular file' --
    gs_check "$report: the link is still a link" [ -L "$dir/link" ]
    expect_same "$report: the file it links to is unchanged" "$(cat "$dir/target")" precious
    gs_check "$report: nothing left but the FIFO, the folder, the link and its file" \
        holds "$dir" fifo folder link target
done

# ---- permissions: the old file's, or a new file's --------------------------------------
saved_umask=$(umask)
for report in $reports; do
    dir=$gs_tmp/mode-$report
    mkdir "$dir"
    echo old >"$dir/old"
    chmod 600 "$dir/old"
    if with_report "$report" "$dir/old" expect_ok "$report: replacing a report of mode 600" 1; then
        gs_check "$report: the new report is valid" valid_report "$report" "$dir/old"
        expect_same "$report: the replaced report keeps mode 600" "$(mode_of "$dir/old")" -rw-------
    fi
    umask 027
    if with_report "$report" "$dir/new" expect_ok "$report: a new report under umask 027" 1; then
        expect_same "$report: a new report gets 0666 less the umask" "$(mode_of "$dir/new")" -rw-r-----
    fi
    umask "$saved_umask"
    gs_check "$report: no temporary left" holds "$dir" new old
done

# ---- strings from outside are escaped ----------------------------------------------------
# a path with a quote, a backslash and a tab: the scan's "output"
odd=$gs_tmp/scan-out/'we"ird\out	put.npy'
for np in 1 2; do
    if expect_ok "scan -O PATH with a quote, a backslash and a tab [$np rank(s)]" "$np" \
        scan -g 1000 -t i32 -O "$odd" --backend "$be" --json "$gs_tmp/odd.json" &&
        [ -n "$gs_python" ]; then
        gs_check "scan --json: \"output\" is the path, escaped [$np rank(s)]" "$gs_python" -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["output"] == sys.argv[2], (d["output"], sys.argv[2])' "$gs_tmp/odd.json" "$odd"
    fi
done

# a host name with a quote, a backslash, a tab, a control character and a
# byte that is not UTF-8: each rank runs in a UTS namespace of its own (in a
# user namespace too where only that gives the right to name it)
cat >"$gs_tmp/sethost.py" <<'EOF'
import os, socket, sys
socket.sethostname(b'we"ird\\host\t\x01\xff')
os.execv(sys.argv[1], sys.argv[1:])
EOF
cat >"$gs_tmp/odd-host" <<'EOF'
#!/bin/sh
# GS_UNSHARE_USER is one option or none: unquoted on purpose
exec unshare --uts $GS_UNSHARE_USER "$GS_PYTHON" "$GS_SETHOST" "$GS_REAL_BIN" "$@"
EOF
chmod +x "$gs_tmp/odd-host"
GS_REAL_BIN=$GS_BIN GS_PYTHON=$gs_python GS_SETHOST=$gs_tmp/sethost.py
export GS_REAL_BIN GS_PYTHON GS_SETHOST
odd_host=
if [ -z "$gs_python" ]; then
    gs_skip "JSON of an odd host name (no python3)"
elif unshare --uts true 2>/dev/null; then
    GS_UNSHARE_USER=
    odd_host=yes
elif unshare --uts --map-root-user true 2>/dev/null; then
    GS_UNSHARE_USER=--map-root-user
    odd_host=yes
else
    gs_skip "JSON of an odd host name (unshare --uts is not allowed here)"
fi
export GS_UNSHARE_USER
for report in $reports; do
    if [ -z "$odd_host" ] || [ "$report" = bench-csv ]; then
        continue
    fi
    for np in 1 2; do
        dir=$gs_tmp/host-$report-$np
        mkdir "$dir"
        GS_BIN=$gs_tmp/odd-host
        with_report "$report" "$dir/r.json" expect_ok "$report --json on an odd host [$np rank(s)]" "$np"
        GS_BIN=$GS_REAL_BIN
        [ -f "$dir/r.json" ] || continue
        gs_check "$report --json on an odd host: valid JSON [$np rank(s)]" "$gs_python" -c \
            'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$dir/r.json"
        [ "$report" != ladder ] || continue   # the ladder reports one device, not the hosts
        gs_check "$report --json on an odd host: every rank's host, escaped [$np rank(s)]" "$gs_python" -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
hosts = [r["host"] for r in d["devices"]]
assert hosts == ["we\"ird\\host\t\x01\ufffd"] * int(sys.argv[2]), hosts' "$dir/r.json" "$np"
    done
done

# ---- failures with --json: the JSON error object -------------------------------------
# {"error": MESSAGE, "status": STATUS} on rank 0, on stdout for "-", else in
# the file, written whole as reports are; the exit status stays 1
mkdir "$gs_tmp/failed-out"
for np in 1 2; do
    for cmd in reduce scan; do
        outarg=
        [ "$cmd" = reduce ] || outarg="-O $gs_tmp/failed-out/never.npy"
        for dest in - "$gs_tmp/err-$cmd-$np.json"; do
            # shellcheck disable=SC2086
            expect_fail "$cmd of a missing file --json $dest [$np rank(s)]" "$np" 1 'missing\.npy' -- \
                $cmd -i "$gs_tmp/missing.npy" $outarg --backend "$be" --json "$dest" || continue
            file=$dest
            [ "$dest" != - ] || file=$gs_tmp/stdout
            gs_check "$cmd --json $dest failing: one JSON error object [$np rank(s)]" [ "$(wc -l <"$file")" -eq 1 ]
            expect_same "$cmd --json $dest failing: its status [$np rank(s)]" "$(json_get "$file" status)" '"GS_ERR_IO"'
            gs_check "$cmd --json $dest failing: its error names the file [$np rank(s)]" \
                grep -q '"error": "rank [0-9]*: .*missing\.npy' "$file"
            [ -z "$gs_python" ] || gs_check "$cmd --json $dest failing: the keys are error and status [$np rank(s)]" \
                "$gs_python" -c 'import json, sys; assert sorted(json.load(open(sys.argv[1]))) == ["error", "status"]' "$file"
        done
    done
done
expect_fail "reduce -o min of nothing --json -" 1 1 'empty' -- reduce -g 0 -o min --backend "$be" --json -
expect_same "reduce -o min of nothing --json -: status GS_ERR_EMPTY" "$(json_get "$gs_tmp/stdout" status)" '"GS_ERR_EMPTY"'
expect_empty_dir "failed scans with --json left no output" "$gs_tmp/failed-out"

gs_summary
