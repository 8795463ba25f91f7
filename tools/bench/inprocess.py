"""Level 1 peers in process: what a Python service would run in its own process on the same world.

  - shapely 2 (GEOS) for the fence lookup, "which park and ride zone covers P": an STRtree of the
    parks and one of the zones, queried for the geometries P is covered by (the trees prepare
    their geometries), one probe a call as a request would ask; and all 100,000 probes in one
    vectorised call, shapely's best case.
  - numpy for nearby, friends first: the caller's friends' positions gathered by id and their
    great-circle (haversine) distances, the friends within 500 m kept. shapely has no geodesic
    distance, and GEOS's planar one in degrees would answer a different question. The callers
    are the world's askers (askers.env), every system's same ones.

Reads the CSVs `coasterbench export` writes (tools/bench/peers runs this on the same world as
PostGIS and Redis). Prints rows of the peers table:
| peer | query | connections | calls/s | mean ms | note |

Run by any python3: without shapely and numpy it installs them from PyPI into the project's
.build-venv-bench (once) and runs itself again there.

With --answers FILE it also writes the friends within 510 m of the first 200 askers
(`asker friend metres`) for tools/bench/check.py.

usage: python3 tools/bench/inprocess.py WORLD_DIR [--calls 20000] [--seed 1] [--answers FILE]
"""
import argparse
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

VENV = Path(__file__).resolve().parents[2] / ".build-venv-bench"
try:
    import numpy as np
    import shapely
except ImportError:
    if Path(sys.prefix).resolve() == VENV:
        raise
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, stdout=sys.stderr)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "shapely>=2,<3", "numpy>=1.24,<3"], check=True, stdout=sys.stderr)
    os.execv(python, [str(python), __file__, *sys.argv[1:]])

EARTH_RADIUS_M = 6_371_008.8


def read_wkt(path, id_columns):
    """(ids, geometries) of a `coasterbench export` file: id columns, then WKT, tab-separated."""
    ids, wkts = [], []
    for line in Path(path).read_text().splitlines():
        parts = line.split("\t")
        ids.append(tuple(parts[:id_columns]))
        wkts.append(parts[id_columns])
    return ids, shapely.from_wkt(wkts)


def percentile(sorted_ns, q):
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / 1000


def row(peer, query, calls, total_ns, each_ns, note):
    mean_us = total_ns / calls / 1000
    parts = [f"{calls / (total_ns / 1e9):.0f}", f"{mean_us / 1000:.5f}"]
    if each_ns:
        each_ns.sort()
        note = f"p50 {percentile(each_ns, 0.5):.2f} µs, p99 {percentile(each_ns, 0.99):.2f} µs; " + note
    print(f"| {peer} | {query} | 1 | {parts[0]} | {parts[1]} | {note} |", flush=True)


