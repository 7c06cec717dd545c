#!/usr/bin/env python3
"""numpy_check.py - the NumPy side of tests/cli_numpy.sh.

    numpy_check.py gen DIR SEED      write the input arrays into DIR
    numpy_check.py check MANIFEST    check gpuscan's outputs against NumPy

MANIFEST has one tab-separated line per gpuscan run:

    scan    INPUT OUTPUT OP inclusive|exclusive RANKS RAWTYPE
    reduce  INPUT JSON   OP -                   RANKS RAWTYPE

RAWTYPE is the -t of a raw input file, or '-' for .npy input. Each line
gives one "PASS: ..." or "FAIL: ..." line; the exit status is 1 if any
failed.

The references are NumPy's own functions (cumsum, cumprod, minimum.accumulate,
maximum.accumulate, sum, prod, min, max) under gpuscan's documented rules:
integer sums and products widen to 64 bits (int32 -> int64, uint32 -> uint64)
as numpy.cumsum does; integer products wrap; integers compare exactly; min
and max compare exactly, NaN propagating; float sums and products meet the
bound of src/gs_verify.h against a float64 reference:

    sum:  |got - ref| <= u_out*|ref| + 2*N*2^-53*S,  S = running sum of |x|
    prod: |got - ref| <= u_out*|ref| + 2*N*2^-53*|ref|

with u_out = 2^-24 for float32 output, 2^-53 for float64 (reduce results are
float64), N = the element count.
"""
import json
import math
import os
import sys
import traceback

import numpy as np

DTYPES = {"i32": "<i4", "i64": "<i8", "u32": "<u4", "u64": "<u8", "f32": "<f4", "f64": "<f8"}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}
SIZES = (0, 1, 2, 31, 1000003)
SHAPE_2D = (123, 457)
U64 = 2.0 ** -53


def random_values(rng, name, shape):
    """Values whose 64-bit sums cannot overflow, over the type's range."""
    n = int(np.prod(shape))
    if name == "i32":
        x = rng.integers(-2**31, 2**31, n, dtype=np.int64)
    elif name == "u32":
        x = rng.integers(0, 2**32, n, dtype=np.uint64)
    elif name == "i64":
        x = rng.integers(-2**40, 2**40, n, dtype=np.int64)
    elif name == "u64":
        x = rng.integers(0, 2**43, n, dtype=np.uint64)
    else:
        # both signs, magnitudes over six decades: cancellation and growth
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
    return x.astype(DTYPES[name]).reshape(shape)


def extremes(rng, name, n):
    """The whole range of the type, its min and max included (min/max only)."""
    dt = np.dtype(DTYPES[name])
    if dt.kind == "f":
        x = random_values(rng, name, (n,))
        x[rng.integers(0, n, 4)] = [np.inf, -np.inf, np.finfo(dt).max, np.finfo(dt).tiny]
        return x
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x[rng.integers(0, n, 2)] = [info.min, info.max]
    return x


def products(rng, name, n):
    """Factors that keep products meaningful: mostly 1, some -1 and 2, and a
    few large ones so that integer products wrap past 2^64."""
    dt = np.dtype(DTYPES[name])
    if dt.kind == "f":
        return (1.0 + rng.uniform(-1e-3, 1e-3, n)).astype(dt)
    choice = rng.random(n)
    x = np.ones(n, dtype=np.int64 if dt.kind == "i" else np.uint64)
    x[choice < 0.02] = 2
    x[(choice >= 0.02) & (choice < 0.03)] = 3
    if dt.kind == "i":
        x[(choice >= 0.03) & (choice < 0.06)] = -1
    x[choice > 0.9999] = np.iinfo(dt).max // 3
    return x.astype(dt)


