import CoasterCore
import Foundation

/// How a ride's wait is shown on the park map: a colour band and a line of text with the
/// estimate's range, how many people it rests on, and its age. The page's script draws live
/// changes with the same thresholds, which it is given (``Band/thresholds``).
struct WaitShown {
    enum Band: String {
        case none, short, medium, long, closed

        /// Minutes from which a wait is `medium` and `long`: about a third of an hour is what
        /// visitors call a short line, three quarters of an hour a long one.
        static let thresholds: [String: Double] = ["medium": 20, "long": 45]
    }

    var band: Band
    var text: String
    var minutes: Double?

    init(_ row: WaitBoardRow?) {
        guard let row else {
            (self.band, self.text, self.minutes) = (.none, "no estimate", nil)
            return
        }
        if row.status.status == .down || row.status.status == .closed {
            (self.band, self.text, self.minutes) = (.closed, row.status.status.rawValue, row.estimate.minutes)
            return
        }
        let e = row.estimate
        guard let minutes = e.minutes else {
            (self.band, self.text, self.minutes) = (.none, "no estimate", nil)
            return
        }
        self.minutes = minutes
        self.band = minutes >= Band.thresholds["long"]! ? .long : minutes >= Band.thresholds["medium"]! ? .medium : .short
        var text = "\(Int(minutes.rounded())) min"
        if let low = e.low, let high = e.high { text += " (\(Int(low.rounded()))–\(Int(high.rounded())))" }
        text += " · \(e.reports) \(e.reports == 1 ? "report" : "reports")"
        if let age = e.newestReportAge { text += ", \(Int((age / 60).rounded())) min ago" }
        self.text = text
    }
}
