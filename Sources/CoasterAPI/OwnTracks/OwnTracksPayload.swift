import CoasterCore
import Foundation

/// One message of the OwnTracks apps' JSON protocol, as far as CoasterLife uses it.
enum OwnTracksMessage: Hashable, Sendable {
    /// `_type: location`: a GPS fix.
    case location(lat: Double, lon: Double, recordedAt: Date, accuracy: Double?, altitude: Double?, speedKmh: Double?)
    /// `_type: transition`: the app's own region enter/leave event.
    case transition(event: String, lat: Double, lon: Double, accuracy: Double, at: Date, region: String?, regionID: String?)
    /// A valid message of a type CoasterLife does not act on (card, cmd, lwt, steps, waypoint…).
    case unsupported(String)
}

/// Decodes OwnTracks HTTP-mode bodies: one message object, or an array of them.
///
/// Strict where the fields matter (a string latitude is malformed: `transition-illegal-lat`),
/// lenient where the apps differ from the schema (an altitude with decimals). `tst` is epoch
/// seconds, as a number or a string of digits.
enum OwnTracksPayload {
    /// Why a body is malformed, for the log: the apps are answered `200 []` all the same.
    struct Malformed: Error, Equatable, CustomStringConvertible {
        var description: String
        static let notMessages = Malformed(description: "not OwnTracks messages")
    }

    /// The messages, or why the body is malformed anywhere: then nothing of it is used. A body
    /// that is not JSON says what is wrong and where, as every JSON body's problem does.
    static func decode(_ data: Data) -> Result<[OwnTracksMessage], Malformed> {
        guard data.count <= 1 << 20 else { return .failure(Malformed(description: "larger than 1 MiB")) }
        let json: JSONValue
        do {
            json = try JSONValue.strict(data)
        } catch let fault as JSONSyntax.Fault {
            return .failure(Malformed(description: "not valid JSON: \(fault)"))
        } catch {
            return .failure(.notMessages)
        }
        switch json {
        case .array(let items):
            var out: [OwnTracksMessage] = []
            for item in items {
                guard let message = Self.message(item) else { return .failure(.notMessages) }
                out.append(message)
            }
            return .success(out)
        case .object:
            return Self.message(json).map { .success([$0]) } ?? .failure(.notMessages)
        default:
            return .failure(.notMessages)
        }
    }

    private static func message(_ value: JSONValue) -> OwnTracksMessage? {
        guard case .object(let m) = value, case .string(let type) = m["_type"] else { return nil }
        switch type {
        case "location":
            guard let lat = number(m["lat"]), let lon = number(m["lon"]), let tst = time(m["tst"]),
                  let acc = optionalNumber(m["acc"]), let alt = optionalNumber(m["alt"]), let vel = optionalNumber(m["vel"])
            else { return nil }
            return .location(lat: lat, lon: lon, recordedAt: tst, accuracy: acc, altitude: alt, speedKmh: vel)
        case "transition":
            guard let lat = number(m["lat"]), let lon = number(m["lon"]), let acc = number(m["acc"]), let tst = time(m["tst"]),
                  time(m["wtst"]) != nil, case .string(let event) = m["event"], event == "enter" || event == "leave",
                  let desc = optionalString(m["desc"]), let rid = optionalString(m["rid"])
            else { return nil }
            return .transition(event: event, lat: lat, lon: lon, accuracy: acc, at: tst, region: desc, regionID: rid)
        default:
            return .unsupported(type)
        }
    }

    private static func number(_ value: JSONValue?) -> Double? {
        if case .number(let x)? = value, x.isFinite { return x }
        return nil
    }

    /// `.some(nil)` when absent, `nil` when present but not a number.
    private static func optionalNumber(_ value: JSONValue?) -> Double?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .number(let x)? where x.isFinite: return .some(x)
        default: return nil
        }
    }

    static let regionText = TextLimits(atMost: 200)

    private static func optionalString(_ value: JSONValue?) -> String?? {
        switch value {
        case nil, .null?: return .some(nil)
        // Stored with the transition: bytes bounded too, and no NUL (``TextLimits``).
        case .string(let s)? where Self.regionText.violation(s) == nil: return .some(s)
        default: return nil
        }
    }

    private static func time(_ value: JSONValue?) -> Date? {
        let seconds: Double
        switch value {
        case .number(let x)?: seconds = x
        case .string(let s)? where !s.isEmpty && s.count <= 12 && s.allSatisfy(\.isASCIIDigit): seconds = Double(s) ?? -1
        default: return nil
        }
        guard seconds.isFinite, seconds >= 0, seconds.rounded() == seconds, seconds < 1e11 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { self >= "0" && self <= "9" }
}

/// Two-character tracker ids, unique within one viewer's response.
enum TrackerIDs {
    /// Assigns ids in order: the first two letters or digits of each username in upper case, or
    /// on a clash its first character and a digit, or the first free pair.
    static func assign(_ usernames: [String]) -> [String] {
        var used: Set<String> = []
        return usernames.map { name in
            let chars = name.uppercased().filter { $0.isLetter || $0.isNumber }.map(String.init)
            var candidates: [String] = []
            if chars.count >= 2 { candidates.append(chars[0] + chars[1]) }
            if let first = chars.first { candidates += (1...9).map { first + String($0) } }
            let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".map(String.init)
            let pick = candidates.first { !used.contains($0) }
                ?? alphabet.lazy.flatMap { a in alphabet.map { a + $0 } }.first { !used.contains($0) } ?? "??"
            used.insert(pick)
            return pick
        }
    }
}
