#!/usr/bin/env python3
"""exact_check.py - the independent reference of --exact (issue 13), in
plain Python: exact sums in big fixed point (Python integers in units of
2^-1074; self-checked against fractions.Fraction), rounded once to
nearest, ties to even, into f64 or f32 by the code below (not by the
library's gs_exact.h), compared bit for bit with gpuscan's results.

  exact_check.py gen DIR SEED     write the test arrays DIR/<name>_<type>_<n>.npy
  exact_check.py check MANIFEST   judge the runs listed there; PASS:/FAIL: lines
  exact_check.py fuzz DIR SECONDS SEED MAXN BACKEND LAUNCHER GPUSCAN
                                  random cases until SECONDS have passed (below)

Manifest lines (tab-separated): scan INPUT OUTPUT inclusive|exclusive DESC,
or reduce INPUT JSON-FILE - DESC.
"""
import json
import math
import os
import random
import struct
import subprocess
import sys
import time
from fractions import Fraction

FORMATS = {"f32": ("<f4", "f", 4, 24, -149, 128), "f64": ("<f8", "d", 8, 53, -1074, 1024)}
SIZES = [0, 1, 2, 31, 997, 65537]
MAX_CHUNKS = 256    # chunks a fuzz run reads at most
RUN_TIMEOUT = 300   # seconds a fuzz run may take


# Exact values are integers in units of 2^-SCALE: every f32 and f64 value is
# one (big fixed point, Python's unbounded integers).
SCALE = 1074


