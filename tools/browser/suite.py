"""The browser suite of the /map pages (run by tools/browser/run, which starts the server).

Headless Chromium through chromium-driver and selenium. Set-up (users, friendships, fixes, wait
reports) goes through the JSON API with urllib; every check reads the page as a person's browser
has it: the SVG paths Leaflet drew, the attributes of the markers, the side table. Each check is a
named step; a failed step says what it expected and what the page had, and the run goes on with
the next step. The last line is "N passed, N failed"; the exit status is 1 if any step failed.
"""
import argparse
import http.client
import json
import math
import os
import re
import sys
import tempfile
import time
import traceback
import urllib.parse
import uuid

# Selenium Manager would try to download a driver or a browser; Debian's are named below.
os.environ.setdefault("SE_OFFLINE", "true")
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARK = "cedar-point"
PARK_FILE = os.path.join(REPO, "data/parks/cedar-point.geojson")
WAIT_RIDE = "millennium-force"  # the ride whose wait is reported (it has a zone: a point buffered to a circle)
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PHONE = (390, 844)
DESKTOP = (1280, 800)
LIVE_SECONDS = 30      # how long a live change may take to show
READY_SECONDS = 20     # how long a map page may take to set body[data-ready="true"]
PASSWORD = "browser suite pw"
# An entrance plaza of Cedar Point, inside its fence: where the signed-in visitor stands.
VISITOR_AT = (41.4822, -82.6835)


