import Foundation

/// A park's official posted waits as an admin loads them: CSV or JSON (docs: Waits).
///
/// CSV: a header `ride,at,minutes`, then one row per reading; `at` is RFC 3339 (or
/// `YYYY-MM-DD HH:MM:SS` in the park's time zone); minutes empty or −999 (TouringPlans' code)
/// means the ride is down. JSON: an array of `{"ride", "at", "minutes"}` with `minutes` null when
/// down. `ride` is the ride's id in the park (`millennium-force`) or its full id.
public enum PostedWaitFeed {
    public struct Row: Hashable, Sendable {
        public var ride: RideID
        public var at: Date
        public var minutes: Double?
    }

    public static let maximumRows = 500_000

    /// Parses a feed for `park`; every bad row is reported (up to 100), with its row number.
    public static func parse(_ data: Data, park: ParkID, timeZone: TimeZone, csv: Bool) throws(ImportRejection) -> [Row] {
        var issues: [ImportIssue] = []
        var rows: [Row] = []
        func fail(_ row: Int, _ pointer: String, _ reason: String) {
            if issues.count < 100 { issues.append(ImportIssue(feature: row, pointer: pointer, reason: reason)) }
        }
        func rideID(_ text: String) -> RideID? {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(park.rawValue + "."), Slug.isValid(String(trimmed.dropFirst(park.rawValue.count + 1))) {
                return RideID(rawValue: trimmed)
            }
            return Slug.isValid(trimmed) ? RideID(park: park, slug: trimmed) : nil
        }
        if csv {
            guard let text = String(data: data, encoding: .utf8) else {
                throw ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "the CSV is not UTF-8")])
            }
            let lines = text.split(whereSeparator: \.isNewline).map(String.init)
            guard let header = lines.first?.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }),
                  let r = header.firstIndex(of: "ride"), let a = header.firstIndex(of: "at"), let m = header.firstIndex(of: "minutes")
            else { throw ImportRejection(issues: [ImportIssue(feature: nil, pointer: "/0", reason: "the header must name the columns ride, at and minutes")]) }
            guard lines.count - 1 <= maximumRows else {
                throw ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "at most \(maximumRows) rows")])
            }
            for (n, line) in lines.dropFirst().enumerated() {
                let cells = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                let row = n + 1
                guard cells.count == header.count else { fail(row, "/\(row)", "expected \(header.count) cells, found \(cells.count)"); continue }
                guard let ride = rideID(cells[r]) else { fail(row, "/\(row)/ride", "\"\(cells[r])\" is not a ride id"); continue }
                guard let at = Self.time(cells[a], timeZone: timeZone) else {
                    fail(row, "/\(row)/at", "\"\(cells[a])\" is not a time (RFC 3339, or YYYY-MM-DD HH:MM:SS local)"); continue
                }
                switch Self.minutes(cells[m]) {
                case .some(let value): rows.append(Row(ride: ride, at: at, minutes: value))
                case .none: fail(row, "/\(row)/minutes", "\"\(cells[m])\" is not a wait in minutes (0…600, or −999 or empty for down)")
                }
            }
        } else {
            let shape = ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "expected a JSON array of {ride, at, minutes}")])
            let json: JSONValue
            do {
                json = try JSONValue.strict(data)
            } catch let fault as JSONSyntax.Fault {
                throw ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "not valid JSON: \(fault)")])
            } catch {
                throw shape
            }
            guard case .array(let items) = json else { throw shape }
            guard items.count <= maximumRows else {
                throw ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "at most \(maximumRows) rows")])
            }
            for (i, item) in items.enumerated() {
                guard case .string(let rideText)? = item["ride"], let ride = rideID(rideText) else { fail(i, "/\(i)/ride", "expected a ride id"); continue }
                guard case .string(let atText)? = item["at"], let at = Self.time(atText, timeZone: timeZone) else {
                    fail(i, "/\(i)/at", "expected an RFC 3339 time"); continue
                }
                switch item["minutes"] {
                case .null?, nil: rows.append(Row(ride: ride, at: at, minutes: nil))
                case .number(let x)? where (0...600).contains(x): rows.append(Row(ride: ride, at: at, minutes: x))
                case .number(-999)?: rows.append(Row(ride: ride, at: at, minutes: nil))
                default: fail(i, "/\(i)/minutes", "expected minutes 0…600, or null for down")
                }
            }
        }
        guard issues.isEmpty else { throw ImportRejection(issues: issues) }
        return rows
    }

    /// `.some(nil)` for down, `.some(x)` for a wait, `nil` for garbage.
    static func minutes(_ text: String) -> Double?? {
        if text.isEmpty || text == "-999" { return .some(nil) }
        guard let x = Double(text), (0...600).contains(x) else { return nil }
        return .some(x)
    }

    /// RFC 3339, or a local `YYYY-MM-DD HH:MM:SS` in the park's zone.
    public static func time(_ text: String, timeZone: TimeZone) -> Date? {
        if let d = try? Date(text, strategy: .iso8601) { return d }
        if let d = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return d }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "T" })
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-").compactMap { Int($0) }
        let time = parts[1].split(separator: ":").compactMap { Int($0) }
        guard date.count == 3, (2...3).contains(time.count) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: date[0], month: date[1], day: date[2], hour: time[0], minute: time[1], second: time.count == 3 ? time[2] : 0)
        guard let d = calendar.date(from: components), calendar.dateComponents([.year, .month, .day, .hour, .minute], from: d).hour == time[0]
        else { return nil }
        return d
    }
}
