import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation

/// `/map/admin/parks/{parkId}/density?day=`: a day's accepted fixes and check-ins over a park,
/// as ``Density`` counts them (cells of at least three people; docs: Map, "Density").
struct DensityPage {
    struct Cell: Encodable {
        var south: Double
        var west: Double
        var north: Double
        var east: Double
        var fixes: Int
        var checkins: Int
        var people: Int
    }

    struct Data: Encodable {
        var park: String
        var tiles: TilesData
        var cells: [Cell]
    }

    let parkName: String
    let density: ParkDensity

    var day: String { self.density.day.description }

    /// The day's density; without `day`, today in the park's time zone.
    static func load(park: ParkID, day: String?, service: Service) async throws -> DensityPage {
        guard let summary = try await service.store.parkSummaries().first(where: { $0.id == park }) else {
            throw ParksController.noSuchPark(park)
        }
        let text = day ?? CalendarDay(service.now(), in: TimeZone(identifier: summary.timeZone) ?? .gmt).description
        do {
            return DensityPage(parkName: summary.name, density: try await Density(store: service.store, privacy: service.location.privacy, now: service.now).day(park: park, day: text))
        } catch DensityError.badDay(let problem) {
            throw Problem.invalidParameter("day", problem.description)
        } catch DensityError.noSuchPark {
            throw ParksController.noSuchPark(park)
        }
    }

    /// The template's values.
    var view: [String: Any] {
        let d = self.density
        var view: [String: Any] = [
            "park": ["id": d.park.rawValue, "name": self.parkName], "day": self.day, "timeZone": d.timeZone,
            "cells": d.cells.count, "fixes": d.cells.reduce(0) { $0 + $1.fixes }, "checkins": d.cells.reduce(0) { $0 + $1.checkins },
            "minimumPeople": d.minimumPeople, "cellSize": Int(d.grid.cellSize),
            "truncated": d.truncated,
            "previous": Self.shift(d.day, by: -1, in: d.timeZone), "next": Self.shift(d.day, by: 1, in: d.timeZone),
        ]
        // Absent, not empty, when the whole day was read: a template section takes any string as true.
        if d.heldBack { view["heldBack"] = d.readUntil.formatted(.iso8601) }
        else if !d.isComplete { view["incomplete"] = d.readUntil.formatted(.iso8601) }
        return view
    }

    func data(tiles: TilesData) -> String {
        scriptJSON(Data(park: self.density.park.rawValue, tiles: tiles, cells: self.density.cells.map {
            Cell(south: $0.bounds.minLat, west: $0.bounds.minLon, north: $0.bounds.maxLat, east: $0.bounds.maxLon,
                 fixes: $0.fixes, checkins: $0.checkins, people: $0.people)
        }))
    }

    /// The day `offset` days from `day` (for the page's previous / next links).
    static func shift(_ day: CalendarDay, by offset: Int, in timeZone: String) -> String {
        let zone = TimeZone(identifier: timeZone) ?? .gmt
        let noon = day.interval(in: zone).start.addingTimeInterval(12 * 3600 + Double(offset) * 86_400)
        return CalendarDay(noon, in: zone).description
    }
}