def with_nans(rng, name, n):
    """A float array with a NaN in the middle and one near the end: prefixes
    before it are numbers, after it NaN."""
    x = random_values(rng, name, (n,))
    x[n // 2] = np.nan
    x[n - 3] = np.nan
    return x


def gen(folder, seed):
    rng = np.random.default_rng(seed)
    for name in DTYPES:
        for n in SIZES:
            x = random_values(rng, name, (n,))
            np.save(os.path.join(folder, "x_%s_%d.npy" % (name, n)), x)
            if n in (31, 1000003):
                x.tofile(os.path.join(folder, "x_%s_%d.bin" % (name, n)))
        np.save(os.path.join(folder, "x_%s_2d.npy" % name), random_values(rng, name, SHAPE_2D))
        np.save(os.path.join(folder, "e_%s_1000.npy" % name), extremes(rng, name, 1000))
        for n in (31, 1000003):
            np.save(os.path.join(folder, "p_%s_%d.npy" % (name, n)), products(rng, name, n))
        if name[0] == "f":
            np.save(os.path.join(folder, "n_%s_1000.npy" % name), with_nans(rng, name, 1000))
    # the later header versions NumPy writes when asked to
    for version, name in (((2, 0), "f64"), ((3, 0), "i32")):
        with open(os.path.join(folder, "v%d_%s_1000.npy" % (version[0], name)), "wb") as f:
            np.lib.format.write_array(f, random_values(rng, name, (1000,)), version=version)


# ---- checks ------------------------------------------------------------------


def load_input(path, rawtype):
    if rawtype != "-":
        return np.fromfile(path, dtype=DTYPES[rawtype])
    return np.load(path).ravel()  # C order: the flat order gpuscan uses


def widened(dt, op):
    """gpuscan's (and numpy.cumsum's) output type of a scan."""
    if dt.kind in "iu" and op in ("sum", "prod"):
        return np.dtype("<i8") if dt.kind == "i" else np.dtype("<u8")
    return dt


def identity(dt, op):
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(dt)
    return info.max if op == "min" else info.min


def shift_in(first, ref):
    """The exclusive scan from the inclusive one: `first`, then ref[:-1],
    keeping ref's dtype (np.concatenate would make uint64 and a Python int
    float64)."""
    out = np.empty_like(ref)
    out[:1] = first
    out[1:] = ref[:-1]
    return out


def first_bad(ok):
    bad = np.flatnonzero(~ok)
    return "%d wrong, first at %d" % (bad.size, bad[0]) if bad.size else None


def check_scan(x, out, op, kind):
    dt = x.dtype
    want = widened(dt, op)
    if out.endswith(".npy"):
        y = np.load(out)
        if y.dtype != want:
            return "output dtype %s, NumPy's is %s" % (y.dtype, want)
        if y.shape != (x.size,):
            return "output shape %s, expected (%d,)" % (y.shape, x.size)
    else:
        y = np.fromfile(out, dtype=want)
        if y.size != x.size:
            return "raw output of %d elements, expected %d" % (y.size, x.size)
    n = x.size
    if op in ("min", "max") or dt.kind in "iu":
        # exact: integers (sums cannot overflow here, products wrap as in
        # NumPy), and min/max of anything
        if op == "sum":
            ref = np.cumsum(x, dtype=want)
        elif op == "prod":
            ref = np.cumprod(x, dtype=want)
        else:
            ref = (np.minimum if op == "min" else np.maximum).accumulate(x)
        if kind == "exclusive":
            ref = shift_in(identity(dt, op), ref)
        same = y == ref
        if dt.kind == "f":
            same |= np.isnan(y) & np.isnan(ref)
        return first_bad(same)
    x64 = x.astype(np.float64)
    u_out = 2.0 ** -24 if dt == np.float32 else U64
    if op == "sum":
        ref, scale = np.cumsum(x64), np.cumsum(np.abs(x64))
    else:
        ref = np.cumprod(x64)
        scale = np.abs(ref)
    if kind == "exclusive":
        ref = shift_in(identity(dt, op), ref)
        scale = shift_in(0.0, scale)
    err = np.abs(y.astype(np.float64) - ref)
    return first_bad(err <= u_out * np.abs(ref) + 2 * n * U64 * scale)


def check_reduce(x, path, op, ranks):
    with open(path) as f:
        d = json.load(f)
    for key, want in (("command", "reduce"), ("op", op), ("n", x.size),
                      ("ranks", ranks), ("type", NAMES[x.dtype])):
        if d.get(key) != want:
            return "JSON %r is %r, expected %r" % (key, d.get(key), want)
    for key in ("backend", "seconds"):
        if key not in d:
            return "JSON has no %r" % key
    r = d["result"]
    if x.dtype.kind in "iu":
        if type(r) is not int:
            return "result %r is not a JSON integer" % (r,)
        if op == "sum":
            ref = sum(x.tolist())  # exact: Python integers
        elif op == "prod":
            ref = int(np.prod(x, dtype=widened(x.dtype, op)))  # wraps, as NumPy
        else:
            ref = int(getattr(x, op)())
        return None if r == ref else "result %d, NumPy's %d" % (r, ref)
    x64 = x.astype(np.float64)
    if op in ("min", "max"):
        ref = float(getattr(x, op)())
    elif op == "sum":
        ref = math.fsum(x64)
    else:
        ref = float(np.prod(x64))
    if math.isnan(ref) or math.isinf(ref):
        # JSON has no NaN or infinity: gpuscan writes the strings
        text = "nan" if math.isnan(ref) else "inf" if ref > 0 else "-inf"
        return None if r == text else "result %r, NumPy's %s (the JSON string %r)" % (r, text, text)
    if type(r) not in (int, float):
        return "result %r is not a JSON number" % (r,)
    if op in ("min", "max"):
        return None if r == ref else "result %r, NumPy's %r (must be exact)" % (r, ref)
    scale = math.fsum(np.abs(x64)) if op == "sum" else abs(ref)
    bound = U64 * abs(ref) + 2 * x.size * U64 * scale
    if abs(r - ref) <= bound:
        return None
    return "result %r, NumPy's %r: off by %g, bound %g" % (r, ref, abs(r - ref), bound)


def check(manifest, load=load_input, scan=check_scan):
    """Judge every line of the manifest; `load(path, rawtype)` reads an
    input, `scan(x, out, op, kind)` judges a scan's output (h5_check.py
    passes its HDF5 ones)."""
    failed = 0
    with open(manifest) as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for what, path, out, op, kind, ranks, rawtype in lines:
        desc = "%s %s -o %s%s on %s rank(s) = NumPy" % (
            what, os.path.basename(path), op, " --exclusive" if kind == "exclusive" else "", ranks)
        try:
            x = load(path, rawtype)
            if what == "scan":
                why = scan(x, out, op, kind)
            else:
                why = check_reduce(x, out, op, int(ranks))
        except Exception:  # a broken output file is a failure of its line
            why = traceback.format_exc(limit=1).strip().replace("\n", " | ")
        if why:
            failed += 1
            print("FAIL: %s\n    %s" % (desc, why))
        else:
            print("PASS: %s" % desc)
    return 1 if failed else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "gen":
        gen(argv[2], int(argv[3]))
        return 0
    if len(argv) == 3 and argv[1] == "check":
        with np.errstate(over="ignore", invalid="ignore"):
            return check(argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