def timed(call, inputs, warm_up):
    """`call` on each input, each call timed: (total ns, each call's ns, answers)."""
    for value in warm_up:
        call(value)
    each, answers = [], []
    start = time.perf_counter_ns()
    for value in inputs:
        t = time.perf_counter_ns()
        answer = call(value)
        each.append(time.perf_counter_ns() - t)
        answers.append(answer)
    return time.perf_counter_ns() - start, each, answers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("world", help="directory written by `coasterbench export`")
    parser.add_argument("--calls", type=int, default=20_000, help="calls timed one by one per query (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sampled probes and callers")
    parser.add_argument("--answers", help="write the first 200 askers' friends within 510 m here (asker friend metres)")
    args = parser.parse_args()
    world = Path(args.world)
    rng = random.Random(args.seed)
    peer = f"shapely {shapely.__version__} (GEOS {shapely.geos_version_string}) in process"

    # The fence lookup.
    park_ids, parks = read_wkt(world / "parks.csv", 1)
    zone_ids, zones = read_wkt(world / "zones.csv", 2)
    zone_park = np.array([park for _, park in zone_ids])
    park_names = np.array([park for (park,) in park_ids])
    probes = np.fromfile(world / "probes.csv", sep=" ").reshape(-1, 3)
    points = shapely.points(probes[:, 1], probes[:, 2])
    park_tree, zone_tree = shapely.STRtree(parks), shapely.STRtree(zones)

    def locate(point):
        covering = park_tree.query(point, predicate="covered_by")
        if len(covering) == 0:
            return None, []
        park = park_names[covering[0]]
        return park, [z for z in zone_tree.query(point, predicate="covered_by") if zone_park[z] == park]

    sample = [points[rng.randrange(len(points))] for _ in range(args.calls)]
    total, each, answers = timed(locate, sample, warm_up=points[:1000])  # the trees prepare their geometries on first use
    in_zone = sum(1 for _, found in answers if found)
    row(peer, "locate, one point a call", args.calls, total, each, f"{100 * in_zone // args.calls} % of probes in a ride zone")

    # All probes at once: pairs (probe, park) and (probe, zone), zones kept where their park covers.
    start = time.perf_counter_ns()
    probe_park = np.full(len(points), -1)
    pairs = park_tree.query(points, predicate="covered_by")
    probe_park[pairs[0]] = pairs[1]
    zone_pairs = zone_tree.query(points, predicate="covered_by")
    keep = zone_park[zone_pairs[1]] == np.where(probe_park[zone_pairs[0]] >= 0, park_names[probe_park[zone_pairs[0]]], "")
    in_zone = len(np.unique(zone_pairs[0][keep]))
    total = time.perf_counter_ns() - start
    row(peer, f"locate, all {len(points):,} probes in one call", len(points), total, None,
        f"{100 * in_zone // len(points)} % of probes in a ride zone")  # whole per cent, rounded down, as the engine's

    # Nearby, friends first. friends.csv holds both directions, sorted by the first column.
    users = np.fromfile(world / "users.csv", sep=" ").reshape(-1, 3)
    order = np.argsort(users[:, 0])
    user_ids, lon, lat = users[order, 0].astype(np.int64), np.radians(users[order, 1]), np.radians(users[order, 2])
    ties = np.fromfile(world / "friends.csv", dtype=np.int64, sep=" ").reshape(-1, 2)
    starts = np.searchsorted(ties[:, 0], user_ids, side="left")
    ends = np.searchsorted(ties[:, 0], user_ids, side="right")

    def nearby(i):
        friends = np.searchsorted(user_ids, ties[starts[i]:ends[i], 1])
        dlat, dlon = lat[friends] - lat[i], lon[friends] - lon[i]
        h = np.sin(dlat / 2) ** 2 + math.cos(lat[i]) * np.cos(lat[friends]) * np.sin(dlon / 2) ** 2
        metres = 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(h))
        close = metres <= 500
        return user_ids[friends[close]], metres[close]

    # The world's askers (askers.env: asker k of 0..ASKERS-1 is user k × STEP mod USERS + 1).
    settings = dict(part.split("=") for part in (world / "askers.env").read_text().split())
    askers, step, count = int(settings["ASKERS"]), int(settings["STEP"]), int(settings["USERS"])
    callers = [int(np.searchsorted(user_ids, rng.randrange(askers) * step % count + 1)) for _ in range(args.calls)]
    total, each, answers = timed(nearby, callers, warm_up=callers[:1000])
    found = sum(len(ids) for ids, _ in answers)
    row(f"numpy {np.__version__} in process", "nearby friends-first, 500 m (haversine)", args.calls, total, each,
        f"{found / args.calls:.1f} friends found per query")
    if args.answers:
        with open(args.answers, "w") as out:
            for k in range(min(200, askers)):
                i = int(np.searchsorted(user_ids, k * step % count + 1))
                friends = np.searchsorted(user_ids, ties[starts[i]:ends[i], 1])
                dlat, dlon = lat[friends] - lat[i], lon[friends] - lon[i]
                h = np.sin(dlat / 2) ** 2 + math.cos(lat[i]) * np.cos(lat[friends]) * np.sin(dlon / 2) ** 2
                metres = 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(h))
                close = metres <= 510
                for friend, m in sorted(zip(user_ids[friends[close]].tolist(), metres[close].tolist())):
                    out.write(f"{user_ids[i]}\t{friend}\t{m}\n")


if __name__ == "__main__":
    sys.exit(main())
