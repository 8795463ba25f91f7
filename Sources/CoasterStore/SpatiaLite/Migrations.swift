import CoasterCore
import GRDB

/// The schema's history. Append-only: a migration that has shipped is never edited; a change is a
/// new migration.
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("2026-11-21 spatial metadata") { db in
            // InitSpatialMetaData(1, …) would open its own transaction inside the migration's and
            // abort it; the form without the flag runs inside ours. 'WGS84' loads the 4326 family
            // (129 rows) instead of 6,000 reference systems.
            if try Int.fetchOne(db, sql: "SELECT CheckSpatialMetaData()") == 0 {
                try db.spatialiteCall("SELECT InitSpatialMetaData('WGS84')")
            }
        }

        migrator.registerMigration("2026-11-21 parks, zones, rides") { db in
            try db.execute(sql: """
                CREATE TABLE parks (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    time_zone TEXT NOT NULL,
                    attribution TEXT,
                    imported_at REAL NOT NULL
                );
                CREATE TABLE rides (
                    id TEXT PRIMARY KEY NOT NULL,
                    park_id TEXT NOT NULL REFERENCES parks(id),
                    name TEXT NOT NULL,
                    type TEXT NOT NULL,
                    status TEXT NOT NULL,
                    land TEXT,
                    min_height_cm INTEGER,
                    max_height_cm INTEGER,
                    height_m REAL,
                    speed_kmh REAL,
                    length_m REAL,
                    inversions INTEGER,
                    manufacturer TEXT,
                    model TEXT,
                    opened INTEGER,
                    material TEXT,
                    stats_source TEXT,
                    -- Rides are never deleted by a re-import (ride logs point at them); a ride missing
                    -- from the newest file is unlisted instead.
                    listed INTEGER NOT NULL DEFAULT 1,
                    position INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX rides_by_park ON rides(park_id, listed, position);
                CREATE TABLE zones (
                    id TEXT PRIMARY KEY NOT NULL,
                    park_id TEXT NOT NULL REFERENCES parks(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('ride', 'queue', 'land', 'poi')),
                    name TEXT NOT NULL,
                    ride_id TEXT REFERENCES rides(id),
                    position INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX zones_by_park ON zones(park_id, position);
                """)
            try db.spatialiteCall("SELECT AddGeometryColumn('parks', 'boundary', 4326, 'MULTIPOLYGON', 'XY', 1)")
            try db.spatialiteCall("SELECT CreateSpatialIndex('parks', 'boundary')")
            try db.spatialiteCall("SELECT AddGeometryColumn('zones', 'area', 4326, 'MULTIPOLYGON', 'XY', 1)")
            try db.spatialiteCall("SELECT CreateSpatialIndex('zones', 'area')")
        }

        migrator.registerMigration("2026-11-21 accounts, sessions, friends") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    -- Always lowercase: usernames are unique case-insensitively.
                    username TEXT NOT NULL UNIQUE,
                    display_name TEXT NOT NULL,
                    bio TEXT NOT NULL DEFAULT '',
                    password_hash TEXT NOT NULL,
                    role TEXT NOT NULL CHECK (role IN ('member', 'admin')),
                    created_at REAL NOT NULL,
                    ghost TEXT NOT NULL DEFAULT 'off' CHECK (ghost IN ('off', 'on', 'until')),
                    ghost_until REAL,
                    precision TEXT NOT NULL DEFAULT 'exact' CHECK (precision IN ('exact', 'approximate', 'park-only')),
                    last_seen_at REAL
                );
                -- Only a hash of each token is stored: a stolen database holds no usable token.
                CREATE TABLE sessions (
                    token_hash BLOB PRIMARY KEY NOT NULL,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    revoked_at REAL
                );
                CREATE INDEX sessions_by_user ON sessions(user_id);
                -- One row per pair of users: pending from requester to addressee, or accepted.
                CREATE TABLE friendships (
                    requester INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    addressee INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    status TEXT NOT NULL CHECK (status IN ('pending', 'accepted')),
                    created_at REAL NOT NULL,
                    accepted_at REAL,
                    PRIMARY KEY (requester, addressee),
                    CHECK (requester <> addressee)
                );
                CREATE INDEX friendships_by_addressee ON friendships(addressee, status);
                CREATE TABLE blocks (
                    blocker INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    blocked INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at REAL NOT NULL,
                    PRIMARY KEY (blocker, blocked)
                );
                CREATE INDEX blocks_by_blocked ON blocks(blocked);
                CREATE TABLE sharing_overrides (
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    friend_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    precision TEXT CHECK (precision IN ('exact', 'approximate', 'park-only')),
                    hidden INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (user_id, friend_id)
                );
                """)
        }

        migrator.registerMigration("2026-11-21 fixes, visits, ride logs") { db in
            try db.execute(sql: """
                ALTER TABLE rides ADD COLUMN cycle_s INTEGER;
                -- Accepted fixes: the bounded history of where each user was.
                CREATE TABLE fixes (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    accuracy REAL NOT NULL,
                    recorded_at REAL NOT NULL,
                    received_at REAL NOT NULL,
                    speed REAL,
                    altitude REAL,
                    source TEXT NOT NULL CHECK (source IN ('api', 'owntracks')),
                    UNIQUE (user_id, client_id),
                    UNIQUE (user_id, recorded_at, lat, lon)
                );
                -- The pipeline's memory per user: latest accepted fix and the fences they are inside.
                CREATE TABLE track_state (
                    user_id INTEGER PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    accuracy REAL NOT NULL,
                    recorded_at REAL NOT NULL,
                    parks TEXT NOT NULL DEFAULT '',
                    zones TEXT NOT NULL DEFAULT ''
                );
                CREATE TABLE transitions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    fix_id INTEGER,
                    event TEXT NOT NULL CHECK (event IN ('enter', 'exit')),
                    park_id TEXT NOT NULL,
                    zone_id TEXT,
                    zone_kind TEXT,
                    ride_id TEXT,
                    at REAL NOT NULL
                );
                CREATE INDEX transitions_by_fix ON transitions(fix_id);
                CREATE INDEX transitions_by_user ON transitions(user_id, at);
                CREATE TABLE visits (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    park_id TEXT NOT NULL REFERENCES parks(id),
                    how TEXT NOT NULL CHECK (how IN ('explicit', 'automatic')),
                    entered_at REAL NOT NULL,
                    left_at REAL,
                    -- The last fix inside the park or check-in: a visit with none for a while is over.
                    last_evidence_at REAL NOT NULL
                );
                CREATE INDEX visits_by_user ON visits(user_id, entered_at);
                CREATE INDEX visits_open ON visits(user_id, park_id) WHERE left_at IS NULL;
                CREATE TABLE ride_logs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    ride_id TEXT NOT NULL REFERENCES rides(id),
                    visit_id INTEGER REFERENCES visits(id),
                    ridden_at REAL NOT NULL
                );
                CREATE INDEX ride_logs_by_user ON ride_logs(user_id, ride_id, ridden_at);
                CREATE INDEX ride_logs_by_time ON ride_logs(user_id, ridden_at);
                -- OwnTracks region events, as the app reported them.
                CREATE TABLE owntracks_transitions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    event TEXT NOT NULL,
                    region TEXT,
                    region_id TEXT,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    accuracy REAL NOT NULL,
                    at REAL NOT NULL,
                    received_at REAL NOT NULL
                );
                """)
        }

        migrator.registerMigration("2026-11-21 discoverable") { db in
            try db.execute(sql: "ALTER TABLE users ADD COLUMN discoverable INTEGER NOT NULL DEFAULT 0")
        }

        migrator.registerMigration("2026-11-21 waits") { db in
            try db.execute(sql: """
                -- Crowd reports and waits the service timed (queue zone enter to ride zone enter).
                CREATE TABLE wait_reports (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    ride_id TEXT NOT NULL REFERENCES rides(id),
                    minutes REAL NOT NULL,
                    source TEXT NOT NULL CHECK (source IN ('crowd', 'measured')),
                    -- When the wait became known (the rider boarded), and when they joined the line.
                    at REAL NOT NULL,
                    entered_at REAL NOT NULL
                );
                CREATE INDEX wait_reports_by_ride ON wait_reports(ride_id, at);
                CREATE INDEX wait_reports_by_user ON wait_reports(user_id, ride_id, at);
                CREATE TABLE status_reports (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    ride_id TEXT NOT NULL REFERENCES rides(id),
                    condition TEXT NOT NULL CHECK (condition IN ('operating', 'down', 'closed')),
                    at REAL NOT NULL
                );
                CREATE INDEX status_reports_by_ride ON status_reports(ride_id, at);
                CREATE INDEX status_reports_by_user ON status_reports(user_id, ride_id, at);
                -- The park's official feed; minutes NULL means the park showed the ride as down.
                CREATE TABLE posted_waits (
                    ride_id TEXT NOT NULL REFERENCES rides(id),
                    at REAL NOT NULL,
                    minutes REAL,
                    PRIMARY KEY (ride_id, at)
                );
                """)
        }

        migrator.registerMigration("2026-11-21 photos, tallies, badges, messages") { db in
            try db.execute(sql: """
                -- Photo bytes live in files named by their SHA-256 beside the database; rows hold the metadata.
                CREATE TABLE photos (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    sha256 TEXT NOT NULL,
                    format TEXT NOT NULL CHECK (format IN ('jpeg', 'png', 'heic')),
                    bytes INTEGER NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL,
                    caption TEXT,
                    park_id TEXT REFERENCES parks(id),
                    ride_id TEXT REFERENCES rides(id),
                    created_at REAL NOT NULL
                );
                CREATE INDEX photos_by_user ON photos(user_id, id);
                CREATE INDEX photos_by_hash ON photos(sha256);
                ALTER TABLE users ADD COLUMN photo_id INTEGER REFERENCES photos(id) ON DELETE SET NULL;
                -- Leaderboards, maintained in the ride-log transaction so reading a page is an index range scan.
                -- metric: rides | credits | ride:<rideId>; scope: global | park:<parkId>; period: all | y2026 | w2026-W47.
                CREATE TABLE tallies (
                    metric TEXT NOT NULL,
                    scope TEXT NOT NULL,
                    period TEXT NOT NULL,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    value INTEGER NOT NULL,
                    reached_at REAL NOT NULL,
                    PRIMARY KEY (metric, scope, period, user_id)
                );
                CREATE INDEX tallies_rank ON tallies(metric, scope, period, value DESC, reached_at, user_id);
                -- Earned badges by rule id (CoasterCore's Badge.all): a new rule needs no schema change.
                CREATE TABLE badges (
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    badge_id TEXT NOT NULL,
                    earned_at REAL NOT NULL,
                    PRIMARY KEY (user_id, badge_id)
                );
                CREATE TABLE messages (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    sender INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    recipient INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    body TEXT NOT NULL,
                    sent_at REAL NOT NULL,
                    read_at REAL
                );
                CREATE INDEX messages_by_pair ON messages(sender, recipient, id);
                CREATE INDEX messages_unread ON messages(recipient, read_at);
                """)
        }

        migrator.registerMigration("2026-11-22 zones by ride") { db in
            // Every wait or status report looks up its ride's zones, and SQLite checks zones'
            // foreign key to rides when a park import replaces rides: both scanned every zone
            // (geometry included) without this (tools/bench/README.md, wait reports).
            try db.execute(sql: "CREATE INDEX zones_by_ride ON zones(ride_id)")
        }

        migrator.registerMigration("2026-11-22 fixes written with fewer pages") { db in
            // Each page a commit changes is two writes to the WAL, and a fix request's share was
            // 11.7 (strace, 8 connections): besides the table's last page and the duplicate
            // index, every fix put an entry in the client-id index (NULL for most clients) and
            // bumped AUTOINCREMENT's row in sqlite_sequence. Without both, 8.2 writes a request
            // and 3–9 % more fix requests a second (tools/bench/README.md, "The fix path").
            // - The client-id index keeps what UNIQUE (user_id, client_id) enforced (NULLs never
            //   clashed) and still answers the replay lookup (`client_id = ?` implies NOT NULL).
            // - Without AUTOINCREMENT an id comes back only if the newest fix is deleted, which
            //   happens only with its user's account, whose transitions (the one place fix ids are
            //   kept) go with it.
            try db.execute(sql: """
                CREATE TABLE fixes_new (
                    id INTEGER PRIMARY KEY,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    accuracy REAL NOT NULL,
                    recorded_at REAL NOT NULL,
                    received_at REAL NOT NULL,
                    speed REAL,
                    altitude REAL,
                    source TEXT NOT NULL CHECK (source IN ('api', 'owntracks')),
                    UNIQUE (user_id, recorded_at, lat, lon)
                );
                INSERT INTO fixes_new SELECT id, user_id, client_id, lat, lon, accuracy, recorded_at, received_at, speed, altitude, source
                    FROM fixes;
                DROP TABLE fixes;
                ALTER TABLE fixes_new RENAME TO fixes;
                CREATE UNIQUE INDEX fixes_by_client_id ON fixes(user_id, client_id) WHERE client_id IS NOT NULL;
                DELETE FROM sqlite_sequence WHERE name = 'fixes';
                """)
        }

        migrator.registerMigration("2026-11-24 leaderboard ranks from counts") { db in
            // The caller's rank came with every leaderboard page as a count of everyone above
            // them: a range of the rank index as long as the rank (with 222,709 riders on a board,
            // such a count holds the route to 34–42 requests a second; tools/bench/README.md,
            // leaderboards at a million users). These counts make it a few sums: how many riders
            // each board has at each value (level 0), and at each value by the day, hour and
            // minute they reached it (levels 1–3, for the ties, which go to whoever got there
            // first), leaving a count within one minute. Triggers keep them, so
            // every change of a tally is counted, an account's deletion (a cascade) included.
            // The slots are whole minutes since 1970, from `max(reached_at, 0)` truncated (floor
            // for the times the server writes), and the hour and day are the minute divided: one
            // rounding, so the levels nest exactly (`TallyCounts.slots` mirrors it).
            let minute = { (row: String) in "CAST(max(\(row).reached_at, 0) / 60 AS INTEGER)" }
            func slots(_ row: String) -> [(level: Int, slot: String)] {
                [(0, "0"), (1, "\(minute(row)) / 1440"), (2, "\(minute(row)) / 60"), (3, minute(row))]
            }
            func add(_ row: String) -> String {
                slots(row).map { level, slot in
                    """
                    INSERT INTO tally_counts (metric, scope, period, level, value, slot, riders)
                        VALUES (\(row).metric, \(row).scope, \(row).period, \(level), \(row).value, \(slot), 1)
                        ON CONFLICT DO UPDATE SET riders = riders + 1;
                    """
                }.joined(separator: "\n")
            }
            func remove(_ row: String) -> String {
                // The last rider of a slot takes its row away (a count of zero would stay forever).
                slots(row).map { level, slot in
                    let key = """
                        metric = \(row).metric AND scope = \(row).scope AND period = \(row).period AND level = \(level) \
                        AND value = \(row).value AND slot = \(slot)
                        """
                    return """
                        DELETE FROM tally_counts WHERE \(key) AND riders = 1;
                        UPDATE tally_counts SET riders = riders - 1 WHERE \(key);
                        """
                }.joined(separator: "\n")
            }
            try db.execute(sql: """
                CREATE TABLE tally_counts (
                    metric TEXT NOT NULL,
                    scope TEXT NOT NULL,
                    period TEXT NOT NULL,
                    level INTEGER NOT NULL CHECK (level BETWEEN 0 AND 3),
                    value INTEGER NOT NULL,
                    slot INTEGER NOT NULL,
                    riders INTEGER NOT NULL CHECK (riders > 0),
                    PRIMARY KEY (metric, scope, period, level, value, slot)
                ) WITHOUT ROWID;
                CREATE TRIGGER tallies_counted_on_insert AFTER INSERT ON tallies BEGIN
                \(add("NEW"))
                END;
                CREATE TRIGGER tallies_counted_on_update AFTER UPDATE ON tallies BEGIN
                \(remove("OLD"))
                \(add("NEW"))
                END;
                CREATE TRIGGER tallies_counted_on_delete AFTER DELETE ON tallies BEGIN
                \(remove("OLD"))
                END;
                """)
            for (level, slot) in slots("tallies") {
                try db.execute(sql: """
                    INSERT INTO tally_counts (metric, scope, period, level, value, slot, riders)
                    SELECT metric, scope, period, \(level), value, \(slot), count(*) FROM tallies GROUP BY 1, 2, 3, 4, 5, 6
                    """)
            }
        }

        migrator.registerMigration("2026-11-24 conversations kept by triggers") { db in
            // The conversation list grouped all of a user's messages on every request (the
            // received half read from the table row by row), and counted each conversation's
            // unread messages by reading all it had sent them: 48.5 ms for a user with 20,000
            // messages (tools/bench/README.md, messages). Triggers keep one row
            // for each side of a conversation: its newest message and how many the other side
            // sent this side unread. A message keeps its sender, recipient and id, so the rows
            // follow from inserts, deletes (an account's deletion cascades) and reads.

            // `a`'s side of a conversation with `b` whose message OLD went: its newest message is
            // the newest left between the two (each direction's, from the pair index), and if none
            // is left the row goes.
            func newestOrGone(_ a: String, _ b: String) -> String {
                """
                UPDATE conversations SET last_id = max(coalesce((SELECT max(id) FROM messages WHERE sender = \(a) AND recipient = \(b)), 0),
                                                       coalesce((SELECT max(id) FROM messages WHERE sender = \(b) AND recipient = \(a)), 0))
                    WHERE user_id = \(a) AND other_id = \(b) AND last_id = OLD.id;
                DELETE FROM conversations WHERE user_id = \(a) AND other_id = \(b) AND last_id = 0;
                """
            }
            try db.execute(sql: """
                CREATE TABLE conversations (
                    user_id INTEGER NOT NULL,
                    other_id INTEGER NOT NULL,
                    last_id INTEGER NOT NULL,
                    unread INTEGER NOT NULL CHECK (unread >= 0),
                    PRIMARY KEY (user_id, other_id)
                ) WITHOUT ROWID;
                INSERT INTO conversations (user_id, other_id, last_id, unread)
                    SELECT user_id, other_id, max(id), sum(unread) FROM (
                        SELECT sender AS user_id, recipient AS other_id, id, 0 AS unread FROM messages
                        UNION ALL
                        SELECT recipient, sender, id, read_at IS NULL FROM messages
                    ) GROUP BY user_id, other_id;
                CREATE TRIGGER messages_keep_their_parties BEFORE UPDATE OF id, sender, recipient ON messages
                WHEN NEW.id IS NOT OLD.id OR NEW.sender IS NOT OLD.sender OR NEW.recipient IS NOT OLD.recipient BEGIN
                    SELECT RAISE(ABORT, 'a message keeps its id, sender and recipient');
                END;
                CREATE TRIGGER conversations_on_insert AFTER INSERT ON messages BEGIN
                    INSERT INTO conversations (user_id, other_id, last_id, unread) VALUES (NEW.sender, NEW.recipient, NEW.id, 0)
                        ON CONFLICT DO UPDATE SET last_id = max(last_id, excluded.last_id);
                    INSERT INTO conversations (user_id, other_id, last_id, unread) VALUES (NEW.recipient, NEW.sender, NEW.id, NEW.read_at IS NULL)
                        ON CONFLICT DO UPDATE SET last_id = max(last_id, excluded.last_id), unread = unread + excluded.unread;
                END;
                CREATE TRIGGER conversations_on_read AFTER UPDATE OF read_at ON messages
                WHEN (OLD.read_at IS NULL) != (NEW.read_at IS NULL) BEGIN
                    UPDATE conversations SET unread = unread + (NEW.read_at IS NULL) - (OLD.read_at IS NULL)
                        WHERE user_id = NEW.recipient AND other_id = NEW.sender;
                END;
                CREATE TRIGGER conversations_on_delete AFTER DELETE ON messages BEGIN
                    UPDATE conversations SET unread = unread - (OLD.read_at IS NULL) WHERE user_id = OLD.recipient AND other_id = OLD.sender;
                    \(newestOrGone("OLD.sender", "OLD.recipient"))
                    \(newestOrGone("OLD.recipient", "OLD.sender"))
                END;
                """)
            // Marking a conversation read finds its unread messages by recipient, sender and
            // `read_at`, not by walking everything the sender ever sent (the pair index). It
            // still leads with the recipient, for the cascade when an account is deleted.
            try db.execute(sql: """
                DROP INDEX messages_unread;
                CREATE INDEX messages_unread ON messages(recipient, read_at, sender);
                """)
        }

        migrator.registerMigration("2026-11-24 ride counts kept by triggers") { db in
            // A rider's facts (total rides, credits, distinct rides, the most rides of one ride)
            // were counted from all their ride logs on every ride logged (for the badges, in the
            // writer) and every profile and stats page: 1.0 ms for a rider with 3,000 logs, 6.2 ms
            // with 20,000 (tools/bench/README.md, ride counts). Triggers keep how
            // often each rider has ridden each ride, so the facts cost the rides they have ridden.
            func add(_ row: String) -> String {
                """
                INSERT INTO ride_counts (user_id, ride_id, rides) VALUES (\(row).user_id, \(row).ride_id, 1)
                    ON CONFLICT DO UPDATE SET rides = rides + 1;
                """
            }
            func remove(_ row: String) -> String {
                // The last ride of a ride takes its row away.
                """
                DELETE FROM ride_counts WHERE user_id = \(row).user_id AND ride_id = \(row).ride_id AND rides = 1;
                UPDATE ride_counts SET rides = rides - 1 WHERE user_id = \(row).user_id AND ride_id = \(row).ride_id;
                """
            }
            try db.execute(sql: """
                CREATE TABLE ride_counts (
                    user_id INTEGER NOT NULL,
                    ride_id TEXT NOT NULL,
                    rides INTEGER NOT NULL CHECK (rides > 0),
                    PRIMARY KEY (user_id, ride_id)
                ) WITHOUT ROWID;
                INSERT INTO ride_counts (user_id, ride_id, rides) SELECT user_id, ride_id, count(*) FROM ride_logs GROUP BY user_id, ride_id;
                CREATE TRIGGER ride_counts_on_insert AFTER INSERT ON ride_logs BEGIN
                \(add("NEW"))
                END;
                CREATE TRIGGER ride_counts_on_update AFTER UPDATE OF user_id, ride_id ON ride_logs BEGIN
                \(remove("OLD"))
                \(add("NEW"))
                END;
                CREATE TRIGGER ride_counts_on_delete AFTER DELETE ON ride_logs BEGIN
                \(remove("OLD"))
                END;
                """)
        }

        migrator.registerMigration("2026-11-24 visits by user and park") { db in
            // The parks a rider has visited (a badge fact, on every ride logged, stats and profile
            // page) were counted from all their visits, each row read from the table: 0.94 ms for
            // a rider with 3,000 visits, 6.8 ms with 20,000. On this index they are found one park
            // after another (``SpatiaLiteStore/parksVisited``), whatever the visits; a photo's park tag is
            // checked on it too.
            try db.execute(sql: "CREATE INDEX visits_by_park ON visits(user_id, park_id)")
        }

        migrator.registerMigration("2026-11-25 conversations by their last message") { db in
            // The conversation list comes in pages, newest first, after the last message of the
            // page before (``SpatiaLiteStore/conversationList``): a range of this index, however many
            // conversations a user has had; it was the whole list, sorted, on every request.
            try db.execute(sql: "CREATE INDEX conversations_by_last ON conversations(user_id, last_id)")
        }

        migrator.registerMigration("2026-11-25 friend requests by recipient and time") { db in
            // Nothing bounds the requests waiting on a user (each sender is capped, not the
            // senders), so the incoming list comes in pages, newest first: a range of this index
            // (``SpatiaLiteStore/incomingRequests``). It leads with what the index it replaces held, so
            // every query that used that one can use this.
            try db.execute(sql: """
                CREATE INDEX friendships_by_addressee_and_time ON friendships(addressee, status, created_at, requester);
                DROP INDEX friendships_by_addressee;
                """)
        }

        migrator.registerMigration("2026-11-25 blocks by blocker and time") { db in
            // Nothing bounds the users one user blocks, so the block list comes in pages, newest
            // first: a range of this index (``SpatiaLiteStore/blockList``); it was every block, sorted, on
            // each request.
            try db.execute(sql: "CREATE INDEX blocks_by_blocker_and_time ON blocks(blocker, created_at, blocked)")
        }

        migrator.registerMigration("2026-11-25 ride logs and visits in pages by id") { db in
            // A rider's ride history and check-ins come in pages, newest first, before an id
            // (``SpatiaLiteStore/rideHistoryPage``, ``SpatiaLiteStore/visitPage``). No index was ordered by id within a
            // user, so each page sorted all of the user's rows: 1.2 ms a page for a rider with
            // 5,000 logged rides. An index's entries end with the rowid, so one on the user alone
            // holds each user's rows in id order, and a page is a range of it (57 µs).
            try db.execute(sql: """
                CREATE INDEX ride_logs_paged ON ride_logs(user_id);
                CREATE INDEX visits_paged ON visits(user_id);
                """)
        }

        migrator.registerMigration("2026-11-25 profiles by their photo") { db in
            // Deleting a photo clears the profiles that show it (`users.photo_id`, ON DELETE SET
            // NULL), and SQLite looks for them on every delete: with no index, a scan of every
            // user (1.5 ms a delete at 10,000 users, 0.28 ms with this; a million users would
            // scan a hundred times as much). Partial: most users show no photo.
            try db.execute(sql: "CREATE INDEX users_by_photo ON users(photo_id) WHERE photo_id IS NOT NULL")
        }

        migrator.registerMigration("2026-11-27 leaderboards settle after the privacy window") { db in
            // A tally that moved the moment a ride was logged told anyone reading a board which
            // ride a rider had just ridden, ghost or not. Ride logs now reach the boards once they
            // are older than the location time-to-live (``LeaderboardStore/settleTallies(through:limit:)``); this
            // mark is the last ride log counted. Every ride log already written was counted.
            try db.execute(sql: """
                CREATE TABLE tally_mark (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    through_log INTEGER NOT NULL
                );
                INSERT INTO tally_mark (id, through_log) SELECT 1, coalesce(max(id), 0) FROM ride_logs;
                """)
        }

        migrator.registerMigration("2026-11-27 session revocations and server secrets") { db in
            // Every process serving this database drops a revoked session from its cache and
            // closes its live sockets as soon as it reads the revocation here (``SpatiaLiteStore/revocations(after:limit:)``),
            // whoever revoked it: a logout, a password or role change, another process.
            // `user_id` alone (no token) revokes every session of the user and any credential
            // cached for them.
            try db.execute(sql: """
                CREATE TABLE session_revocations (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    token_hash BLOB,
                    user_id INTEGER NOT NULL,
                    at REAL NOT NULL
                );
                CREATE INDEX session_revocations_by_time ON session_revocations(at);
                CREATE TABLE secrets (
                    name TEXT PRIMARY KEY,
                    value BLOB NOT NULL CHECK (length(value) = 32)
                ) WITHOUT ROWID;
                INSERT INTO secrets (name, value) VALUES ('cursor', randomblob(32));
                """)
        }

        migrator.registerMigration("2026-11-27 wait reports weighed by their reporter") { db in
            // Eight accounts opened a minute before could move a ride's estimate wherever they
            // liked. Each report now carries its reporter's trust when it was made
            // (``WaitReportPolicy/trust(accountAge:earlierVisits:)``); reports already made count fully.
            try db.execute(sql: "ALTER TABLE wait_reports ADD COLUMN trust REAL NOT NULL DEFAULT 1")
        }

        migrator.registerMigration("2026-11-27 park files keep every property they carry") { db in
            // A served park is a park file that loads back to the same park: what a file says of a
            // ride or place is stored, not read and dropped.
            try db.execute(sql: """
                ALTER TABLE rides ADD COLUMN alone_height_cm INTEGER;
                ALTER TABLE rides ADD COLUMN note TEXT;
                ALTER TABLE zones ADD COLUMN category TEXT;
                """)
        }

        migrator.registerMigration("2026-11-27 ride logs carry their evidence") { db in
            // Logs made before evidence was weighed claim the weaker kind: on a visit to the park.
            try db.execute(sql: """
                ALTER TABLE ride_logs ADD COLUMN evidence TEXT NOT NULL DEFAULT 'in-park' CHECK (evidence IN ('at-ride', 'in-park'))
                """)
        }

        migrator.registerMigration("2026-11-28 challenges") { db in
            // Challenges among friends (``ChallengeStore``). Each member row carries its progress
            // twice: everything counted (the member's own view) and what everyone else may see
            // (``ChallengeRules/shownAt(_:timeToLive:)``), so a ranking page is a range of one index.
            // `ends_at` copies the challenge's end into the member row so that a ride log finds its
            // rider's active challenges on one index. Credits are unique per piece of evidence and
            // per distinct thing counted, so nothing counts twice.
            try db.execute(sql: """
                CREATE TABLE challenges (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    author_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    unit TEXT NOT NULL,
                    unit_label TEXT,
                    ride_id TEXT REFERENCES rides(id),
                    target REAL,
                    start_at REAL NOT NULL,
                    end_at REAL NOT NULL,
                    final_at REAL NOT NULL,
                    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'private')),
                    evidence TEXT NOT NULL CHECK (evidence IN ('in-park', 'at-ride')),
                    created_at REAL NOT NULL,
                    finalized_at REAL,
                    participants INTEGER NOT NULL DEFAULT 0 CHECK (participants >= 0),
                    likes INTEGER NOT NULL DEFAULT 0 CHECK (likes >= 0)
                );
                CREATE INDEX challenges_due ON challenges(final_at) WHERE finalized_at IS NULL;
                CREATE INDEX challenges_by_author ON challenges(author_id);
                CREATE INDEX challenges_public ON challenges(participants DESC, id DESC) WHERE visibility = 'public' AND finalized_at IS NULL;
                CREATE TABLE challenge_parks (
                    challenge_id INTEGER NOT NULL REFERENCES challenges(id) ON DELETE CASCADE,
                    park_id TEXT NOT NULL REFERENCES parks(id),
                    position INTEGER NOT NULL,
                    PRIMARY KEY (challenge_id, park_id)
                );
                CREATE INDEX challenge_parks_by_park ON challenge_parks(park_id, challenge_id);
                CREATE TABLE challenge_members (
                    challenge_id INTEGER NOT NULL REFERENCES challenges(id) ON DELETE CASCADE,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    state TEXT NOT NULL CHECK (state IN ('invited', 'member', 'declined')),
                    invited_at REAL,
                    joined_at REAL,
                    ends_at REAL NOT NULL,
                    progress REAL NOT NULL DEFAULT 0,
                    reached_at REAL NOT NULL DEFAULT 0,
                    shown_progress REAL NOT NULL DEFAULT 0,
                    shown_reached_at REAL NOT NULL DEFAULT 0,
                    won INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (challenge_id, user_id)
                );
                CREATE INDEX challenge_members_active ON challenge_members(user_id, ends_at) WHERE state = 'member';
                CREATE INDEX challenge_members_by_user ON challenge_members(user_id, state, challenge_id);
                CREATE INDEX challenge_ranking ON challenge_members(challenge_id, shown_progress DESC, shown_reached_at, user_id) WHERE state = 'member';
                CREATE INDEX challenge_joins ON challenge_members(joined_at) WHERE state = 'member';
                CREATE INDEX challenge_wins ON challenge_members(user_id, challenge_id) WHERE won = 1;
                -- A final challenge's winners, read with every view of it.
                CREATE INDEX challenge_winners ON challenge_members(challenge_id, user_id) WHERE won = 1;
                CREATE TABLE challenge_credits (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    challenge_id INTEGER NOT NULL,
                    user_id INTEGER NOT NULL,
                    source TEXT NOT NULL CHECK (source IN ('ride-log', 'visit')),
                    source_id INTEGER NOT NULL,
                    distinct_key TEXT,
                    amount REAL NOT NULL,
                    at REAL NOT NULL,
                    park_id TEXT,
                    ride_id TEXT,
                    evidence TEXT,
                    shown INTEGER NOT NULL DEFAULT 0,
                    UNIQUE (challenge_id, user_id, source, source_id),
                    UNIQUE (challenge_id, user_id, distinct_key),
                    FOREIGN KEY (challenge_id, user_id) REFERENCES challenge_members(challenge_id, user_id) ON DELETE CASCADE
                );
                CREATE INDEX challenge_credits_unshown ON challenge_credits(at, id) WHERE shown = 0;
                CREATE INDEX challenge_credits_by_source ON challenge_credits(user_id, source, source_id);
                CREATE TABLE challenge_entries (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    challenge_id INTEGER NOT NULL,
                    user_id INTEGER NOT NULL,
                    amount REAL NOT NULL CHECK (amount > 0),
                    note TEXT,
                    photo_id INTEGER REFERENCES photos(id) ON DELETE SET NULL,
                    at REAL NOT NULL,
                    FOREIGN KEY (challenge_id, user_id) REFERENCES challenge_members(challenge_id, user_id) ON DELETE CASCADE
                );
                CREATE INDEX challenge_entries_by_member ON challenge_entries(challenge_id, user_id, id);
                CREATE INDEX challenge_gallery ON challenge_entries(challenge_id, id) WHERE photo_id IS NOT NULL;
                CREATE INDEX challenge_entries_by_photo ON challenge_entries(photo_id) WHERE photo_id IS NOT NULL;
                CREATE TABLE challenge_likes (
                    challenge_id INTEGER NOT NULL REFERENCES challenges(id) ON DELETE CASCADE,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    at REAL NOT NULL,
                    PRIMARY KEY (challenge_id, user_id)
                );
                CREATE INDEX challenge_likes_by_time ON challenge_likes(at);
                -- Search by the words of name and description, kept by triggers (FTS5's external
                -- content: the text lives once, in challenges). Only a change of the text rewrites
                -- the index, not the counts that change on every join and like.
                CREATE VIRTUAL TABLE challenges_fts USING fts5(
                    name, description, content='challenges', content_rowid='id', tokenize='unicode61 remove_diacritics 0'
                );
                CREATE TRIGGER challenges_fts_insert AFTER INSERT ON challenges BEGIN
                    INSERT INTO challenges_fts (rowid, name, description) VALUES (new.id, new.name, new.description);
                END;
                CREATE TRIGGER challenges_fts_delete AFTER DELETE ON challenges BEGIN
                    INSERT INTO challenges_fts (challenges_fts, rowid, name, description) VALUES ('delete', old.id, old.name, old.description);
                END;
                CREATE TRIGGER challenges_fts_update AFTER UPDATE OF name, description ON challenges BEGIN
                    INSERT INTO challenges_fts (challenges_fts, rowid, name, description) VALUES ('delete', old.id, old.name, old.description);
                    INSERT INTO challenges_fts (rowid, name, description) VALUES (new.id, new.name, new.description);
                END;
                """)
        }

        migrator.registerMigration("2026-11-29 catalogue and lists") { db in
            // The ride catalogue (``CatalogStore``) and ride lists (``ListStore``). Catalogue
            // entries are keyed by text ids shared with the fenced rides; the full-text indexes
            // key them by their rowid, which only a VACUUM could renumber (the store runs none,
            // and a backup copies pages). The documents are CatalogText's normal form, written by
            // Swift, so the name index and the trigram index read the same folded words on both
            // stores. Parks have a small index of their own, written beside each park row.
            // Counters on catalog_rides and lists are kept by triggers, so a list deleted with
            // its owner's account releases its rides too. `list_items.owner_id` copies the list's
            // owner so that a ride log finds the rider's open items on one index
            // (`list_items_open`), a probe that finds nothing when no list holds the ride.
            try db.execute(sql: """
                CREATE TABLE catalog_parks (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    name_key TEXT NOT NULL,
                    fenced INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX catalog_parks_by_key ON catalog_parks(name_key);
                CREATE VIRTUAL TABLE catalog_parks_fts USING fts5(name_doc, tokenize='unicode61 remove_diacritics 2', prefix='2 3');
                CREATE TABLE catalog_rides (
                    id TEXT PRIMARY KEY NOT NULL,
                    park_id TEXT NOT NULL REFERENCES catalog_parks(id),
                    ride_id TEXT UNIQUE REFERENCES rides(id),
                    name TEXT NOT NULL,
                    name_key TEXT NOT NULL,
                    type TEXT NOT NULL,
                    status TEXT,
                    land TEXT,
                    height_m REAL,
                    speed_kmh REAL,
                    length_m REAL,
                    inversions INTEGER,
                    manufacturer TEXT,
                    manufacturer_key TEXT,
                    model TEXT,
                    opened INTEGER,
                    material TEXT,
                    stats_source TEXT,
                    lat REAL,
                    lon REAL,
                    name_doc TEXT NOT NULL,
                    detail_doc TEXT NOT NULL,
                    lists INTEGER NOT NULL DEFAULT 0 CHECK (lists >= 0)
                );
                CREATE INDEX catalog_rides_by_park ON catalog_rides(park_id, name_key);
                CREATE INDEX catalog_rides_by_name ON catalog_rides(name_key, id);
                CREATE INDEX catalog_rides_by_height ON catalog_rides(height_m DESC);
                CREATE INDEX catalog_rides_by_speed ON catalog_rides(speed_kmh DESC);
                -- Words (prefixes of them) of the name and the details; the name weighs more in bm25.
                CREATE VIRTUAL TABLE catalog_fts USING fts5(
                    name_doc, detail_doc, content='catalog_rides', tokenize='unicode61 remove_diacritics 2', prefix='2 3'
                );
                -- Three-letter pieces of the name: candidates for a misspelt word.
                CREATE VIRTUAL TABLE catalog_trigrams USING fts5(name_doc, content='catalog_rides', tokenize='trigram');
                CREATE TRIGGER catalog_rides_fts_insert AFTER INSERT ON catalog_rides BEGIN
                    INSERT INTO catalog_fts (rowid, name_doc, detail_doc) VALUES (new.rowid, new.name_doc, new.detail_doc);
                    INSERT INTO catalog_trigrams (rowid, name_doc) VALUES (new.rowid, new.name_doc);
                END;
                CREATE TRIGGER catalog_rides_fts_delete AFTER DELETE ON catalog_rides BEGIN
                    INSERT INTO catalog_fts (catalog_fts, rowid, name_doc, detail_doc) VALUES ('delete', old.rowid, old.name_doc, old.detail_doc);
                    INSERT INTO catalog_trigrams (catalog_trigrams, rowid, name_doc) VALUES ('delete', old.rowid, old.name_doc);
                END;
                CREATE TRIGGER catalog_rides_fts_update AFTER UPDATE OF name_doc, detail_doc ON catalog_rides
                WHEN old.name_doc IS NOT new.name_doc OR old.detail_doc IS NOT new.detail_doc BEGIN
                    INSERT INTO catalog_fts (catalog_fts, rowid, name_doc, detail_doc) VALUES ('delete', old.rowid, old.name_doc, old.detail_doc);
                    INSERT INTO catalog_fts (rowid, name_doc, detail_doc) VALUES (new.rowid, new.name_doc, new.detail_doc);
                    INSERT INTO catalog_trigrams (catalog_trigrams, rowid, name_doc) VALUES ('delete', old.rowid, old.name_doc);
                    INSERT INTO catalog_trigrams (rowid, name_doc) VALUES (new.rowid, new.name_doc);
                END;

                CREATE TABLE lists (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    title TEXT NOT NULL,
                    description TEXT NOT NULL,
                    visibility TEXT NOT NULL CHECK (visibility IN ('private', 'friends', 'public', 'link')),
                    share_token TEXT UNIQUE,
                    cover_photo_id INTEGER REFERENCES photos(id) ON DELETE SET NULL,
                    copied_from INTEGER REFERENCES lists(id) ON DELETE SET NULL,
                    items INTEGER NOT NULL DEFAULT 0 CHECK (items >= 0),
                    likes INTEGER NOT NULL DEFAULT 0 CHECK (likes >= 0),
                    followers INTEGER NOT NULL DEFAULT 0 CHECK (followers >= 0),
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL
                );
                CREATE INDEX lists_by_owner ON lists(owner_id, id DESC);
                -- A photo's deletion clears the covers that show it, and a list's the copies that
                -- name it: without these, each would scan every list.
                CREATE INDEX lists_by_cover ON lists(cover_photo_id) WHERE cover_photo_id IS NOT NULL;
                CREATE INDEX lists_by_source ON lists(copied_from) WHERE copied_from IS NOT NULL;
                CREATE TABLE list_items (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
                    owner_id INTEGER NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('ride', 'park')),
                    target_id TEXT NOT NULL,
                    note TEXT,
                    position INTEGER NOT NULL,
                    added_at REAL NOT NULL,
                    checked_at REAL,
                    checked_by TEXT CHECK (checked_by IN ('ride-log', 'visit', 'by hand')),
                    shown_at REAL,
                    unchecked_by_hand INTEGER NOT NULL DEFAULT 0,
                    UNIQUE (list_id, kind, target_id)
                );
                CREATE INDEX list_items_order ON list_items(list_id, position);
                CREATE INDEX list_items_open ON list_items(owner_id, kind, target_id) WHERE checked_at IS NULL AND unchecked_by_hand = 0;
                CREATE INDEX list_items_by_target ON list_items(kind, target_id);
                -- A list's checked items as its owner counts them, and as others do (shown by now).
                CREATE INDEX list_items_checked ON list_items(list_id, shown_at) WHERE checked_at IS NOT NULL;
                CREATE TRIGGER list_items_counted_on_insert AFTER INSERT ON list_items BEGIN
                    UPDATE lists SET items = items + 1 WHERE id = new.list_id;
                    UPDATE catalog_rides SET lists = lists + 1 WHERE new.kind = 'ride' AND id = new.target_id;
                END;
                CREATE TRIGGER list_items_counted_on_delete AFTER DELETE ON list_items BEGIN
                    UPDATE lists SET items = items - 1 WHERE id = old.list_id;
                    UPDATE catalog_rides SET lists = lists - 1 WHERE old.kind = 'ride' AND id = old.target_id;
                END;
                CREATE TRIGGER list_items_counted_on_retarget AFTER UPDATE OF kind, target_id ON list_items BEGIN
                    UPDATE catalog_rides SET lists = lists - 1 WHERE old.kind = 'ride' AND id = old.target_id;
                    UPDATE catalog_rides SET lists = lists + 1 WHERE new.kind = 'ride' AND id = new.target_id;
                END;
                CREATE TABLE list_likes (
                    list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    at REAL NOT NULL,
                    PRIMARY KEY (list_id, user_id)
                );
                CREATE TABLE list_follows (
                    list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    at REAL NOT NULL,
                    PRIMARY KEY (list_id, user_id)
                );
                CREATE INDEX list_follows_by_user ON list_follows(user_id, list_id);
                CREATE TABLE list_owner_follows (
                    owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    at REAL NOT NULL,
                    PRIMARY KEY (owner_id, user_id)
                );
                CREATE INDEX list_owner_follows_by_user ON list_owner_follows(user_id, owner_id);
                CREATE TABLE list_changes (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
                    owner_id INTEGER NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('item-added', 'item-checked')),
                    item_id INTEGER NOT NULL,
                    target_kind TEXT NOT NULL,
                    target_id TEXT NOT NULL,
                    item_name TEXT NOT NULL,
                    source TEXT,
                    at REAL NOT NULL,
                    shown_at REAL NOT NULL,
                    delivered INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX list_changes_by_list ON list_changes(list_id, id DESC);
                CREATE INDEX list_changes_by_owner ON list_changes(owner_id, id DESC);
                CREATE INDEX list_changes_due ON list_changes(shown_at) WHERE delivered = 0;
                """)
            // The parks and rides loaded before the catalogue existed are its first entries,
            // each under its own id and linked to itself.
            let insertPark = try db.makeStatement(sql: "INSERT INTO catalog_parks (id, name, name_key, fenced) VALUES (?, ?, ?, 1)")
            let insertParkDocument = try db.makeStatement(sql: "INSERT INTO catalog_parks_fts (rowid, name_doc) VALUES (?, ?)")
            for row in try Row.fetchAll(db, sql: "SELECT id, name FROM parks ORDER BY id") {
                let name: String = row["name"]
                try insertPark.execute(arguments: [row["id"] as String, name, CatalogText.matchKey(name)])
                try insertParkDocument.execute(arguments: [db.lastInsertedRowID, CatalogText.nameDocument(name)])
            }
            let insertRide = try db.makeStatement(sql: """
                INSERT INTO catalog_rides (id, park_id, ride_id, name, name_key, type, status, land, height_m, speed_kmh, length_m, inversions,
                                           manufacturer, manufacturer_key, model, opened, material, stats_source, name_doc, detail_doc)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for row in try Row.fetchAll(db, sql: """
                SELECT r.*, p.name AS park_name FROM rides r JOIN parks p ON p.id = r.park_id ORDER BY r.id
                """) {
                let name: String = row["name"], land: String? = row["land"]
                let type = RideType(rawValue: row["type"]) ?? .other
                let stats = RideStats(heightM: row["height_m"], speedKmh: row["speed_kmh"], lengthM: row["length_m"], inversions: row["inversions"],
                                      manufacturer: row["manufacturer"], model: row["model"], opened: row["opened"], material: row["material"],
                                      source: row["stats_source"])
                let id: String = row["id"]
                try insertRide.execute(arguments: [
                    id, row["park_id"] as String, id, name, CatalogText.matchKey(name), type.rawValue, row["status"] as String?, land,
                    stats.heightM, stats.speedKmh, stats.lengthM, stats.inversions, stats.manufacturer, stats.manufacturer.map(CatalogText.fold),
                    stats.model, stats.opened, stats.material, stats.source, CatalogText.nameDocument(name),
                    CatalogText.detailDocument(park: row["park_name"], land: land, type: type, stats: stats),
                ])
            }
        }

        migrator.registerMigration("2026-11-30 posts") { db in
            // Trip reports (``PostStore``). `post_tags` holds what a post is tagged with, one row
            // a tag: `park` and `ride` as the author tagged them (catalogue ids), `about` every
            // park the post is about (its parks and its rides' parks: the park feed reads one
            // index range), `hashtag` folded. Counts on posts are kept by triggers, so an account
            // deleted with its thumbs and comments leaves them exact. The full-text indexes read
            // PostRules.searchDocument, written by Swift, so both stores search the same folded words;
            // their tokenizer takes a word as the fold leaves it (letters, marks and digits between
            // spaces: unicode61 by default splits "नमस्ते" at its marks, PostgreSQL does not).
            try db.execute(sql: """
                CREATE TABLE posts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    author_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    body TEXT NOT NULL,
                    search_doc TEXT NOT NULL,
                    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'friends')),
                    visit_id INTEGER REFERENCES visits(id) ON DELETE SET NULL,
                    created_at REAL NOT NULL,
                    edited_at REAL,
                    ups INTEGER NOT NULL DEFAULT 0 CHECK (ups >= 0),
                    downs INTEGER NOT NULL DEFAULT 0 CHECK (downs >= 0),
                    comments INTEGER NOT NULL DEFAULT 0 CHECK (comments >= 0)
                );
                CREATE INDEX posts_by_author ON posts(author_id, id);
                CREATE INDEX posts_public ON posts(id) WHERE visibility = 'public';
                CREATE TABLE post_photos (
                    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                    photo_id INTEGER NOT NULL REFERENCES photos(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    PRIMARY KEY (post_id, photo_id)
                );
                CREATE INDEX post_photos_by_photo ON post_photos(photo_id);
                CREATE TABLE post_tags (
                    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('park', 'ride', 'about', 'hashtag')),
                    value TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    PRIMARY KEY (post_id, kind, value)
                );
                CREATE INDEX post_tags_by_value ON post_tags(kind, value, post_id);
                CREATE TABLE post_reactions (
                    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    value TEXT NOT NULL CHECK (value IN ('up', 'down')),
                    at REAL NOT NULL,
                    PRIMARY KEY (post_id, user_id)
                );
                CREATE INDEX post_reactions_by_user ON post_reactions(user_id);
                CREATE TABLE comments (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                    author_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    body TEXT NOT NULL,
                    search_doc TEXT NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE INDEX comments_by_post ON comments(post_id, id);
                CREATE INDEX comments_by_author ON comments(author_id);
                CREATE TRIGGER post_reactions_counted_on_insert AFTER INSERT ON post_reactions BEGIN
                    UPDATE posts SET ups = ups + (new.value = 'up'), downs = downs + (new.value = 'down') WHERE id = new.post_id;
                END;
                CREATE TRIGGER post_reactions_counted_on_delete AFTER DELETE ON post_reactions BEGIN
                    UPDATE posts SET ups = ups - (old.value = 'up'), downs = downs - (old.value = 'down') WHERE id = old.post_id;
                END;
                CREATE TRIGGER post_reactions_counted_on_update AFTER UPDATE OF value ON post_reactions BEGIN
                    UPDATE posts SET ups = ups - (old.value = 'up') + (new.value = 'up'), downs = downs - (old.value = 'down') + (new.value = 'down')
                    WHERE id = new.post_id;
                END;
                CREATE TRIGGER comments_counted_on_insert AFTER INSERT ON comments BEGIN
                    UPDATE posts SET comments = comments + 1 WHERE id = new.post_id;
                END;
                CREATE TRIGGER comments_counted_on_delete AFTER DELETE ON comments BEGIN
                    UPDATE posts SET comments = comments - 1 WHERE id = old.post_id;
                END;
                CREATE VIRTUAL TABLE posts_fts USING fts5(search_doc, content='posts', content_rowid='id',
                                                     tokenize = "unicode61 remove_diacritics 0 categories 'L* M* N* Co'");
                CREATE TRIGGER posts_fts_insert AFTER INSERT ON posts BEGIN
                    INSERT INTO posts_fts (rowid, search_doc) VALUES (new.id, new.search_doc);
                END;
                CREATE TRIGGER posts_fts_delete AFTER DELETE ON posts BEGIN
                    INSERT INTO posts_fts (posts_fts, rowid, search_doc) VALUES ('delete', old.id, old.search_doc);
                END;
                CREATE TRIGGER posts_fts_update AFTER UPDATE OF search_doc ON posts BEGIN
                    INSERT INTO posts_fts (posts_fts, rowid, search_doc) VALUES ('delete', old.id, old.search_doc);
                    INSERT INTO posts_fts (rowid, search_doc) VALUES (new.id, new.search_doc);
                END;
                CREATE VIRTUAL TABLE comments_fts USING fts5(search_doc, content='comments', content_rowid='id',
                                                     tokenize = "unicode61 remove_diacritics 0 categories 'L* M* N* Co'");
                CREATE TRIGGER comments_fts_insert AFTER INSERT ON comments BEGIN
                    INSERT INTO comments_fts (rowid, search_doc) VALUES (new.id, new.search_doc);
                END;
                CREATE TRIGGER comments_fts_delete AFTER DELETE ON comments BEGIN
                    INSERT INTO comments_fts (comments_fts, rowid, search_doc) VALUES ('delete', old.id, old.search_doc);
                END;
                """)
        }

        migrator.registerMigration("2026-11-30 people") { db in
            // Profiles, people search, "riders like you" and follows (docs: People). A status is
            // its emoji and text (no emoji: no status); the home park and favourite rides are
            // catalogue ids, checked when set (a catalogue park merged into a fenced one moves
            // them). `people_names` holds the name keys (PeopleRules.nameKeys, folded by Swift so
            // both stores compare the same bytes) of findable users only: a search is one range
            // of its primary key. `ride_counts.findable` copies the rider's opt-in (a trigger sets
            // it on a new row, the profile write on all of the rider's rows), so that the riders
            // of a coaster read for suggestions are findable ones, from one partial index.
            // Follower counts are kept by triggers.
            try db.execute(sql: """
                ALTER TABLE users ADD COLUMN status_emoji TEXT;
                ALTER TABLE users ADD COLUMN status_text TEXT;
                ALTER TABLE users ADD COLUMN home_park TEXT;
                ALTER TABLE users ADD COLUMN findable INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE users ADD COLUMN followers INTEGER NOT NULL DEFAULT 0 CHECK (followers >= 0);
                ALTER TABLE users ADD COLUMN following INTEGER NOT NULL DEFAULT 0 CHECK (following >= 0);
                CREATE INDEX users_by_home_park ON users(home_park) WHERE home_park IS NOT NULL;
                CREATE TABLE favourite_rides (
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    ride_id TEXT NOT NULL,
                    PRIMARY KEY (user_id, position),
                    UNIQUE (user_id, ride_id)
                ) WITHOUT ROWID;
                CREATE TABLE people_names (
                    key TEXT NOT NULL,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    PRIMARY KEY (key, user_id)
                ) WITHOUT ROWID;
                CREATE INDEX people_names_by_user ON people_names(user_id);
                CREATE TABLE user_follows (
                    follower_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    followee_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    at REAL NOT NULL,
                    PRIMARY KEY (follower_id, followee_id),
                    CHECK (follower_id <> followee_id)
                );
                CREATE INDEX user_follows_by_followee ON user_follows(followee_id);
                CREATE TRIGGER user_follows_counted_on_insert AFTER INSERT ON user_follows BEGIN
                    UPDATE users SET following = following + 1 WHERE id = new.follower_id;
                    UPDATE users SET followers = followers + 1 WHERE id = new.followee_id;
                END;
                CREATE TRIGGER user_follows_counted_on_delete AFTER DELETE ON user_follows BEGIN
                    UPDATE users SET following = following - 1 WHERE id = old.follower_id;
                    UPDATE users SET followers = followers - 1 WHERE id = old.followee_id;
                END;
                ALTER TABLE ride_counts ADD COLUMN findable INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX ride_counts_findable ON ride_counts(ride_id, user_id) WHERE findable = 1;
                CREATE TRIGGER ride_counts_findable_on_insert AFTER INSERT ON ride_counts
                WHEN (SELECT findable FROM users WHERE id = new.user_id) = 1 BEGIN
                    UPDATE ride_counts SET findable = 1 WHERE user_id = new.user_id AND ride_id = new.ride_id;
                END;
                """)
        }

        migrator.registerMigration("2026-11-30 places") { db in
            // Where each ride and poi is (the point its park file gave, for the places answers)
            // and the land a poi is filed under. Zones loaded before have neither: their places
            // stand at their areas' centroids until the park is loaded again. The one category
            // renamed by the places vocabulary is renamed in what is stored, as the importer reads it.
            try db.execute(sql: """
                ALTER TABLE zones ADD COLUMN lat REAL;
                ALTER TABLE zones ADD COLUMN lon REAL;
                ALTER TABLE zones ADD COLUMN land TEXT;
                UPDATE zones SET category = 'entrance' WHERE kind = 'poi' AND category = 'gate';
                """)
        }

        migrator.registerMigration("2026-12-01 density") { db in
            // A park's density map (``DensityStore``) reads one day's fixes, which no index held
            // (only by user): a range of this one, not the whole table. Its cost is an entry a fix
            // at the index's right edge (recorded times mostly grow), so about one more page a group
            // commit writes: 1-2 µs and some 20 bytes a fix in batches of 100 (3-5 % of a bare
            // insert's time). Check-ins are few, and their index holds only the explicit visits.
            try db.execute(sql: """
                CREATE INDEX fixes_by_time ON fixes(recorded_at);
                CREATE INDEX visits_checkins ON visits(park_id, entered_at) WHERE how = 'explicit';
                """)
        }

        return migrator
    }
}
