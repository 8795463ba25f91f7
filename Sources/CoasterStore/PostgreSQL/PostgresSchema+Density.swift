extension PostgresSchema {
    /// A park's density map (``DensityStore``), as ``Migrations``' "2026-12-01 density" makes it:
    /// one day's fixes are a range of `fixes_by_time`, a park's check-ins of `visits_checkins`.
    static let density: [String] = [
        """
        CREATE INDEX fixes_by_time ON fixes (recorded_at)
        """,
        """
        CREATE INDEX visits_checkins ON visits (park_id, entered_at) WHERE how = 'explicit'
        """,
    ]
}
