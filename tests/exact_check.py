#!/usr/bin/env python3
"""exact_check.py - the independent reference of --exact (issue 13), in
plain Python: exact sums in big fixed point (Python integers in units of
2^-1074; self-checked against fractions.Fraction), rounded once to
nearest, ties to even, into f64 or f32 by the code below (not by the
library's gs_exact.h), compared bit for bit with gpuscan's results.

  exact_check.py gen DIR SEED     write the test arrays DIR/<name>_<type>_<n>.npy
  exact_check.py check MANIFEST   judge the runs listed there; PASS:/FAIL: lines

Manifest lines (tab-separated): scan INPUT OUTPUT inclusive|exclusive DESC,
or reduce INPUT JSON-FILE - DESC.
"""
import json
import math
import random
import struct
import sys
from fractions import Fraction

FORMATS = {"f32": ("<f4", "f", 4, 24, -149, 128), "f64": ("<f8", "d", 8, 53, -1074, 1024)}
SIZES = [0, 1, 2, 31, 997, 65537]


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


def datasets(rng, t, n):
    """name -> values: the data families of the issue's test list."""
    big = 3.0e38 if t == "f32" else 1.7e308
    tiny = 2.0 ** FORMATS[t][4]
    sets = {
        "uniform": [rng.uniform(0, 1) for _ in range(n)],
        "normal": [rng.gauss(0, 1) for _ in range(n)],
        "range": [finite_random(rng, t) for _ in range(n)],
        "subnormal": [rng.choice([-1, 1]) * rng.randint(0, 2 ** (FORMATS[t][3] - 1) - 1) * tiny for _ in range(n)],
    }
    # massive cancellation: huge values that cancel, hiding small ones
    cancel = []
    for i in range(n):
        r = i % 4
        cancel.append(big if r == 0 else -big if r == 2 else rng.uniform(-1, 1) * 2.0 ** rng.randint(-60, 10))
    sets["cancel"] = cancel
    # overflow and ties: values whose sums leave the range, and exact halves
    sets["overflow"] = [big * rng.choice([1, 1, -1]) for _ in range(n)]
    sets["ties"] = [rng.choice([1.0, 2.0 ** -(FORMATS[t][3]), -(2.0 ** -(FORMATS[t][3])), 3.0 * 2.0 ** -(FORMATS[t][3])])
                    for _ in range(n)]
    if n >= 1:
        specials = [rng.uniform(-1, 1) for _ in range(n)]
        kinds = [[math.nan], [math.inf], [-math.inf], [math.inf, -math.inf], [math.inf, math.inf]]
        chosen = kinds[n % len(kinds)]
        for s in chosen:
            specials[rng.randrange(n)] = s
        sets["special"] = specials
    return {name: [to_type(x, t) for x in values] for name, values in sets.items()}


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
            acc = Exact()
            for x in xs:
                acc.add(x)
            got = json.load(open(out))["result"]
            got = float(got)   # "nan", "inf" and "-inf" arrive as strings
            ref = acc.rounded("f64")
            ok = same(got, ref, "f64")
            detail = "got %r, want %r" % (got, ref)
        else:
            ot, ys = read_npy(out)
            acc = Exact()
            bad = -1
            for i, x in enumerate(xs):
                if kind == "exclusive":
                    ref = acc.rounded(t)
                acc.add(x)
                if kind == "inclusive":
                    ref = acc.rounded(t)
                if i >= len(ys) or not same(ys[i], ref, t):
                    bad = i
                    break
            ok = bad < 0 and len(ys) == len(xs) and ot == t
            detail = "first wrong element %d of %d: got %r, want %r" % (
                bad, len(xs), ys[bad] if 0 <= bad < len(ys) else None, ref) if bad >= 0 else "length or type"
        if ok:
            print("PASS: %s" % desc)
        else:
            failed += 1
            print("FAIL: %s (%s)" % (desc, detail))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    else:
        sys.exit(__doc__)
