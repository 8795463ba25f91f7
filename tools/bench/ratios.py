"""The benchmark targets as ratios, from the tables tools/bench/all wrote (engine.md, http.md,
peers.md), with the check of the systems' answers (check.md) and the run's wall time (meta).

usage: python3 tools/bench/ratios.py DIR
"""
import statistics
import sys
from pathlib import Path


def rows(path):
    """Markdown table rows as lists of cells (header and rule lines skipped)."""
    out = []
    for line in Path(path).read_text().splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        out.append(cells)
    return out


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main(directory):
    d = Path(directory)
    # Without peers.md (tools/bench/smoke runs no peers) the rows against them are left out.
    engine, http = rows(d / "engine.md"), rows(d / "http.md")
    peers = rows(d / "peers.md") if (d / "peers.md").exists() else []

    def eng(users, op):
        for r in engine:
            if r[0] == str(users) and r[1].startswith(op):
                return r
        return None

    # tools/bench/http's first rows are its largest world's, which ran every route; smaller worlds,
    # served beside it, ran locate and nearby.
    users = next((r[0] for r in http if r[0].isdigit()), "?")

    def wire(route, conns, size=None, column=3):
        """A route's median requests/s (column 3), p50 ms (4) or p99 ms (5)."""
        for r in http:
            if r[0] == (size or users) and r[1] == route and r[2] == str(conns):
                return number(r[column])
        return None

    def wire_rounds(route, conns, size=None):
        """Each round's requests/s (tools/bench/http runs the routes in turns), or None."""
        for r in http:
            if r[0] == (size or users) and r[1] == route and r[2] == str(conns) and len(r) > 8:
                values = [number(v) for v in r[8].split("/")]
                return values if values and None not in values else None
        return None

    def share(route, conns):
        """The route's rate over /health's, round by round: (median, lowest, highest), or None.
        Each round runs /health just before the route, so both meet the host in the same mood."""
        mine, health = wire_rounds(route, conns), wire_rounds("GET /health", conns)
        if not mine or not health or len(mine) != len(health):
            return None
        ratios = sorted(m / h for m, h in zip(mine, health))
        return statistics.median(ratios), ratios[0], ratios[-1]

    def share_text(value):
        median, low, high = value
        return f"{median:.0%}" if low == high else f"{median:.0%} (rounds {low:.0%}–{high:.0%})"

    def peer(kind, query, conns):
        for r in peers:
            if r[0] == kind and r[1].startswith(query) and r[2] == str(conns):
                return number(r[3]) if kind != "PostGIS in-server" else number(r[4])
        return None

    sizes = sorted({int(r[0]) for r in engine if r[0].isdigit()})
    small, large = sizes[0], sizes[-1]
    lines = ["| target | CoasterLife | peer / reference | ratio | goal | met |", "|---|---|---|---|---|---|"]

    def add(name, ours, theirs, ratio, goal, met):
        verdict = "reference" if met == "reference" else "yes" if met else "no" if met is not None else "not at this size"
        lines.append(f"| {name} | {ours} | {theirs} | {ratio} | {goal} | {verdict} |")

    # Level 1: mean time per call (1e6 / calls per second) against PostGIS's mean in-server time,
    # at the size the peers ran at (tools/bench/all runs them at --users) when the engine ran at it.
    at_1m = users == "1000000"
    same = int(users) if users.isdigit() and int(users) in sizes else small
    # Rows by their full names: the named forms' rows start the same way. The targets compare the
    # queries PostGIS answers (ids; ids and distances); the named forms, what the routes answer,
    # are shown against the same PostGIS time for reference.
    for op, query, label, goal in [
            ("fence lookup, point (PostGIS's query)", "locate", "fence lookup (point)", True),
            ("nearby friends, 500 m (ids, PostGIS's query)", "nearby-friends-first", "nearby, friends within 500 m (ids and distances)", True),
            ("nearby friends, 500 m, named", "nearby-friends-first", "nearby, named and sorted as the route answers", False)]:
        r = eng(same, op)
        pg = peer("PostGIS in-server", query, 1)
        if r and pg:
            mean_us = 1e6 / number(r[2])
            ratio = pg * 1000 / mean_us
            add(f"engine {label} at {same:,} users vs PostGIS in-server", f"{mean_us:.2f} µs mean (p50 {r[3]})", f"{pg * 1000:.1f} µs",
                f"{ratio:.1f}×", "≥ 100×" if goal else "", ratio >= 100 if goal else "reference")
    # The engine against the same questions answered in a Python process (tools/bench/inprocess.py):
    # shapely/GEOS for the fence lookup, numpy for nearby. No target; shown for reference.
    def in_process(kind, query):
        for r in peers:
            if r[0].startswith(kind) and r[0].endswith("in process") and r[1].startswith(query):
                return number(r[4]) * 1000 if number(r[4]) else None
        return None

    for op, kind, query, label in [
            ("fence lookup, point (PostGIS's query)", "shapely", "locate, one point a call", "fence lookup (point) vs shapely/GEOS in process, one point a call"),
            ("fence lookup, point (PostGIS's query)", "shapely", "locate, all", "fence lookup (point) vs shapely/GEOS in process, all probes in one vectorised call"),
            ("nearby friends, 500 m (ids, PostGIS's query)", "numpy", "nearby friends-first", "nearby (ids) vs numpy in process, friends first")]:
        r, theirs = eng(same, op), in_process(kind, query)
        if r and theirs:
            mean_us = 1e6 / number(r[2])
            add(f"engine {label}, at {same:,} users", f"{mean_us:.2f} µs mean", f"{theirs:.2f} µs", f"{theirs / mean_us:.1f}×", "", "reference")
    # Level 2 against level 3 and against /health, at 8 connections.
    health = wire("GET /health", 8)
    locate = wire("GET /v1/locate", 8)
    pg_locate = peer("PostGIS", "locate", 8)
    if locate and pg_locate:
        add("wire locate vs PostGIS, 8 connections", f"{locate:,.0f} req/s", f"{pg_locate:,.0f} tps", f"{locate / pg_locate:.2f}×", "≥ 1.0×", locate >= pg_locate)
    # Against /health: the median of the rounds' ratios where the rounds are there (a route
    # against the /health run of its own round), else the ratio of the medians.
    for route, label, goal in (("GET /v1/locate", "wire locate", 0.7),):
        rate, by_round = wire(route, 8), share(route, 8)
        if rate and health:
            value = by_round or (rate / health, rate / health, rate / health)
            add(f"{label} vs /health, 8 connections", f"{rate:,.0f} req/s", f"{health:,.0f} req/s", share_text(value), f"≥ {goal:.0%}".replace("%", " %"),
                value[0] >= goal)
    # One fix a request, accepted, decided and committed before the answer, against PostgreSQL
    # doing the same work on the wire (tools/bench/peers' fix transaction); its p99; and fixes
    # committed a second in batches of 50.
    fix, pg_fix = wire("POST /v1/fixes (1)", 8), peer("PostGIS", "fix", 8)
    if fix and pg_fix:
        add("wire one fix a request vs PostgreSQL's fix transaction, 8 connections", f"{fix:,.0f} req/s", f"{pg_fix:,.0f} tps",
            f"{fix / pg_fix:.2f}×", "≥ 2×", fix >= 2 * pg_fix)
    fix_p99 = wire("POST /v1/fixes (1)", 8, column=5)
    if fix_p99 is not None:
        add("wire one fix a request, p99 at 8 connections", f"{fix_p99:.2f} ms", "", "", "≤ 5 ms", fix_p99 <= 5)
    batches = wire("POST /v1/fixes (50)", 8)
    if batches:
        add("wire fixes in batches of 50, committed a second, 8 connections", f"{batches * 50:,.0f} fixes/s", "", "", "≥ 50,000 fixes/s",
            batches * 50 >= 50_000)
    # The nearest restroom against locate: time per request, round by round (tools/bench/http runs
    # them one after the other in each round): locate's requests/s over the places route's.
    places_route = "GET /v1/parks/{id}/places?category=restroom&limit=1"
    places, by_round = wire(places_route, 8), wire_rounds(places_route, 8)
    locate_rounds = wire_rounds("GET /v1/locate", 8)
    if places and locate:
        ratios = sorted(l / p for l, p in zip(locate_rounds, by_round)) if by_round and locate_rounds and len(by_round) == len(locate_rounds) \
            else [locate / places]
        median = statistics.median(ratios)
        spread = "" if ratios[0] == ratios[-1] else f" (rounds {ratios[0]:.2f}–{ratios[-1]:.2f}×)"
        add("wire nearest restroom vs locate, 8 connections (time per request)", f"{places:,.0f} req/s", f"{locate:,.0f} req/s",
            f"{median:.2f}×{spread}", "≤ 1.5×", median <= 1.5)
    nearby = wire("GET /v1/friends/nearby?radius=500", 8)
    best_pg = max(filter(None, [peer("PostGIS", q, c) for q in ("nearby-planner", "nearby-spatial", "nearby-friends-first") for c in (2, 8)]), default=None)
    best_redis = max(filter(None, [peer("Redis", q, c) for q in ("nearby search-first", "nearby friends-first") for c in (2, 8)]), default=None)
    if nearby and best_pg:
        add(f"wire nearby vs best PostGIS plan ({int(users):,} users)", f"{nearby:,.0f} req/s", f"{best_pg:,.0f} tps", f"{nearby / best_pg:.2f}×", "≥ 3× (at 1M)",
            nearby >= 3 * best_pg if at_1m else None)
    if nearby and best_redis:
        add(f"wire nearby vs best Redis script ({int(users):,} users)", f"{nearby:,.0f} req/s", f"{best_redis:,.0f} rps", f"{nearby / best_redis:.2f}×", "≥ 4× (at 1M)",
            nearby >= 4 * best_redis if at_1m else None)
    # The server itself holding every user's latest position (tools/bench/http prints its RSS).
    server_rss = next((int(line.split(":")[1].split()[0]) for line in (d / "http.md").read_text().splitlines()
                       if line.startswith("server RSS at the end:")), None)
    if server_rss is not None and users.isdigit():
        add(f"server memory with {int(users):,} users' positions (after the HTTP runs)", f"{server_rss:,} MiB", "", "", "≤ 1,024 MiB (at 1M)",
            server_rss <= 1024 if at_1m else None)
    # Scale over HTTP: a route's time per request in the largest world against a smaller one's,
    # round by round (the worlds served side by side, each route run at every size in turn): the
    # smaller world's requests/s over the largest's.
    for size in sorted({r[0] for r in http if r[0].isdigit() and r[0] != users}, key=int):
        for route, label in (("GET /v1/locate", "wire locate"), ("GET /v1/friends/nearby?radius=500", "wire nearby")):
            big, little = wire_rounds(route, 8), wire_rounds(route, 8, size)
            if big and little and len(big) == len(little):
                ratios = sorted(s / b for b, s in zip(big, little))
                median = statistics.median(ratios)
                spread = "" if ratios[0] == ratios[-1] else f" (rounds {ratios[0]:.2f}–{ratios[-1]:.2f}×)"
                add(f"{label}, 8 connections: {int(users):,} vs {int(size):,} users (time per request)",
                    f"{wire(route, 8):,.0f} req/s", f"{wire(route, 8, size):,.0f} req/s", f"{median:.2f}×{spread}", "≤ 1.2×", median <= 1.2)
    # Scale: the same engine operations at the largest size against the smallest, and memory. What
    # a client feels of nearby's scale is the HTTP rows above; the engine's are shown beside them.
    if large != small:
        for op, label, target in (("fence lookup, point (PostGIS's query)", "fence lookup, point", True),
                                  ("nearby friends, 500 m (ids, PostGIS's query)", "nearby friends (ids)", False),
                                  ("nearby friends, 500 m, named", "nearby friends, named", False)):
            a, b = eng(small, op), eng(large, op)
            if a and b:
                ratio = number(a[2]) / number(b[2])
                add(f"engine {label}: {large:,} vs {small:,} users (time per call)", f"{1e6 / number(b[2]):.2f} µs", f"{1e6 / number(a[2]):.2f} µs",
                    f"{ratio:.2f}×", "≤ 1.2×" if target else "", (ratio <= 1.2) if target else "reference")
        world = eng(large, "world")
        if world:
            rss = next((int(t.split()[1]) for t in world[5].split(";") if t.strip().startswith("RSS")), None)
            if rss is not None:
                add(f"memory with {large:,} users' positions (whole process)", f"{rss:,} MiB", "", "", "≤ 1,024 MiB", rss <= 1024)
    # The systems' answers compared (tools/bench/check.py), and what the run took.
    if (d / "check.md").exists():
        for r in rows(d / "check.md"):
            add(f"nearby answers of {r[0]} against PostGIS's", r[1], "", "", "the same friends", r[2] == "same")
    meta = dict(line.split("=", 1) for line in (d / "meta").read_text().splitlines() if "=" in line) if (d / "meta").exists() else {}
    if "seconds" in meta:
        minutes, seconds = divmod(int(float(meta["seconds"])), 60)
        steal = f"; CPU time stolen by the host: {meta['steal']}" if "steal" in meta else ""
        lines.append(f"\nWall time of the run: {minutes} min {seconds} s ({meta.get('command', 'tools/bench/all')}, {meta.get('host', '')}{steal}).")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
