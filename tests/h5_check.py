#!/usr/bin/env python3
"""h5_check.py - the h5py side of tests/cli_hdf5.sh.

    h5_check.py gen DIR SEED         write the HDF5 inputs into DIR
    h5_check.py check MANIFEST       check gpuscan's outputs against NumPy
    h5_check.py holds FILE REF       FILE holds every dataset of REF, equal

MANIFEST lines are tests/numpy_check.py's, with FILE.h5:/DATASET for the
input and, for scans, the output:

    scan    INPUT OUTPUT OP inclusive|exclusive RANKS -
    reduce  INPUT JSON   OP -                   RANKS -

Each line gives one "PASS: ..." or "FAIL: ..." line; the exit status is 1 if
any failed. The judging is numpy_check.py's (same references, same float
bounds); an HDF5 output must also be a 1-D dataset of NumPy's dtype for the
scan, little-endian.
"""
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_check as nc  # noqa: E402  (beside this file)

SIZES = (0, 1, 2, 31, 1009, 100003)   # 1009 and 100003 are primes
SHAPE_ND = (7, 11, 13)                # 1001 elements, read flat in C order


def gen(folder, seed):
    rng = np.random.default_rng(seed)
    for name in nc.DTYPES:
        with h5py.File(os.path.join(folder, "x_%s.h5" % name), "w") as f:
            for n in SIZES:
                x = nc.random_values(rng, name, (n,))
                f.create_dataset("contig/n%d" % n, data=x)
                # chunks that do not divide the data, and a partial last one
                f.create_dataset("chunked/n%d" % n, data=x, chunks=(max(1, min(n, 97)),) if n else None,
                                 maxshape=(None,))
            f.create_dataset("nd", data=nc.random_values(rng, name, SHAPE_ND), chunks=(3, 4, 5))
            f.create_dataset("gz", data=nc.random_values(rng, name, (10007,)), chunks=(1000,),
                             compression="gzip", shuffle=True)
            f.create_dataset("more/p31", data=nc.products(rng, name, 31))
            f.create_dataset("more/e1000", data=nc.extremes(rng, name, 1000))
            # big-endian on disk: HDF5 converts it on reading
            f.create_dataset("be", data=nc.random_values(rng, name, (1009,)).astype(
                np.dtype(nc.DTYPES[name]).newbyteorder(">")))
    same = nc.random_values(rng, "f32", (100003,))   # the bench reads it both ways
    np.save(os.path.join(folder, "same.npy"), same)
    with h5py.File(os.path.join(folder, "same.h5"), "w") as f:
        f["x"] = same
    with h5py.File(os.path.join(folder, "one.h5"), "w") as f:
        f.create_dataset("a/b/only", data=nc.random_values(rng, "f64", (1009,)))
    with h5py.File(os.path.join(folder, "bad.h5"), "w") as f:
        f["compound"] = np.zeros(4, dtype=[("a", "<i4"), ("b", "<f8")])
        f["strings"] = np.array([b"ab", b"cd"])
        f["half"] = np.zeros(5, dtype=np.float16)
        f["bytes"] = np.zeros(5, dtype=np.int8)
        f.create_group("group")
        f["x"] = np.arange(10, dtype=np.int32)


def load(spec):
    """FILE.h5:/DATASET as a flat array in C order, in native byte order."""
    path, _, name = spec.partition(":")
    with h5py.File(path, "r") as f:
        if not name:  # the file's only dataset
            found = []
            f.visititems(lambda n, o: found.append(n) if isinstance(o, h5py.Dataset) else None)
            name, = found
        x = f[name][()]
    x = np.asarray(x).ravel()
    return x.astype(x.dtype.newbyteorder("=")) if x.dtype.byteorder not in "=|" else x


def check_scan_h5(x, spec, op, kind):
    path, _, name = spec.partition(":")
    with h5py.File(path, "r") as f:
        d = f[name]
        want = nc.widened(np.dtype(x.dtype).newbyteorder("<"), op)
        if d.dtype != want:
            return "output dataset dtype %s, expected %s" % (d.dtype, want)
        if d.shape != (x.size,):
            return "output shape %s, expected (%d,)" % (d.shape, x.size)
        y = d[()]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "y.npy")
        np.save(out, y)
        return nc.check_scan(x, out, op, kind)


def check(manifest):
    return nc.check(manifest, load=lambda spec, _rawtype: load(spec), scan=check_scan_h5)


def holds(path, ref):
    """0 when `path` has every dataset of `ref`, with the same dtype and data."""
    names = []
    with h5py.File(ref, "r") as r:
        r.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        with h5py.File(path, "r") as f:
            for n in names:
                a, b = r[n], f.get(n)
                if b is None or b.dtype != a.dtype or b.shape != a.shape or \
                        not np.array_equal(a[()], b[()], equal_nan=a.dtype.kind == "f"):
                    print("%s: dataset %s differs from %s's" % (path, n, ref))
                    return 1
    print("%s holds the %d datasets of %s" % (path, len(names), ref))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "gen":
        gen(argv[2], int(argv[3]))
        return 0
    if len(argv) == 3 and argv[1] == "check":
        with np.errstate(over="ignore", invalid="ignore"):
            return check(argv[2])
    if len(argv) == 4 and argv[1] == "holds":
        return holds(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
