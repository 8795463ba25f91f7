#!/usr/bin/env python3
"""The service's answers for tools/bench/check.py: each of the first askers' friends within 500 m.

Reads the askers file `coasterbench load --askers` writes (`k id token`, asker by asker, in the
order every system draws them), asks `GET /v1/friends/nearby?radius=500` as each of the first
--count, and writes `asker friend metres` lines (tab-separated) to stdout, the metres as the
service shows them: bucketed up (10 m under 100 m, 50 m under 1 km). Run by tools/bench/http
right after the first refresh of the fixes, before any route moves a position.

usage: tools/bench/answers.py ASKERS PORT [--count 200]
"""
import argparse
import http.client
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("askers", help="askers file written by `coasterbench load --askers` (k id token)")
    parser.add_argument("port", type=int, help="the server's port on 127.0.0.1")
    parser.add_argument("--count", type=int, default=200, help="askers to ask, the first ones (default 200)")
    args = parser.parse_args()
    connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
    asked = set()
    with open(args.askers) as lines:
        for line in lines:
            if len(asked) >= args.count:
                break
            _, asker, token = line.split()
            if asker in asked:
                continue
            asked.add(asker)
            connection.request("GET", "/v1/friends/nearby?radius=500", headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                print(f"answers.py: GET /v1/friends/nearby as user {asker}: {response.status} {body[:200]!r}", file=sys.stderr)
                return 1
            for person in json.loads(body)["people"]:
                distance = person.get("distance")
                print(f"{asker}\t{person['user']['id']}\t{'' if distance is None else distance}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
