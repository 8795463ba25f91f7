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

        return migrator
    }
}
