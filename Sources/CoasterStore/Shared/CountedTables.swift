/// The tables whose row counts compare a backup with its source (``BackupStore/tableCounts()``):
/// the parks loaded and every table that holds users' writes, the same names on both stores.
enum CountedTables {
    static let names = [
        "parks", "zones", "rides", "users", "sessions", "friendships", "fixes", "transitions", "visits", "ride_logs",
        "wait_reports", "status_reports", "posted_waits", "photos", "tallies", "badges", "messages",
        "challenges", "challenge_members", "challenge_credits", "challenge_entries", "challenge_likes",
        "catalog_parks", "catalog_rides", "lists", "list_items", "list_likes", "list_follows", "list_owner_follows", "list_changes",
        "posts", "post_photos", "post_tags", "post_reactions", "comments",
        "favourite_rides", "user_follows",
    ]
}