def to_units(x):
    num, den = x.as_integer_ratio()    # den: a power of two, at most 2^1074
    return num * ((1 << SCALE) // den)


def round_to(units, t):
    """The float of type t nearest units * 2^-SCALE (ties to even), with
    overflow to +-inf as IEEE 754 says, as a Python float (f32 values are
    exact in a double). Special values are the caller's."""
    _, _, _, prec, qmin, emax = FORMATS[t]
    if units == 0:
        return 0.0
    sign = -1.0 if units < 0 else 1.0
    a = abs(units)
    e = a.bit_length() - 1 - SCALE           # 2^e <= value < 2^(e+1)
    q = max(e - (prec - 1), qmin)            # the exponent of the last kept bit
    shift = q + SCALE                        # >= 0: qmin >= -SCALE
    m, rem = a >> shift, a & ((1 << shift) - 1)
    half = 1 << (shift - 1) if shift else 1  # shift 0: rem is 0, never above
    if rem > half or (rem == half and shift and m % 2 == 1):
        m += 1
    if m.bit_length() + q > emax:            # m * 2^q >= 2^emax
        return sign * math.inf
    return sign * math.ldexp(m, q)


class Exact:
    """A running exact sum with the special-value rules of --exact."""

    def __init__(self):
        self.value = 0
        self.nan = self.pos = self.neg = False

    def add(self, x):
        if math.isnan(x):
            self.nan = True
        elif math.isinf(x):
            if x > 0:
                self.pos = True
            else:
                self.neg = True
        else:
            self.value += to_units(x)

    def rounded(self, t):
        if self.nan or (self.pos and self.neg):
            return math.nan
        if self.pos:
            return math.inf
        if self.neg:
            return -math.inf
        return round_to(self.value, t)


def same(got, ref, t):
    if math.isnan(ref):
        return math.isnan(got)
    code = FORMATS[t][1]
    return struct.pack("<" + code, got) == struct.pack("<" + code, ref)


def write_npy(path, t, values):
    descr, code, _, _, _, _ = FORMATS[t]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    major = data[6]
    hlen = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = (10 if major == 1 else 12) + hlen
    header = data[(10 if major == 1 else 12):start].decode("latin1")
    t = "f32" if "f4" in header else "f64"
    code, size = FORMATS[t][1], FORMATS[t][2]
    n = (len(data) - start) // size
    return t, list(struct.unpack("<%d%s" % (n, code), data[start:start + n * size]))


def finite_random(rng, t):
    """Any finite value of type t: random bits, NaN and inf excluded."""
    while True:
        if t == "f64":
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        else:
            x = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
        if math.isfinite(x):
            return x


def to_type(x, t):
    return struct.unpack("<f", struct.pack("<f", x))[0] if t == "f32" else x


FAMILIES = ("uniform", "normal", "range", "subnormal", "cancel", "overflow", "ties", "tinyties", "special")


def dataset(rng, t, n, name):
    """One data family of the issue's test list, n values of type t."""
    big = 3.0e38 if t == "f32" else 1.7e308
    tiny = 2.0 ** FORMATS[t][4]
    prec = FORMATS[t][3]
    if name == "uniform":
        xs = [rng.uniform(0, 1) for _ in range(n)]
    elif name == "normal":
        xs = [rng.gauss(0, 1) for _ in range(n)]
    elif name == "range":
        xs = [finite_random(rng, t) for _ in range(n)]
    elif name == "subnormal":
        xs = [rng.choice([-1, 1]) * rng.randint(0, 2 ** (prec - 1) - 1) * tiny for _ in range(n)]
    elif name == "cancel":   # huge values that cancel, hiding small ones
        xs = [big if i % 4 == 0 else -big if i % 4 == 2 else rng.uniform(-1, 1) * 2.0 ** rng.randint(-60, 10)
              for i in range(n)]
    elif name == "overflow":   # sums that leave the range
        xs = [big * rng.choice([1, 1, -1]) for _ in range(n)]
    elif name == "ties":   # exact halves
        xs = [rng.choice([1.0, 2.0 ** -prec, -(2.0 ** -prec), 3.0 * 2.0 ** -prec]) for _ in range(n)]
    elif name == "tinyties":   # prefixes 1 + k/2 ulp: ties, decided by the least subnormals beside them
        xs = [1.0 if i == 0 else rng.choice([2.0 ** -prec, -(2.0 ** -prec), tiny, -tiny]) for i in range(n)]
    else:   # special values among uniform ones (n >= 1)
        xs = [rng.uniform(-1, 1) for _ in range(n)]
        kinds = [[math.nan], [math.inf], [-math.inf], [math.inf, -math.inf], [math.inf, math.inf]]
        for x in kinds[n % len(kinds)]:
            xs[rng.randrange(n)] = x
    return [to_type(x, t) for x in xs]


def datasets(rng, t, n):
    """name -> values: every family (special values only where n >= 1)."""
    return {name: dataset(rng, t, n, name) for name in FAMILIES if name != "special" or n >= 1}


def self_check(rng):
    """The rounding against Python's own correctly rounded float(Fraction)
    for f64, and against the definition for f32 (nearest of the two
    neighbours, ties to the even significand) on random exact values."""
    for _ in range(2000):
        xs = [finite_random(rng, "f64") * rng.choice([1, 2.0 ** -rng.randint(0, 1100)]) for _ in range(3)]
        units = sum(to_units(x) for x in xs)
        exact = Fraction(units, 1 << SCALE)
        try:
            want = float(exact)
        except OverflowError:
            want = math.inf if exact > 0 else -math.inf
        assert same(round_to(units, "f64"), want, "f64"), (xs, round_to(units, "f64"), want)
        got32 = round_to(units, "f32")
        if math.isfinite(got32) and got32 != 0:
            lo = struct.unpack("<f", struct.pack("<f", got32))[0]
            assert lo == got32
            for step in (-1, 1):   # no neighbour is nearer
                bits = struct.unpack("<i", struct.pack("<f", abs(got32)))[0] + step
                other = math.copysign(struct.unpack("<f", struct.pack("<i", bits))[0], got32)
                if math.isfinite(other):
                    d0, d1 = abs(Fraction(got32) - exact), abs(Fraction(other) - exact)
                    assert d0 < d1 or (d0 == d1 and (struct.unpack("<I", struct.pack("<f", abs(got32)))[0] & 1) == 0)


def gen(folder, seed):
    rng = random.Random(seed)
    self_check(rng)
    for t in FORMATS:
        for n in SIZES:
            for name, values in datasets(rng, t, n).items():
                write_npy("%s/%s_%s_%d.npy" % (folder, name, t, n), t, values)


def judge_reduce(xs, got):
    """None when got (a float, or the JSON's "nan"/"inf"/"-inf") is the exact
    sum of xs rounded to f64, else what differs."""
    acc = Exact()
    for x in xs:
        acc.add(x)
    got, ref = float(got), acc.rounded("f64")
    return None if same(got, ref, "f64") else "got %r, want %r" % (got, ref)


def judge_scan(xs, t, kind, ot, ys):
    """None when ys (of type ot) is the exact scan of xs (type t), else what differs."""
    acc = Exact()
    for i, x in enumerate(xs):
        if kind == "exclusive":
            ref = acc.rounded(t)
        acc.add(x)
        if kind == "inclusive":
            ref = acc.rounded(t)
        if i >= len(ys) or not same(ys[i], ref, t):
            return "first wrong element %d of %d: got %r, want %r" % (i, len(xs), ys[i] if i < len(ys) else None, ref)
    return None if len(ys) == len(xs) and ot == t else "length or type"


def check(manifest):
    failed = 0
    cache = {}
    for line in open(manifest):
        what, inp, out, kind, desc = line.rstrip("\n").split("\t")
        if inp not in cache:
            cache.clear()
            cache[inp] = read_npy(inp)
        t, xs = cache[inp]
        if what == "reduce":
            wrong = judge_reduce(xs, json.load(open(out))["result"])
        else:
            ot, ys = read_npy(out)
            wrong = judge_scan(xs, t, kind, ot, ys)
        if wrong is None:
            print("PASS: %s" % desc)
        else:
            failed += 1
            print("FAIL: %s (%s)" % (desc, wrong))
    return 1 if failed else 0


def fuzz(folder, seconds, seed, max_n, backend, launcher, gpuscan):
    """Random cases until `seconds` have passed: a type, a data family, a
    size (awkward ones up to max_n) and a scan kind; the scan run four ways
    (1 rank; 2-4 ranks streamed in random chunks; 2-3 ranks resident; the
    CPU backend on 1-3 ranks in random chunks) and the reduction three, each
    with --exact. Every output must equal the reference bit for bit (NaNs:
    any NaN), so also each other. A PASS: or FAIL: line per case."""
    rng = random.Random(seed)
    sizes = [n for n in SIZES + [3, 1023, 1024, 1025, 4097, 8191, 8193, 16385, 100003, 262147, 1000003]
             if n <= max_n]
    src, dst = os.path.join(folder, "in.npy"), os.path.join(folder, "out.npy")
    deadline, failed, cases = time.time() + seconds, 0, 0

    def run(np_, args):
        # bounded as tests/gs_test.sh's run_np bounds its runs: SIGTERM after
        # RUN_TIMEOUT (the launcher passes it on to mpirun), SIGKILL 10 s later
        p = subprocess.run(["timeout", "-k", "10", str(RUN_TIMEOUT), launcher, str(np_), gpuscan]
                           + args + ["--exact", "-q"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode in (124, 137):
            return p.returncode, "timed out after %d s" % RUN_TIMEOUT
        return p.returncode, p.stdout

    while time.time() < deadline:
        t, name, n = rng.choice(sorted(FORMATS)), rng.choice(FAMILIES), rng.choice(sizes)
        if name == "special" and n == 0:
            continue
        kind = rng.choice(["inclusive", "exclusive"])
        xs = dataset(rng, t, n, name)
        write_npy(src, t, xs)
        # at most MAX_CHUNKS chunks a run: each is a collective read and
        # write on every rank, and 3 ranks on 2 cores (a sanitizer build
        # on CI) take milliseconds a chunk
        chunk = str(max(rng.choice([1, 7, 1000, 4097, 65536, 1 << 20]), -(-n // MAX_CHUNKS)))
        scans = [(1, ["--backend", backend]),
                 (rng.randint(2, 4), ["--backend", backend, "--stream", "--chunk", chunk]),
                 (rng.randint(2, 3), ["--backend", backend, "--resident"]),
                 (rng.randint(1, 3), ["--backend", "cpu", "--chunk", chunk])]
        reduces = [(1, backend), (rng.randint(2, 4), backend), (2, "cpu")]
        case = "%s %s n=%d %s" % (t, name, n, kind)
        wrong = []
        for np_, opts in scans:
            if os.path.exists(dst):
                os.remove(dst)
            rc, log = run(np_, ["scan", "-i", src, "-O", dst] + opts + ([] if kind == "inclusive" else ["--exclusive"]))
            what = "scan on %d rank(s) %s" % (np_, " ".join(opts))
            if rc != 0:
                wrong.append("%s: exit %d, %s" % (what, rc, log.strip().splitlines()[-1:]))
                continue
            ot, ys = read_npy(dst)
            w = judge_scan(xs, t, kind, ot, ys)
            if w:
                wrong.append("%s: %s" % (what, w))
        for np_, b in reduces:
            rc, log = run(np_, ["reduce", "-i", src, "--backend", b, "--json", "-"])
            what = "reduce on %d rank(s) --backend %s" % (np_, b)
            line = [l for l in log.splitlines() if l.startswith("{")]
            if rc != 0 or not line:
                wrong.append("%s: exit %d, %s" % (what, rc, log.strip().splitlines()[-1:]))
                continue
            w = judge_reduce(xs, json.loads(line[0])["result"])
            if w:
                wrong.append("%s: %s" % (what, w))
        cases += 1
        if wrong:
            failed += 1
            print("FAIL: %s (%s)" % (case, "; ".join(wrong)))
        else:
            print("PASS: %s, 4 scans and 3 reductions (chunk %s)" % (case, chunk))
        sys.stdout.flush()
    print("fuzz: %d cases, %d failed, seed %d" % (cases, failed, seed))
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    elif len(sys.argv) == 9 and sys.argv[1] == "fuzz":
        sys.exit(fuzz(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), *sys.argv[6:]))
    else:
        sys.exit(__doc__)
