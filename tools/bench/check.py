#!/usr/bin/env python3
"""Fails a benchmark run whose systems did not answer nearby alike.

Reads, from DIR, the friends within 500 m of the same askers as each system found them
(`asker friend [metres]` lines, tab-separated, SYSTEM.tsv): the reference (postgis.tsv from
tools/bench/peers: geodesic metres on the WGS 84 spheroid; or numpy.tsv from
tools/bench/inprocess.py, haversine metres, in tools/bench/smoke, which runs no PostgreSQL), which
lists the friends a little beyond the edge too, and each SYSTEM named: redis (tools/bench/peers'
friends-first script, ids only), numpy, service (tools/bench/answers.py: the service over HTTP,
metres bucketed up). Every system must list the reference's friends and no others, except those
within --margin metres of the 500 m edge (Redis measures on a sphere from 52-bit geohashes, numpy
on a sphere, the service on a local approximation: a friend a metre from the edge may fall either
side). Shown distances must be the reference's metres bucketed up, give or take that margin.

Prints a table row per system and exits 1 when any differs or has no answers, naming the first
differences.

usage: tools/bench/check.py DIR [--reference postgis] [--margin 3] SYSTEM…
"""
import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

LABELS = {"redis": "Redis, friends first", "numpy": "numpy, friends first", "service": "the service over HTTP", "postgis": "PostGIS"}
# Systems whose distances are shown bucketed up (DistanceBuckets); the others' are metres.
BUCKETED = {"service"}


def read(path):
    """{asker: {friend: metres or None}} of an answers file."""
    found = defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        metres = float(parts[2]) if len(parts) > 2 and parts[2] else None
        found[int(parts[0])][int(parts[1])] = metres
    return found


def bucket(metres):
    """Metres as the service shows them (DistanceBuckets): rounded up to 10 m under 100 m, 50 m under 1 km."""
    step = 10 if metres < 100 else 50 if metres < 1000 else 500
    return max(step, math.ceil(metres / step) * step)


def differences(reference, theirs, margin, name, bucketed):
    """The friends one system lists otherwise than the reference, and how many friends were compared."""
    found, compared = [], 0
    for asker in sorted(set(reference) | set(theirs)):
        want, got = reference.get(asker, {}), theirs.get(asker, {})
        for friend in sorted(set(want) | set(got)):
            metres = want.get(friend)
            if metres is not None and abs(metres - 500) <= margin:
                continue  # at the edge: either side
            if metres is not None and metres > 500 and friend not in got:
                continue  # beyond it for both
            compared += 1
            if metres is None:
                found.append(f"user {asker}: friend {friend} listed, farther than {500 + margin:g} m for {name}")
            elif metres > 500:
                found.append(f"user {asker}: friend {friend} listed, at {metres:.1f} m for {name}")
            elif friend not in got:
                found.append(f"user {asker}: friend {friend} at {metres:.1f} m missing")
            elif got[friend] is None:
                continue
            elif bucketed and got[friend] not in {bucket(max(0, metres - margin)), bucket(metres), bucket(metres + margin)}:
                found.append(f"user {asker}: friend {friend} shown at {got[friend]:g} m, {name} {metres:.1f} m")
            elif not bucketed and abs(got[friend] - metres) > margin:
                found.append(f"user {asker}: friend {friend} at {got[friend]:.1f} m, {name} {metres:.1f} m")
    return found, compared


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("systems", nargs="+", help="the systems to compare with the reference: redis, numpy, service")
    parser.add_argument("--reference", default="postgis", help="the system whose answers are the reference (default postgis)")
    parser.add_argument("--margin", type=float, default=3.0, help="metres either side of the edge where answers may differ (default 3)")
    args = parser.parse_args()
    d = Path(args.directory)
    reference_path = d / f"{args.reference}.tsv"
    if not reference_path.exists():
        print(f"check.py: no {reference_path}: the reference wrote no answers", file=sys.stderr)
        return 1
    reference = read(reference_path)
    failed = False
    for system in args.systems:
        label, path = LABELS.get(system, system), d / f"{system}.tsv"
        if not path.exists():
            print(f"| {label} | no answers ({path.name} missing) | differs |")
            failed = True
            continue
        theirs = read(path)
        if system not in BUCKETED:
            # A file that lists friends beyond the edge (to serve as a reference) answers only those within it.
            theirs = {a: {f: m for f, m in fs.items() if m is None or m <= 500} for a, fs in theirs.items()}
        found, compared = differences(reference, theirs, args.margin, LABELS.get(args.reference, args.reference), system in BUCKETED)
        askers = len(set(reference) | set(theirs))
        detail = f"{compared:,} friends of {askers:,} askers" + (f"; {len(found)} differences, e.g. {'; '.join(found[:3])}" if found else "")
        print(f"| {label} | {detail} | {'same' if not found else 'differs'} |")
        failed = failed or bool(found) or compared == 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
