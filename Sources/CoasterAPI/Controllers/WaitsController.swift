import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Crowd-sourced waits: reports, ride status, the park's wait board and a ride's history.
struct WaitsController {
    let store: any Store
    let reports: CrowdReports
    let policy: LocationPolicy
    let now: @Sendable () -> Date
    /// The last board written per park: the store keeps boards for a while (`SpatiaLiteStore.waitBoardFreshness`),
    /// and encoding 40 rides costs more than reading them from memory.
    let boardBodies = KeptBodies<ParkID, [WaitBoardRow]>()

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("rides/{rideId}/waits", use: self.reportWait)
        routes.post("rides/{rideId}/status", use: self.reportStatus)
        routes.get("parks/{parkId}/waits", use: self.board)
        routes.get("rides/{rideId}/waits/history", use: self.history)
        return routes
    }

    struct WaitBody: Decodable { var minutes: Double }
    struct StatusBody: Decodable { var status: RideCondition }

    @Sendable func reportWait(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<WaitReportResponse> {
        let me = try context.requireIdentity()
        let ride = RideID(rawValue: try context.parameters.require("rideId"))
        let body = try await request.decodeJSON(as: WaitBody.self, context: context)
        guard body.minutes.isFinite, self.policy.waits.minutes.contains(body.minutes) else {
            throw Problem.invalidField("/minutes", "a wait in minutes, \(Int(self.policy.waits.minutes.lowerBound))…\(Int(self.policy.waits.minutes.upperBound))")
        }
        let (accepted, row) = try await self.refusalsAsProblems { try await self.reports.reportWait(user: me.id, ride: ride, minutes: body.minutes) }
        return EditedResponse(status: .created, response: WaitReportResponse(ride: ride, reportedAt: accepted.at, estimate: EstimateWire(row.estimate)))
    }

    @Sendable func reportStatus(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<StatusReportResponse> {
        let me = try context.requireIdentity()
        let ride = RideID(rawValue: try context.parameters.require("rideId"))
        let body = try await request.decodeJSON(as: StatusBody.self, context: context)
        let accepted = try await self.refusalsAsProblems { try await self.reports.reportStatus(user: me.id, ride: ride, condition: body.status) }
        return EditedResponse(status: .created, response: StatusReportResponse(ride: ride, reportedAt: accepted.at, condition: accepted.verdict))
    }

    /// Runs a report, turning the rules' refusal into its problem.
    private func refusalsAsProblems<T>(_ report: () async throws -> T) async throws -> T {
        do {
            return try await report()
        } catch let refused as ReportRefused {
            if refused.refusal == .tooSoon, let wait = refused.retryAfter {
                var p = Problem.tooManyRequests("You reported this ride less than \(Int(self.policy.waits.window / 60)) minutes ago.", retryAfter: wait)
                p.type = .reportRefused
                p.title = "Report refused"
                p.reason = WaitReportRefusal.tooSoon.rawValue
                throw p
            }
            var p = Problem(.reportRefused, status: .unprocessableContent, title: "Report refused", detail: Self.describe(refused.refusal, self.policy))
            p.reason = refused.refusal.rawValue
            throw p
        }
    }

    static func describe(_ refusal: WaitReportRefusal, _ policy: LocationPolicy) -> String {
        switch refusal {
        case .notCheckedIn: "Only visitors on a visit to the ride's park may report it."
        case .noRecentFix: "No accepted GPS fix in the last \(Int(policy.waits.fixFreshness / 60)) minutes."
        case .notNearRide: "Your latest fix is not within \(Int(policy.waits.nearDistance)) m of the ride or its queue."
        case .tooSoon: "You reported this ride too recently."
        }
    }

    @Sendable func board(_ request: Request, context: AppRequestContext) async throws -> Response {
        let park = try ParksController.parkID(context)
        guard let rows = try await self.store.waitBoard(park: park, estimator: self.policy.estimator, statusRules: self.policy.statusRules)
        else { throw ParksController.noSuchPark(park) }
        let body = try self.boardBodies.body(park, for: rows) {
            try AppRequestContext.encoder.encode(WaitBoardResponse(park: park, rows: rows))
        }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    @Sendable func history(_ request: Request, context: AppRequestContext) async throws -> WaitHistoryResponse {
        let ride = RideID(rawValue: try context.parameters.require("rideId"))
        let bucketText = request.uri.queryParameters["bucket"].map(String.init) ?? "15m"
        let buckets: [String: TimeInterval] = ["5m": 300, "15m": 900, "30m": 1800, "1h": 3600]
        guard let bucket = buckets[bucketText] else { throw Problem.invalidParameter("bucket", "one of 5m, 15m, 30m, 1h") }
        let hours = try request.optionalNumber("hours") ?? 24
        guard (1...168).contains(hours) else { throw Problem.invalidParameter("hours", "hours of history, 1…168") }
        let to = self.now()
        guard let series = try await self.store.waitHistory(ride: ride, from: to.addingTimeInterval(-hours * 3600), to: to, bucket: bucket)
        else { throw RideError.noSuchRide }
        return WaitHistoryResponse(ride: ride, bucketSeconds: Int(bucket), buckets: series.map {
            .init(start: $0.start, reports: $0.reports, reportedMedian: $0.reportedMedian, posted: $0.posted)
        })
    }
}
