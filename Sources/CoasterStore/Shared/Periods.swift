import CoasterCore
import Foundation

/// Time periods of the leaderboards, in UTC: the calendar year and the ISO week.
enum Periods {
    static func keys(_ date: Date) -> [String] {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
        var gregorian = Calendar(identifier: .gregorian)
        gregorian.timeZone = .gmt
        let year = gregorian.component(.year, from: date)
        return ["all", "y\(year)", String(format: "w%04d-W%02d", c.yearForWeekOfYear ?? year, c.weekOfYear ?? 1)]
    }

    /// Period key and its start, for "first time in this period" questions.
    static func starts(_ date: Date) -> [(key: String, start: Double)] {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .gmt
        let keys = Self.keys(date)
        var gregorian = Calendar(identifier: .gregorian)
        gregorian.timeZone = .gmt
        let yearStart = gregorian.dateInterval(of: .year, for: date)?.start ?? .distantPast
        let weekStart = calendar.dateInterval(of: .weekOfYear, for: date)?.start ?? .distantPast
        return [(keys[0], -Double.infinity), (keys[1], yearStart.timeIntervalSince1970), (keys[2], weekStart.timeIntervalSince1970)]
    }

    static func key(_ window: LeaderboardQuery.Window, _ now: Date) -> String {
        let keys = Self.keys(now)
        switch window {
        case .allTime: return keys[0]
        case .year: return keys[1]
        case .week: return keys[2]
        }
    }
}
