#!/usr/bin/env python3
"""One fresh fix for every sampled user of a benchmark tokens file, at their position.

Run by tools/bench/http before each round, not measured. It looks every session token up once
(the first request with a token reads its session from the store, then it is cached, so whichever
route ran first carried that cost), and it gives every user a fix from the last minutes, as a user
reporting a wait at a ride has: the server refuses a report without an accepted fix in the last
10 minutes, and the load's fixes are as old as the load is long (9.5 min at 1M users on a slow
host: long enough for most of a run's reports to be refused).

usage: tools/bench/refresh.py TOKENS PORT [--connections 8]
"""
import argparse
import datetime
import http.client
import json
import sys
import threading


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tokens", help="tokens file written by `coasterbench load` (token lat lon park ride)")
    parser.add_argument("port", type=int, help="the server's port on 127.0.0.1")
    parser.add_argument("--connections", type=int, default=8, help="concurrent connections (default 8)")
    args = parser.parse_args()
    users = [line.split() for line in open(args.tokens) if line.strip()]
    failures: list[str] = []
    lock = threading.Lock()

    def work(part: list[list[str]]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        try:
            for token, lat, lon, *_ in part:
                now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
                body = json.dumps([{"lat": float(lat), "lon": float(lon), "accuracy": 8,
                                    "recordedAt": now.isoformat(timespec="microseconds").replace("+00:00", "Z")}])
                connection.request("POST", "/v1/fixes", body, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
                response = connection.getresponse()
                answer = response.read()
                if response.status != 200:
                    with lock:
                        failures.append(f"{response.status} {answer[:200]!r}")
        except (OSError, http.client.HTTPException) as error:
            with lock:
                failures.append(f"{type(error).__name__}: {error}")
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(users[i::args.connections],)) for i in range(args.connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        print(f"refresh.py: {len(failures)} failures refreshing {len(users)} users' fixes, e.g. {failures[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