class Failure(Exception):
    """A check that did not hold; its message says what was expected and what was found."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def now_rfc3339(offset=0.0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset))


def destination(lat, lon, azimuth_degrees, metres):
    """A point `metres` from (lat, lon) along an azimuth, on a sphere: good to a few cm at 100 m,
    and the checks compare what the page shows with what was posted, not with this."""
    r = 6371008.8
    a = math.radians(azimuth_degrees)
    return (lat + math.degrees(metres * math.cos(a) / r),
            lon + math.degrees(metres * math.sin(a) / (r * math.cos(math.radians(lat)))))


def inside_ring(lat, lon, ring):
    """Ray casting over a GeoJSON ring of [lon, lat] positions."""
    inside = False
    for (x1, y1), (x2, y2) in zip(ring, ring[1:]):
        if (y1 > lat) != (y2 > lat) and lon < x1 + (lat - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


# MARK: the park file


def load_park_file():
    with open(PARK_FILE, encoding="utf-8") as f:
        return json.load(f)


def expected_zones(document):
    """Per kind, the zone count the page must draw: features of the file that have a geometry
    (a ride may have none: it is listed, but has no zone)."""
    counts, rides = {}, set()
    for feature in document["features"]:
        kind = feature["properties"].get("kind")
        if feature.get("geometry") is None:
            continue
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "ride":
            rides.add("%s.%s" % (PARK, feature["properties"]["id"]))
    return counts, rides


def park_ring(document):
    park = next(f for f in document["features"] if f["properties"].get("kind") == "park")
    check(park["geometry"]["type"] == "Polygon", "the park feature of %s is not a Polygon" % PARK_FILE)
    return park["geometry"]["coordinates"][0]


def proper_crossing(p1, p2, p3, p4):
    """Where segment p1p2 crosses p3p4 strictly inside both, in the lon/lat plane (as GEOS sees the
    park file's coordinates), else None."""
    d = (p2[0] - p1[0]) * (p4[1] - p3[1]) - (p2[1] - p1[1]) * (p4[0] - p3[0])
    if d == 0:
        return None
    t = ((p3[0] - p1[0]) * (p4[1] - p3[1]) - (p3[1] - p1[1]) * (p4[0] - p3[0])) / d
    u = ((p3[0] - p1[0]) * (p2[1] - p1[1]) - (p3[1] - p1[1]) * (p2[0] - p1[0])) / d
    if 0 < t < 1 and 0 < u < 1:
        return (p1[0] + t * (p2[0] - p1[0]), p1[1] + t * (p2[1] - p1[1]))
    return None


def self_crossings(ring):
    """Every proper crossing of two non-adjacent edges of a closed ring."""
    edges = list(zip(ring, ring[1:]))
    found = []
    for i in range(len(edges)):
        for j in range(i + 2, len(edges)):
            if i == 0 and j == len(edges) - 1:
                continue  # the first and last edges share the ring's first position
            at = proper_crossing(edges[i][0], edges[i][1], edges[j][0], edges[j][1])
            if at is not None:
                found.append(at)
    return found


def broken_park_file(document):
    """The real park file with (a) a land turned into a bowtie by swapping two neighbouring
    vertices of its ring, and (b) a ride point moved 1 km north of the park's northernmost vertex.
    Returns the document and {feature index: (lat, lon) where the problem is}."""
    broken = json.loads(json.dumps(document))
    features = broken["features"]
    expected = {}
    for index, feature in enumerate(features):
        if feature["properties"].get("kind") != "land" or feature["geometry"]["type"] != "Polygon":
            continue
        ring = feature["geometry"]["coordinates"][0]
        # Swap ring[i] and ring[i + 1] (neither the closing position): the edges ring[i-1]→ring[i+1]
        # and ring[i]→ring[i+2] then cross; take the first swap whose ring crosses itself exactly
        # once, so the one crossing is the point the validator must name.
        for i in range(1, len(ring) - 2):
            twisted = ring[:i] + [ring[i + 1], ring[i]] + ring[i + 2:]
            crossings = self_crossings(twisted)
            if len(crossings) == 1:
                feature["geometry"]["coordinates"][0] = twisted
                lon, lat = crossings[0]
                expected[index] = (lat, lon)
                break
        if expected:
            break
    check(expected, "could not make a bowtie of any land of %s" % PARK_FILE)
    top = max(park_ring(document), key=lambda position: position[1])
    outside = (round(top[1] + 1000 / 111_132.0, 7), top[0])  # 1 km north (111.1 km per degree of latitude there)
    for index, feature in enumerate(features):
        p = feature["properties"]
        if p.get("kind") == "ride" and feature.get("geometry") and feature["geometry"]["type"] == "Point" and "position" not in p:
            feature["geometry"]["coordinates"] = [outside[1], outside[0]]
            expected[index] = outside
            break
    check(len(expected) == 2, "no ride given as a Point in %s to move outside" % PARK_FILE)
    return broken, expected


# MARK: HTTP (the JSON API, and raw page requests where a browser cannot show a status code)


class Http:
    def __init__(self, base):
        u = urllib.parse.urlsplit(base)
        self.base, self.host, self.port = base, u.hostname, u.port

    def request(self, method, path, body=None, headers=None, timeout=30):
        """One request, no redirects followed. Returns (status, headers, body bytes)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def api(self, method, path, body=None, token=None, content_type="application/json", expect=None):
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        if body is not None:
            headers["Content-Type"] = content_type
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
        status, _, data = self.request(method, path, body, headers)
        decoded = json.loads(data) if data[:1] in (b"{", b"[") else data
        if expect is not None and status not in (expect if isinstance(expect, tuple) else (expect,)):
            raise Failure("%s %s answered %d, expected %s: %s" % (method, path, status, expect, str(decoded)[:400]))
        return status, decoded


class User:
    def __init__(self, http, username, password=PASSWORD, register=True):
        self.http, self.username, self.password = http, username, password
        if register:
            http.api("POST", "/v1/users", {"username": username, "password": password}, expect=201)
        _, session = http.api("POST", "/v1/sessions", {"username": username, "password": password}, expect=201)
        self.token, self.id = session["token"], session["user"]["id"]

    def fix(self, lat, lon, offset=0.0, accuracy=5):
        _, answer = self.http.api("POST", "/v1/fixes", {"lat": lat, "lon": lon, "accuracy": accuracy,
                                                         "recordedAt": now_rfc3339(offset), "id": uuid.uuid4().hex},
                                  token=self.token, expect=200)
        result = answer["results"][0]
        check(result["status"] == "accepted", "%s's fix at %.6f,%.6f was rejected: %s" % (self.username, lat, lon, result))
        return answer


def names_user(value, user_id):
    """Whether a JSON answer holds an object whose id is `user_id`."""
    if isinstance(value, dict):
        return value.get("id") == user_id or any(names_user(v, user_id) for v in value.values())
    if isinstance(value, list):
        return any(names_user(v, user_id) for v in value)
    return False


def multipart(fields, files):
    """A multipart/form-data body: fields {name: value}, files {name: (filename, bytes, type)}."""
    boundary = "----coasterlife-browser-" + uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, name, value)).encode())
    for name, (filename, data, kind) in files.items():
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n"
                      % (boundary, name, filename, kind)).encode() + data + b"\r\n")
    parts.append(("--%s--\r\n" % boundary).encode())
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


# MARK: the browser


class Browser:
    def __init__(self, base, work):
        self.base = base
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--no-first-run", "--no-default-browser-check", "--lang=en-US",
                         "--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=work)):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(CHROMEDRIVER, log_output=os.path.join(work, "chromedriver.log"))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(60)
        self.size = None
        self.viewport(*DESKTOP)

    def quit(self):
        self.driver.quit()

    def viewport(self, width, height):
        """The page's viewport, exactly (a headless window has a minimum width): a phone's is a
        mobile one, laid out by the page's viewport meta element as on a phone."""
        mobile = (width, height) == PHONE
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        self.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile})
        self.size = (width, height)

    def get(self, path):
        self.console_errors()  # what earlier pages logged is theirs
        self.driver.get(self.base + path)
        WebDriverWait(self.driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def one(self, css, what):
        found = self.all(css)
        check(found, "%s: no element matches %s on %s (title %r; the page begins: %s)"
              % (what, css, self.path(), self.driver.title, self.text()[:300]))
        return found[0]

    def path(self):
        return urllib.parse.urlsplit(self.driver.current_url).path

    def text(self):
        try:
            return " ".join(self.driver.find_element(By.TAG_NAME, "body").text.split())
        except WebDriverException:
            return ""

    def console_errors(self):
        """The browser console's errors since the last call, but for a missing favicon."""
        entries = self.driver.get_log("browser")
        return [e["message"] for e in entries if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]]

    def context(self):
        """What the page says and logged, for a failure's message."""
        return "console errors: %s; the page says: %s" % (self.console_errors() or "none", self.text()[:400])

    def ready(self, what):
        """Waits for body[data-ready="true"]: the page's script has drawn everything."""
        try:
            WebDriverWait(self.driver, READY_SECONDS).until(
                lambda d: d.execute_script("return document.body && document.body.dataset.ready") == "true")
        except TimeoutException:
            state = self.js("return document.body ? document.body.getAttribute('data-ready') : 'no body'")
            raise Failure("%s: body never got data-ready=\"true\" within %d s on %s (data-ready is %r); console errors: %s; the page begins: %s"
                          % (what, READY_SECONDS, self.path(), state, self.console_errors() or "none", self.text()[:300]))

    def submit(self, form, what):
        """Submits a form with its own submit button, as a person would, and waits for the next page."""
        old = self.driver.find_element(By.TAG_NAME, "html")
        buttons = form.find_elements(By.CSS_SELECTOR, "button[type=submit], input[type=submit], button:not([type])")
        if buttons:
            buttons[0].click()
        else:
            form.submit()
        try:
            WebDriverWait(self.driver, 60).until(expected_conditions.staleness_of(old))
            WebDriverWait(self.driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
        except TimeoutException:
            raise Failure("%s: submitting the form did not lead to a new page within 60 s (still on %s)" % (what, self.path()))

    def cookie_header(self):
        return "; ".join("%s=%s" % (c["name"], c["value"]) for c in self.driver.get_cookies())

    def screenshot(self, directory, name):
        path = os.path.join(directory, name)
        check(self.driver.save_screenshot(path), "could not write the screenshot %s" % path)
        return path


# MARK: the suite


class Suite:
    def __init__(self, base, work, screenshots, admin, admin_password):
        self.http = Http(base)
        self.work, self.screenshots = work, screenshots
        self.admin_name, self.admin_password = admin, admin_password
        self.document = load_park_file()
        self.browser = None
        self.visitor = self.friend = self.rider = None
        self.admin_signed_in = False
        self.results = []

    # Steps run in order; each one that fails is reported and the next one runs.
    def step(self, name, function):
        started = time.time()
        print("tools/browser: %s…" % name, file=sys.stderr, flush=True)
        try:
            detail = function()
            self.results.append((name, True))
            print("tools/browser:   ok (%.1f s)%s" % (time.time() - started, (": " + detail) if detail else ""), file=sys.stderr, flush=True)
        except Failure as failure:
            self.results.append((name, False))
            print("tools/browser:   FAILED: %s" % failure, file=sys.stderr, flush=True)
        except Exception:  # a harness error or the browser's: still one failed step, with its trace
            self.results.append((name, False))
            print("tools/browser:   FAILED with an error:\n%s" % traceback.format_exc(), file=sys.stderr, flush=True)

    def needs(self, *attributes):
        for attribute in attributes:
            check(getattr(self, attribute) is not None, "not run: the set-up step did not make %s" % attribute)

    # Set-up through the JSON API.

    def set_up_visitor(self):
        self.browser = Browser(self.http.base, self.work)
        self.visitor = User(self.http, "ann.browser")
        # In the park: the page of a park being visited gets that park's waits over /v1/live.
        self.visitor.fix(*VISITOR_AT, offset=-120)
        return "visitor %s (id %d) at Cedar Point" % (self.visitor.username, self.visitor.id)

    def set_up_others(self):
        self.friend = User(self.http, "bob.browser")
        self.rider = User(self.http, "cat.browser")
        self.http.api("POST", "/v1/friends/requests", {"username": self.friend.username}, token=self.visitor.token, expect=(200, 201, 202))
        self.http.api("POST", "/v1/friends/requests/%d/accept" % self.visitor.id, token=self.friend.token, expect=(200, 201, 204))
        self.http.api("PUT", "/v1/friends/%d/sharing" % self.visitor.id, {"precision": "exact"}, token=self.friend.token, expect=204)
        _, friends = self.http.api("GET", "/v1/friends", token=self.visitor.token, expect=200)
        check(names_user(friends, self.friend.id), "the friendship did not take: GET /v1/friends says %s" % str(friends)[:300])
        return "friend %s (id %d, sharing exact), rider %s (id %d)" % (self.friend.username, self.friend.id, self.rider.username, self.rider.id)

    # Sign-in.

    def sign_in(self, user, password):
        b = self.browser
        b.get("/map/login")
        form = b.one("form:has(input[type=password])", "the sign-in page")
        name = (form.find_elements(By.CSS_SELECTOR, "input[name=username]") or form.find_elements(By.CSS_SELECTOR, "input[autocomplete=username]"))
        check(name, "the sign-in form has no input[name=username]")
        name[0].clear()
        name[0].send_keys(user)
        secret = form.find_element(By.CSS_SELECTOR, "input[type=password]")
        secret.clear()
        secret.send_keys(password)
        b.submit(form, "signing in as %s" % user)

    def signed_in(self):
        """GET /map shows the parks to a signed-in person and the sign-in form to anyone else."""
        b = self.browser
        b.get("/map")
        return not b.all("input[type=password]")

    def cookie_signs_in(self, cookie):
        """Whether GET /map with this Cookie header shows the parks (200, no password field), not a
        redirect or the sign-in form."""
        status, _, body = self.http.request("GET", "/map", headers={"Cookie": cookie})
        return status == 200 and not re.search(rb"type=[\"']?password", body)

    def check_sign_in(self):
        self.needs("browser", "visitor")
        b = self.browser
        b.driver.delete_all_cookies()
        # A wrong password: an alert, and still signed out.
        self.sign_in(self.visitor.username, "not the password")
        alerts = [a for a in b.all("[role=alert]") if a.is_displayed() and a.text.strip()]
        check(alerts, "after a wrong password, no visible [role=alert] with text on %s; the page says: %s" % (b.path(), b.text()[:300]))
        message = alerts[0].text.strip()
        check(not self.signed_in(), "after a wrong password, GET /map does not show the sign-in form (signed in anyway?)")
        # The right one.
        before = {(c["name"], c["value"]) for c in b.driver.get_cookies()}
        self.sign_in(self.visitor.username, self.visitor.password)
        check(not b.all("form input[type=password]"), "after the right password, %s still shows a password field; the page says: %s" % (b.path(), b.text()[:300]))
        # The session cookie: one that signing in set or changed, and that alone signs GET /map in.
        changed = [c for c in b.driver.get_cookies() if (c["name"], c["value"]) not in before]
        session = [c for c in changed if self.cookie_signs_in("%s=%s" % (c["name"], c["value"]))]
        check(session, "no cookie that signing in set or changed (%s) signs GET /map in on its own" % [c["name"] for c in changed])
        for cookie in session:
            check(cookie.get("httpOnly") is True and cookie.get("sameSite") == "Strict",
                  "the cookie %s set at sign-in is not HttpOnly with SameSite=Strict: %s" % (cookie["name"], {k: cookie.get(k) for k in ("httpOnly", "sameSite", "path")}))
        check(self.signed_in(), "after signing in, GET /map still shows the sign-in form")
        links = b.all('a[href$="/map/parks/%s"]' % PARK)
        check(links, "signed in, GET /map lists no link to /map/parks/%s; it says: %s" % (PARK, b.text()[:300]))
        return "the wrong password said %r; the session cookie %s is HttpOnly, SameSite=Strict" % (message[:80], ", ".join(c["name"] for c in session))

    def check_sign_in_briefly(self):
        self.needs("browser", "visitor")
        self.sign_in(self.visitor.username, self.visitor.password)
        check(self.signed_in(), "after signing in, GET /map still shows the sign-in form; it says: %s" % self.browser.text()[:300])

    def check_csrf_login(self):
        # No cookie and no token at all, then with the cookies a GET of the form gives but no token.
        form = urllib.parse.urlencode({"username": "ann.browser", "password": PASSWORD}).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        status, _, body = self.http.request("POST", "/map/login", form, headers)
        check(status == 403, "POST /map/login with neither cookie nor CSRF token answered %d, expected 403: %s" % (status, body[:200]))
        status, answer, page = self.http.request("GET", "/map/login")
        check(status == 200, "GET /map/login answered %d" % status)
        policy = answer.get("Content-Security-Policy") or ""
        check(policy, "GET /map/login has no Content-Security-Policy header")
        scripts = re.search(r"script-src([^;]*)", policy) or re.search(r"default-src([^;]*)", policy)
        check(scripts and "'unsafe-inline'" not in scripts.group(1) and "*" not in scripts.group(1).split(),
              "the Content-Security-Policy allows inline or any script: %s" % policy)
        cookies = "; ".join(c.split(";", 1)[0] for c in answer.get_all("Set-Cookie") or [])
        status, _, body = self.http.request("POST", "/map/login", form, dict(headers, Cookie=cookies))
        check(status == 403, "POST /map/login with the form's cookies (%s) but no CSRF token answered %d, expected 403: %s"
              % (cookies or "none set", status, body[:200]))
        return "403 both times; CSP: %s" % policy[:160]

    # The park.

    def open_park(self, what):
        b = self.browser
        b.get("/map/parks/%s" % PARK)
        check(b.path() == "/map/parks/%s" % PARK, "%s: GET /map/parks/%s ended on %s (signed out?)" % (what, PARK, b.path()))
        b.ready(what)

    def check_ride_zones(self):
        self.needs("browser", "visitor")
        b = self.browser
        self.open_park("Cedar Point's map")
        counts, rides = expected_zones(self.document)
        drawn = b.all("path.zone-ride")
        check(len(drawn) == counts["ride"], "%d ride zones drawn (path.zone-ride), expected %d: the ride features of %s with a geometry (%s)"
              % (len(drawn), counts["ride"], os.path.relpath(PARK_FILE, REPO), b.context()))
        ids = {p.get_attribute("data-ride-id") for p in drawn}
        check(ids == rides, "the drawn ride zones' data-ride-id differ from the file's rides: missing %s, unexpected %s"
              % (sorted(rides - ids)[:5], sorted(ids - rides)[:5]))
        rows = b.all('table#zones tbody tr[data-kind="ride"]')
        check(len(rows) == counts["ride"], "the side table has %d rows table#zones tbody tr[data-kind=\"ride\"], expected %d"
              % (len(rows), counts["ride"]))
        return "%d ride zones drawn and %d in the side table, as in the park file" % (len(drawn), len(rows))

    def check_park_map(self):
        """The rest of the park page: the other kinds of zone, their classes, the scale bar, the
        attribution, and nothing fetched from anywhere but the service itself."""
        self.needs("browser", "visitor")
        b = self.browser
        self.open_park("Cedar Point's map")
        counts, _ = expected_zones(self.document)
        problems = []
        for kind in ("park", "land", "ride", "queue", "poi"):
            n = len(b.all("path.zone.zone-%s" % kind))
            if n != counts.get(kind, 0):
                problems.append("%d path.zone.zone-%s, expected %d" % (n, kind, counts.get(kind, 0)))
        unnamed = b.js("return [...document.querySelectorAll('path.zone')].filter(p => !p.dataset.zoneId).length")
        if unnamed:
            problems.append("%d zone paths without data-zone-id" % unnamed)
        if not b.all(".leaflet-control-scale"):
            problems.append("no scale bar (.leaflet-control-scale)")
        if "© OpenStreetMap contributors" not in b.text():
            problems.append("no \"© OpenStreetMap contributors\" on the page")
        if b.all("img.leaflet-tile"):
            problems.append("%d tile images on a server started with --tiles none" % len(b.all("img.leaflet-tile")))
        origin = b.js("return location.origin")
        foreign = b.js("return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith(arguments[0]))", origin)
        if foreign:
            problems.append("resources fetched from elsewhere than %s: %s" % (origin, foreign[:5]))
        errors = b.console_errors()
        if errors:
            problems.append("console errors: %s" % errors[:5])
        # Leaflet as Debian installed it (the minified build or the full one), not a copy of its own.
        for asset, debian in (("leaflet.js", ("leaflet.min.js", "leaflet.js")), ("leaflet.css", ("leaflet.css",)),
                              ("images/marker-icon.png", ("images/marker-icon.png",))):
            status, _, served = self.http.request("GET", "/map/assets/leaflet/" + asset)
            originals = []
            for name in debian:
                with open(os.path.join("/usr/share/javascript/leaflet", name), "rb") as f:
                    originals.append(f.read())
            if status != 200 or served not in originals:
                problems.append("GET /map/assets/leaflet/%s answered %d with %d bytes, not Debian's %s (%s bytes)"
                                % (asset, status, len(served), " or ".join(debian), " or ".join(str(len(o)) for o in originals)))
        check(not problems, "; ".join(problems) + "; the page says: %s" % b.text()[:400])
        return ", ".join("%d %s" % (counts[k], k) for k in sorted(counts))

    def check_wait_colour(self):
        self.needs("browser", "visitor", "rider")
        b = self.browser
        ride = next(f for f in self.document["features"] if f["properties"].get("kind") == "ride" and f["properties"]["id"] == WAIT_RIDE)
        lon, lat = ride["geometry"]["coordinates"]
        ride_id = "%s.%s" % (PARK, WAIT_RIDE)
        # The rider stands at the ride's station point: inside its zone (a 25 m circle around it).
        self.rider.fix(lat, lon, accuracy=6)
        self.open_park("Cedar Point's map")
        path_css = 'path.zone-ride[data-ride-id="%s"]' % ride_id
        cell_css = 'td.wait[data-ride-id="%s"]' % ride_id
        path = b.one(path_css, "the wait colour")
        band, fill = path.get_attribute("data-band"), path.get_attribute("fill")
        check(band == "none", "before any report, %s has data-band=%r, expected \"none\" (no evidence yet)" % (path_css, band))
        b.one(cell_css, "the wait in the side table")
        _, answer = self.http.api("POST", "/v1/rides/%s/waits" % ride_id, {"minutes": 45}, token=self.rider.token, expect=201)
        estimate = answer["estimate"]
        check(estimate.get("status") == "estimated" and "minutes" in estimate, "the report gave no estimate: %s" % estimate)
        minutes = estimate["minutes"]
        shown = {str(int(math.floor(minutes))), str(int(round(minutes))), str(int(math.ceil(minutes)))}
        deadline = time.time() + LIVE_SECONDS
        state = None
        while time.time() < deadline:
            state = b.js("const p = document.querySelector(arguments[0]), c = document.querySelector(arguments[1]);"
                         "return [p && p.getAttribute('data-band'), p && p.getAttribute('fill'), c && c.textContent.trim()]",
                         path_css, cell_css)
            if state[0] not in (None, "none") and state[1] != fill and any(re.search(r"(?<!\d)%s(?!\d)" % m, state[2] or "") for m in shown):
                break
            time.sleep(0.5)
        new_band, new_fill, text = state
        problems = []
        if new_band not in ("short", "medium", "long"):
            problems.append("data-band is %r, expected short, medium or long" % new_band)
        if new_fill == fill:
            problems.append("its fill is still %r" % fill)
        if not any(re.search(r"(?<!\d)%s(?!\d)" % m, text or "") for m in shown):
            problems.append("%s says %r, expected the estimate's %.1f minutes" % (cell_css, text, minutes))
        check(not problems, "%d s after a 45-minute report (estimate %.1f min): %s" % (LIVE_SECONDS, minutes, "; ".join(problems)))
        return "band %s, fill %s → %s, the side table says %r" % (new_band, fill, new_fill, text)

    def check_friend_moves(self):
        self.needs("browser", "visitor", "friend")
        b = self.browser
        ring = park_ring(self.document)
        # The friend's two fixes 100 m apart, both inside the park, near the visitor.
        for azimuth in range(0, 360, 30):
            first = destination(*VISITOR_AT, azimuth, 150)
            second = destination(*first, (azimuth + 90) % 360, 100)
            if inside_ring(*first, ring) and inside_ring(*second, ring):
                break
        else:
            raise Failure("no two points 100 m apart inside the park near %s" % (VISITOR_AT,))
        self.friend.fix(*first, offset=-60)
        me = destination(*VISITOR_AT, 0, 30)
        self.visitor.fix(*me)
        b.get("/map/me")
        check(b.path() == "/map/me", "GET /map/me ended on %s" % b.path())
        b.ready("my map")
        css = '.friend[data-user-id="%d"]' % self.friend.id

        def position(selector):
            return b.js("const e = document.querySelector(arguments[0]);"
                        "return e && [e.getAttribute('data-lat'), e.getAttribute('data-lon')]", selector)

        def near(found, expected):
            try:
                return found and abs(float(found[0]) - expected[0]) <= 1e-4 and abs(float(found[1]) - expected[1]) <= 1e-4
            except (TypeError, ValueError):
                return False

        # Drawn by the time the page says it is ready (two seconds' grace for the last paint).
        deadline = time.time() + 2
        mine, found = position(".me-marker[data-lat][data-lon]"), position(css)
        while time.time() < deadline and not (mine and found):
            time.sleep(0.5)
            mine, found = position(".me-marker[data-lat][data-lon]"), position(css)
        check(near(mine, me), "my own marker .me-marker[data-lat][data-lon] is at %s, expected my latest fix %.6f,%.6f (±1e-4°)" % (mine, *me))
        check(found, "no %s on /map/me (friends drawn: %s)" % (css, b.js("return [...document.querySelectorAll('.friend')].map(e => e.outerHTML.slice(0, 160))")))
        check(near(found, first), "%s is at %s, expected the friend's fix %.6f,%.6f (±1e-4°)" % (css, found, *first))
        self.friend.fix(*second)
        deadline = time.time() + LIVE_SECONDS
        while time.time() < deadline and not near(found, second):
            time.sleep(0.5)
            found = position(css)
        check(near(found, second), "%d s after the friend's fix 100 m away at %.6f,%.6f, %s is at %s"
              % (LIVE_SECONDS, *second, css, found))
        return "me at %s; the friend moved from %s to %s" % (mine, ",".join("%.6f" % v for v in first), found)

    def check_refusals(self):
        self.needs("browser", "visitor")
        cookies = self.browser.cookie_header()
        status, headers, body = self.http.request("GET", "/map/parks/no-such-park", headers={"Cookie": cookies})
        check(status == 404 and (headers.get("Content-Type") or "").startswith("text/html"),
              "GET /map/parks/no-such-park (signed in) answered %d %s, expected a 404 page (text/html)" % (status, headers.get("Content-Type")))
        status, headers, body = self.http.request("GET", "/map/admin/parks", headers={"Cookie": cookies})
        check(status == 403, "GET /map/admin/parks as a member answered %d, expected 403: %s" % (status, body[:200]))
        return "404 page for no-such-park, 403 for a member on /map/admin/parks"

    def check_phone_and_screenshots(self):
        self.needs("browser", "visitor")
        b = self.browser
        try:
            b.viewport(*DESKTOP)
            self.open_park("Cedar Point's map at desktop size")
            time.sleep(0.3)
            b.screenshot(self.screenshots, "park-desktop.png")
            b.viewport(*PHONE)
            self.open_park("Cedar Point's map at phone size")
            time.sleep(0.3)
            b.screenshot(self.screenshots, "park-phone.png")
            width, inner = b.js("return [document.documentElement.scrollWidth, innerWidth]")
            check(inner == PHONE[0], "at phone size the page lays out %d px wide, not the phone's %d (no viewport meta element?)" % (inner, PHONE[0]))
            check(width <= inner, "at phone size the park page scrolls sideways: scrollWidth %d > innerWidth %d" % (width, inner))
        finally:
            b.viewport(*DESKTOP)
        return "park-desktop.png, park-phone.png; at %d px nothing overflows" % PHONE[0]

    def check_sign_out(self):
        self.needs("browser", "visitor")
        b = self.browser
        b.get("/map")
        form = b.one('form[action$="/map/logout"]', "signing out")
        b.submit(form, "signing out")
        check(not self.signed_in(), "after POST /map/logout, GET /map does not show the sign-in form")

    # Admin.

    def upload(self, path, what):
        b = self.browser
        b.get("/map/admin/parks")
        check(b.path() == "/map/admin/parks", "%s: GET /map/admin/parks ended on %s" % (what, b.path()))
        form = b.one("form#upload", what)
        field = b.one('form#upload input[type=file][name=park]', what)
        field.send_keys(path)
        b.submit(form, what)

    def sign_in_admin(self):
        if not self.admin_signed_in:
            self.browser.driver.delete_all_cookies()
            self.sign_in(self.admin_name, self.admin_password)
            check(self.signed_in(), "signed in as the admin %s, GET /map still shows the sign-in form" % self.admin_name)
            self.admin_signed_in = True

    def check_admin_preview(self):
        self.needs("browser")
        b = self.browser
        _, session = self.http.api("POST", "/v1/sessions", {"username": self.admin_name, "password": self.admin_password}, expect=201)
        broken, expected = broken_park_file(self.document)
        body = json.dumps(broken).encode()
        # What the validator says of it, through the JSON API (a refused park file writes nothing).
        status, problem = self.http.api("PUT", "/v1/admin/parks/%s" % PARK, body, token=session["token"], content_type="application/geo+json")
        check(status == 422, "PUT /v1/admin/parks/%s with the broken file answered %d, expected 422: %s" % (PARK, status, str(problem)[:300]))
        api_features = sorted({e.get("feature") for e in problem.get("errors", [])}, key=str)
        check(api_features == sorted(expected), "the JSON API names features %s in the broken file, the suite made problems in %s: %s"
              % (api_features, sorted(expected), problem.get("errors")))
        path = os.path.join(self.work, "broken-cedar-point.geojson")
        with open(path, "wb") as f:
            f.write(body)
        self.sign_in_admin()
        b.viewport(*DESKTOP)
        self.upload(path, "the broken park file's preview")
        b.ready("the broken park file's preview")
        items = b.all("ol#problems li")
        listed = sorted(li.get_attribute("data-feature") for li in items)
        check(listed == sorted(str(i) for i in expected), "ol#problems lists data-feature %s, expected %s (%s); the items say: %s"
              % (listed, sorted(expected), "; ".join("feature %d at %.7f,%.7f" % (i, *expected[i]) for i in sorted(expected)),
                 [li.text[:120] for li in items]))
        markers = b.js("return [...document.querySelectorAll('.problem-marker[data-lat][data-lon]')].map(e =>"
                       " [parseFloat(e.getAttribute('data-lat')), parseFloat(e.getAttribute('data-lon')), !!e.closest('.leaflet-container')])")
        missing = []
        for index, (lat, lon) in sorted(expected.items()):
            if not any(abs(m[0] - lat) <= 1e-5 and abs(m[1] - lon) <= 1e-5 and m[2] for m in markers):
                missing.append("feature %d's at %.7f,%.7f" % (index, lat, lon))
        check(not missing, "no .problem-marker in the map (.leaflet-container) for %s (±1e-5°); the markers: %s" % (", ".join(missing), markers))
        b.screenshot(self.screenshots, "admin-desktop.png")
        b.viewport(*PHONE)
        time.sleep(1)  # Leaflet re-lays the map out on the resize
        b.screenshot(self.screenshots, "admin-phone.png")
        b.viewport(*DESKTOP)
        return "problems %s, markers at %s; admin-desktop.png, admin-phone.png" % (listed, ["%.7f,%.7f" % tuple(m[:2]) for m in markers])

    def check_admin_refusals(self):
        self.needs("browser")
        b = self.browser
        self.sign_in_admin()
        cookies = b.cookie_header()
        data, kind = multipart({}, {"park": ("cedar-point.geojson", open(PARK_FILE, "rb").read(), "application/geo+json")})
        status, _, body = self.http.request("POST", "/map/admin/parks", data, {"Content-Type": kind, "Cookie": cookies})
        check(status == 403, "POST /map/admin/parks as the admin with no CSRF token answered %d, expected 403: %s" % (status, body[:200]))
        said = {}
        for name, content in (("not-geojson.txt", b"this is not a park file\n"),
                              ("huge.geojson", b"{\"type\":\"FeatureCollection\",\"features\":[]" + b" " * (51 * 1024 * 1024) + b"}")):
            path = os.path.join(self.work, name)
            with open(path, "wb") as f:
                f.write(content)
            self.upload(path, "uploading %s" % name)
            alerts = [a.text.strip() for a in b.all("[role=alert]") if a.is_displayed() and a.text.strip()]
            os.remove(path)
            check(alerts, "after uploading %s (%d bytes), no visible [role=alert] with text on %s; the page says: %s"
                  % (name, len(content), b.path(), b.text()[:300]))
            said[name] = alerts[0][:100]
        return "403 without the token; %s" % "; ".join("%s: %r" % kv for kv in said.items())

    def check_admin_load(self):
        self.needs("browser")
        b = self.browser
        self.sign_in_admin()
        valid = json.loads(json.dumps(self.document))
        ride = next(f for f in valid["features"] if f["properties"].get("kind") == "ride" and f["properties"]["id"] == "blue-streak")
        renamed = ride["properties"]["name"] = "Blue Streak (browser suite)"
        path = os.path.join(self.work, "cedar-point-renamed.geojson")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(valid, f)
        self.upload(path, "a valid park file's preview")
        problems = b.all("ol#problems li")
        check(not problems, "a valid park file is previewed with problems: %s" % [li.text[:120] for li in problems])
        form = b.one("form#load", "a valid park file's preview")
        b.submit(form, "loading the previewed park")
        _, session = self.http.api("POST", "/v1/sessions", {"username": self.admin_name, "password": self.admin_password}, expect=201)
        _, rides = self.http.api("GET", "/v1/parks/%s/rides" % PARK, token=session["token"], expect=200)
        check(renamed in json.dumps(rides, ensure_ascii=False), "after form#load, GET /v1/parks/%s/rides has no ride named %r: the park was not written"
              % (PARK, renamed))
        return "form#load wrote the park (%r is served)" % renamed

    def run(self, mode):
        self.step("set-up: the visitor, through the JSON API, and a headless Chromium", self.set_up_visitor)
        if mode == "full":
            self.step("set-up: a friend sharing exact positions and a rider, through the JSON API", self.set_up_others)
            self.step("sign in through the form (a wrong password first)", self.check_sign_in)
            self.step("forms refuse a POST without its CSRF token; the pages' Content-Security-Policy", self.check_csrf_login)
        else:
            self.step("sign in through the form", self.check_sign_in_briefly)
        self.step("Cedar Point: the drawn ride zones against the park file", self.check_ride_zones)
        if mode == "full":
            self.step("Cedar Point: every kind of zone, scale bar, attribution, nothing from elsewhere", self.check_park_map)
            self.step("a wait report colours its ride zone live", self.check_wait_colour)
            self.step("a friend's marker moves live after a fix; my own marker", self.check_friend_moves)
            self.step("a missing park is a 404 page; a member is refused the admin pages", self.check_refusals)
            self.step("screenshots of the park; nothing wider than a phone", self.check_phone_and_screenshots)
            self.step("sign out through the form", self.check_sign_out)
            self.step("admin: a broken park file's problems drawn where they are", self.check_admin_preview)
            self.step("admin: refusals (no CSRF token, not GeoJSON, over 50 MB)", self.check_admin_refusals)
            self.step("admin: a valid file previews with form#load, which writes it", self.check_admin_load)
        if self.browser is not None:
            self.browser.quit()
        passed = sum(1 for _, ok in self.results if ok)
        failed = len(self.results) - passed
        for name, ok in self.results:
            if not ok:
                print("tools/browser: FAILED: %s" % name, file=sys.stderr)
        print("%d passed, %d failed" % (passed, failed))
        return 0 if failed == 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--mode", choices=("smoke", "full"), default="full")
    parser.add_argument("--screenshots", required=True, help="directory for the PNGs")
    parser.add_argument("--work", required=True, help="scratch directory (browser profile, uploaded files, chromedriver.log)")
    args = parser.parse_args()
    admin = os.environ.get("COASTERLIFE_BROWSER_ADMIN")
    password = os.environ.get("COASTERLIFE_BROWSER_ADMIN_PASSWORD")
    if args.mode == "full" and not (admin and password):
        sys.exit("suite.py: COASTERLIFE_BROWSER_ADMIN and COASTERLIFE_BROWSER_ADMIN_PASSWORD name the park admin")
    os.makedirs(args.screenshots, exist_ok=True)
    sys.exit(Suite(args.base, args.work, args.screenshots, admin, password).run(args.mode))


if __name__ == "__main__":
    main()
