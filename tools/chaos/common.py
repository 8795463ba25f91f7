"""Shared pieces of the chaos harnesses: a server under test and small HTTP helpers (stdlib only)."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def finish_run(name, work, failed):
    """After a harness's run: its directory removed if the run passed; kept, and named, if it failed."""
    if failed:
        print("%s: the database and the server's log are kept in %s" % (name, work))
    else:
        shutil.rmtree(work, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """`coasterlife serve` on a database of its own, on a loopback port."""

    def __init__(self, database, binary=None, extra=()):
        self.binary = binary or os.path.join(REPO, ".build/debug/coasterlife")
        self.database, self.port, self.extra = database, free_port(), list(extra)
        self.process = None
        if not os.access(self.binary, os.X_OK):
            sys.exit("no server binary at %s (swift build first)" % self.binary)

    def start(self):
        log = open(self.database + ".log", "a")
        self.process = subprocess.Popen(
            # Registrations and leaderboard pages are limited per address and per user; the
            # harnesses register every client from loopback and read boards flat out.
            [self.binary, "serve", "--database", self.database, "--port", str(self.port), "--bcrypt-cost", "4",
             "--registration-rate", "1000000", "--leaderboard-rate", "1000000", "--log-level", "warning", "--parks", os.path.join(REPO, "data/parks")] + self.extra,
            stdout=log, stderr=log, cwd=REPO)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if request(self.port, "GET", "/ready")[0] == 200:
                    return self
            except OSError:
                pass
            if self.process.poll() is not None:
                sys.exit("the server exited while starting; see %s.log" % self.database)
            time.sleep(0.1)
        sys.exit("the server did not become ready in 60 s")

    def rss_kib(self):
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            return self.process.wait(timeout=30)
        return self.process.returncode


def request(port, method, path, body=None, token=None, conn=None, timeout=10, content_type="application/json"):
    """One request; `body` is sent as JSON, or as it is if it is bytes (with `content_type`).
    Returns the status and the answer, decoded if it is JSON."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body)
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if own:
        conn.close()
    return response.status, (json.loads(data) if data and data[:1] in (b"{", b"[") else data)


def user(port, name, password="chaos harness pw"):
    """Registers and logs in; returns (id, token)."""
    request(port, "POST", "/v1/users", {"username": name, "password": password})
    status, body = request(port, "POST", "/v1/sessions", {"username": name, "password": password})
    if status != 201:
        sys.exit("cannot log in %s: %s %s" % (name, status, body))
    return body["user"]["id"], body["token"]


def now_rfc3339(offset=0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset))
