import ArgumentParser
import CoasterCore
import Foundation

/// Writes the benchmark world as CSV for the peers (PostGIS, Redis): the same seed, the same data.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the generated world as CSV (WKT geometries) for the PostGIS and Redis peers.",
        discussion: """
            Files: parks.csv (id,wkt), zones.csv (id,park,wkt), users.csv (id,lon,lat), friends.csv (a,b; both directions), \
            probes.csv (id,lon,lat), and askers.env (ASKERS, STEP and USERS: nearby's asker k of 0..ASKERS-1 is user \
            k × STEP mod USERS + 1, every level's same askers).
            """)

    @OptionGroup var world: WorldOptions

    @Option(help: "Directory to write into (created).")
    var directory: String

    func run() throws {
        let w = Workload.make(users: self.world.users, seed: self.world.seed)
        let dir = URL(fileURLWithPath: self.directory)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func wkt(_ m: MultiPolygon) -> String {
            "MULTIPOLYGON(" + m.polygons.map { p in
                "(" + p.rings.map { r in "(" + r.map { "\($0.lon) \($0.lat)" }.joined(separator: ",") + ")" }.joined(separator: ",") + ")"
            }.joined(separator: ",") + ")"
        }
        func write(_ name: String, _ lines: [String]) throws {
            try (lines.joined(separator: "\n") + "\n").write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try write("parks.csv", w.parks.map { "\($0.id.rawValue)\t\(wkt($0.boundary))" })
        try write("zones.csv", w.zones.map { "\($0.id.rawValue)\t\($0.park.rawValue)\t\(wkt($0.area))" })
        let ids = w.people.keys.sorted()
        try write("users.csv", ids.map { id in
            let p = w.people[id]!.latest!.position
            return "\(id.rawValue)\t\(p.lon)\t\(p.lat)"
        })
        var friends: [String] = []
        friends.reserveCapacity(ids.count * 50)
        for id in ids { for f in w.people[id]!.friends.sorted() { friends.append("\(id.rawValue)\t\(f.rawValue)") } }
        try write("friends.csv", friends)
        try write("probes.csv", w.probes.enumerated().map { "\($0.offset + 1)\t\($0.element.lon)\t\($0.element.lat)" })
        let askers = Workload.askers(users: ids.count)
        try write("askers.env", ["ASKERS=\(askers.count)", "STEP=\(askers.step)", "USERS=\(ids.count)"])
        print("wrote \(w.parks.count) parks, \(w.zones.count) zones, \(ids.count) users, \(friends.count) friend rows, \(w.probes.count) probes to \(self.directory)")
    }
}
