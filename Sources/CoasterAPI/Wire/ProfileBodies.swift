import CoasterCore
import Foundation

// The profile members of `PATCH /v1/me` and their checks: pure, so that tools/fuzz compiles this
// file with CoasterCore alone (target `profile-body`). A refused member is named by its JSON
// pointer; the route answers a 400 `invalid-field` problem naming every one.

/// Members of a profile body refused by a rule, each with its JSON pointer and what would fit.
struct ProfileBodyRefusal: Error, Sendable {
    var fields: [(pointer: String, reason: String)]
}

/// `status` as a patch gives it: `{"emoji": "🎢", "text": "…"}`, the text optional.
struct StatusBody: Decodable, Sendable {
    var emoji: String
    var text: String?
}

/// The profile members of `PATCH /v1/me` (the sharing settings are ``ProfilePatch``'s own):
/// members left out stay as they are; `status: null` and `homePark: null` clear them,
/// `favouriteRides: []` empties the list. `description` is the bio by its profile name: either
/// may be given, both only with the same text.
struct ProfileBody: Decodable, Sendable {
    var displayName: String?
    var bio: String?
    var description: String?
    var status: PatchMember<StatusBody>
    var homePark: PatchMember<String>
    var favouriteRides: [String]?
    var findable: Bool?

    enum CodingKeys: String, CodingKey { case displayName, bio, description, status, homePark, favouriteRides, findable }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
        self.bio = try c.decodeIfPresent(String.self, forKey: .bio)
        self.description = try c.decodeIfPresent(String.self, forKey: .description)
        self.status = try .decode(.status, in: c)
        self.homePark = try .decode(.homePark, in: c)
        self.favouriteRides = try c.decodeIfPresent([String].self, forKey: .favouriteRides)
        self.findable = try c.decodeIfPresent(Bool.self, forKey: .findable)
    }

    /// The changes this body asks for, or every member a rule refuses. Ids are checked for their
    /// form here; whether the catalogue has them, by the store's write.
    func changes() -> Result<ProfileChanges, ProfileBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        var changes = ProfileChanges()
        if let name = self.displayName {
            do { changes.displayName = try AccountRules.displayName(name) } catch { refused.append(("/displayName", error.description)) }
        }
        if let bio = self.bio, let description = self.description, bio != description {
            refused.append(("/description", "the bio by another name: give description or bio, or both with the same text"))
        } else if let text = self.description ?? self.bio {
            let pointer = self.description != nil ? "/description" : "/bio"
            do { changes.bio = try AccountRules.bio(text) } catch { refused.append((pointer, error.description)) }
        }
        switch self.status {
        case .absent: break
        case .null: changes.status = .some(nil)
        case .value(let status):
            do { changes.status = .some(try PeopleRules.status(emoji: status.emoji, text: status.text ?? "")) } catch {
                refused.append((error.pointer, error.reason))
            }
        }
        switch self.homePark {
        case .absent: break
        case .null: changes.homePark = .some(nil)
        case .value(let park):
            if Slug.isValid(park) { changes.homePark = .some(ParkID(rawValue: park)) } else { refused.append(("/homePark", "a catalogue park's id, or null")) }
        }
        if let rides = self.favouriteRides {
            if rides.count > PeopleRules.maximumFavouriteRides {
                refused.append(("/favouriteRides", "at most \(PeopleRules.maximumFavouriteRides) rides"))
            } else {
                for (index, ride) in rides.enumerated() {
                    if !Slug.isRideID(ride) {
                        refused.append(("/favouriteRides/\(index)", "a catalogue ride's id, <park>.<slug>"))
                    } else if rides[..<index].contains(ride) {
                        refused.append(("/favouriteRides/\(index)", "listed already, at \(rides.firstIndex(of: ride)!)"))
                    }
                }
                changes.favouriteRides = rides.map(RideID.init(rawValue:))
            }
        }
        changes.findable = self.findable
        return refused.isEmpty ? .success(changes) : .failure(ProfileBodyRefusal(fields: refused))
    }
}
