import Foundation

/// The facts badge rules look at, computed from a rider's logs and visits.
public struct RiderFacts: Hashable, Sendable {
    public var totalRides: Int
    public var coasterCredits: Int
    public var parksVisited: Int
    /// The most times one ride was ridden.
    public var mostRidesOfOneRide: Int
    /// Distinct rides ridden.
    public var distinctRides: Int
    /// Challenges whose winners included the rider.
    public var challengesWon: Int

    public init(totalRides: Int = 0, coasterCredits: Int = 0, parksVisited: Int = 0, mostRidesOfOneRide: Int = 0, distinctRides: Int = 0,
                challengesWon: Int = 0) {
        self.totalRides = totalRides
        self.coasterCredits = coasterCredits
        self.parksVisited = parksVisited
        self.mostRidesOfOneRide = mostRidesOfOneRide
        self.distinctRides = distinctRides
        self.challengesWon = challengesWon
    }
}

/// A badge: an id (stored with the award), words for people, and a rule. Adding one is adding a
/// value to ``Badge/all``; earned badges are rows keyed by the id, so no schema changes.
public struct Badge: Hashable, Sendable, Identifiable {
    public let id: String
    public let title: String
    public let description: String
    /// Which fact the rule reads, and the threshold it needs: progress is `fact / threshold`.
    public let fact: Fact
    public let threshold: Int

    public enum Fact: Sendable {
        case totalRides, coasterCredits, parksVisited, mostRidesOfOneRide, distinctRides, challengesWon

        func value(_ f: RiderFacts) -> Int {
            switch self {
            case .totalRides: f.totalRides
            case .coasterCredits: f.coasterCredits
            case .parksVisited: f.parksVisited
            case .mostRidesOfOneRide: f.mostRidesOfOneRide
            case .distinctRides: f.distinctRides
            case .challengesWon: f.challengesWon
            }
        }
    }

    public func isEarned(by facts: RiderFacts) -> Bool { self.fact.value(facts) >= self.threshold }

    /// 0…1.
    public func progress(_ facts: RiderFacts) -> Double { min(1, Double(self.fact.value(facts)) / Double(self.threshold)) }

    public static func == (a: Badge, b: Badge) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.id) }

    /// Every badge, in the order the app lists them.
    public static let all: [Badge] = [
        Badge(id: "first-park", title: "Through the Gates", description: "Visit your first park.", fact: .parksVisited, threshold: 1),
        Badge(id: "three-parks", title: "Park Hopper", description: "Visit three different parks.", fact: .parksVisited, threshold: 3),
        Badge(id: "first-ride", title: "Strapped In", description: "Log your first ride.", fact: .totalRides, threshold: 1),
        Badge(id: "first-coaster", title: "First Credit", description: "Ride your first roller coaster.", fact: .coasterCredits, threshold: 1),
        Badge(id: "credits-10", title: "Credit Counter", description: "Ride 10 different roller coasters.", fact: .coasterCredits, threshold: 10),
        Badge(id: "credits-50", title: "Credit Hunter", description: "Ride 50 different roller coasters.", fact: .coasterCredits, threshold: 50),
        Badge(id: "credits-100", title: "Centurion", description: "Ride 100 different roller coasters.", fact: .coasterCredits, threshold: 100),
        Badge(id: "same-ride-10", title: "Marathon", description: "Ride the same ride ten times.", fact: .mostRidesOfOneRide, threshold: 10),
        Badge(id: "rides-100", title: "Frequent Rider", description: "Log 100 rides.", fact: .totalRides, threshold: 100),
        Badge(id: "distinct-25", title: "Variety Pack", description: "Ride 25 different rides.", fact: .distinctRides, threshold: 25),
        Badge(id: "challenge-won", title: "Champion", description: "Win a challenge among friends.", fact: .challengesWon, threshold: 1),
    ]

    public static func named(_ id: String) -> Badge? { Self.all.first { $0.id == id } }

    /// The badges `facts` earns that are not in `earned` yet.
    public static func newlyEarned(_ facts: RiderFacts, earned: Set<String>) -> [Badge] {
        Self.all.filter { !earned.contains($0.id) && $0.isEarned(by: facts) }
    }
}
