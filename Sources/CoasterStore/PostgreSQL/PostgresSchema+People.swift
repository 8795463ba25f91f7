extension PostgresSchema {
    /// Profiles, people search, "riders like you" and follows (docs: People), as the SpatiaLite
    /// migration "2026-11-30 people" makes them. The name keys are `COLLATE "C"`, so a search's
    /// range (`key >= q AND key < q || U+10FFFF`) is one of the primary key's btree, in the byte
    /// order SQLite compares in. `ride_counts.findable` is set by a BEFORE INSERT trigger from the
    /// rider's row (SQLite's trigger updates the new row after it).
    static let people: [String] = [
        """
        ALTER TABLE users
            ADD COLUMN status_emoji text COLLATE "C",
            ADD COLUMN status_text text COLLATE "C",
            ADD COLUMN home_park text COLLATE "C",
            ADD COLUMN findable boolean NOT NULL DEFAULT false,
            ADD COLUMN followers bigint NOT NULL DEFAULT 0 CHECK (followers >= 0),
            ADD COLUMN following bigint NOT NULL DEFAULT 0 CHECK (following >= 0)
        """,
        """
        CREATE INDEX users_by_home_park ON users (home_park) WHERE home_park IS NOT NULL
        """,
        """
        CREATE TABLE favourite_rides (
            user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            position integer NOT NULL,
            ride_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (user_id, position),
            UNIQUE (user_id, ride_id)
        )
        """,
        """
        CREATE TABLE people_names (
            key text COLLATE "C" NOT NULL,
            user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            PRIMARY KEY (key, user_id)
        )
        """,
        """
        CREATE INDEX people_names_by_user ON people_names (user_id)
        """,
        """
        CREATE TABLE user_follows (
            follower_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            followee_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            at double precision NOT NULL,
            PRIMARY KEY (follower_id, followee_id),
            CHECK (follower_id <> followee_id)
        )
        """,
        """
        CREATE INDEX user_follows_by_followee ON user_follows (followee_id)
        """,
        """
        CREATE FUNCTION user_follows_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                UPDATE users SET following = following + 1 WHERE id = NEW.follower_id;
                UPDATE users SET followers = followers + 1 WHERE id = NEW.followee_id;
            ELSE
                UPDATE users SET following = following - 1 WHERE id = OLD.follower_id;
                UPDATE users SET followers = followers - 1 WHERE id = OLD.followee_id;
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER user_follows_counted AFTER INSERT OR DELETE ON user_follows FOR EACH ROW EXECUTE FUNCTION user_follows_counted()
        """,
        """
        ALTER TABLE ride_counts ADD COLUMN findable boolean NOT NULL DEFAULT false
        """,
        """
        CREATE INDEX ride_counts_findable ON ride_counts (ride_id, user_id) WHERE findable
        """,
        """
        CREATE FUNCTION ride_counts_findable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.findable := coalesce((SELECT findable FROM users WHERE id = NEW.user_id), false);
            RETURN NEW;
        END $$
        """,
        """
        CREATE TRIGGER ride_counts_findable BEFORE INSERT ON ride_counts FOR EACH ROW EXECUTE FUNCTION ride_counts_findable()
        """,
    ]
}
