import GRDB

/// The SQLite store's boards learn of its commits from GRDB (called on the writer's queue): every
/// change of a board table is counted, and the commit compares the count with what the writes
/// declared (``WaitBoards/touched(_:rows:)``).
extension WaitBoards: TransactionObserver {
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        Self.tables.contains(eventKind.tableName)
    }

    func databaseDidChange(with event: DatabaseEvent) {
        self.observedChange()
    }

    func databaseDidCommit(_ db: Database) {
        self.observedCommit()
    }

    func databaseDidRollback(_ db: Database) {
        self.observedRollback()
    }
}
