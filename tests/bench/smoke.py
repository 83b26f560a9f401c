#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Smoke test of the benchmarks: runs each given benchmark binary with --quick into a fresh
directory and checks that it exits 0 and writes its CSV with the documented header and at least
one row per solver it reports; exit status 77 means its data is absent (no ../shared) and counts
as skipped. No timing is checked (bench_common.h documents the columns).
usage: smoke.py [--arg NAME VALUE]... EXE...  (--arg service PATH: bench_service gets PATH)"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

HEADER = ["bench", "variant", "n", "samples", "p50_ns", "p99_ns", "p999_ns", "max_ns",
          "ratio_p50", "scene", "iters_p50", "iters_max", "solve_p50_ns", "certified", "problems",
          "residual"]


def all_early(row):
    """bench_deadline samples the steps that return after their deadline and counts the others
    as early (iters_p50): with --quick's two steps, a cell may have only early ones."""
    return row[0] == "deadline" and float(row[10]) >= 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arg", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="an extra argument for bench_NAME")
    p.add_argument("exes", nargs="+")
    args = p.parse_args()
    extra = {}
    for name, value in args.arg:
        extra.setdefault(name, []).append(value)
    failed = 0
    for exe in args.exes:
        name = os.path.basename(exe).removeprefix("bench_")
        with tempfile.TemporaryDirectory() as out:
            proc = subprocess.run([exe, *extra.get(name, []), "--quick", "--out", out],
                                  capture_output=True, text=True)
            if proc.returncode == 77:
                # The benchmark's data is absent (a user's own clone without ../shared).
                print(f"{exe}: skipped: {proc.stdout.strip().splitlines()[-1]}")
                continue
            if proc.returncode != 0:
                print(f"{exe}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
                failed += 1
                continue
            path = os.path.join(out, name + ".csv")
            if not os.path.exists(path):
                print(f"{exe}: no {path}")
                failed += 1
                continue
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
            if not rows or rows[0] != HEADER or len(rows) < 2:
                print(f"{path}: bad header or no rows: {rows[:2]}")
                failed += 1
                continue
            bad = [r for r in rows[1:] if len(r) != len(HEADER) or int(r[3]) < 1 and not
                   all_early(r)]
            if bad:
                print(f"{path}: malformed rows or rows without samples: {bad[:3]}")
                failed += 1
                continue
            print(f"{exe}: ok, {len(rows) - 1} rows")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
