@testable import CoasterHTTP
import HummingbirdCore
import Testing

/// The fast lane reads plain request targets itself (``RequestTarget``); it must read every
/// target as Hummingbird's `URI` does, which the router uses.
@Suite("Request targets")
struct RequestTargetTests {
    static let targets = [
        "/v1/locate?lat=41.4822&lon=-82.6835&accuracy=10", "/v1/locate", "/v1/locate?", "/v1/locate?&", "/v1/locate?lat=1&&lon=2&",
        "/v1/locate?&lat=", "/v1/locate?lat", "/v1/locate?=5&lat=1=2", "/v1/locate?lat=1?x=2", "/v1/locate?lat=1&lat=2",
        "/health", "/", "/v1/friends/nearby?radius=500", "/v1/locate/?lat=1", "//v1/locate?lat=1",
        // Not plain: read by `URI` itself.
        "/v1/locate?lat=41%2E5&lon=-82.6", "/v1/locate?lat=+41&lon=1", "/v1/locate?lat=1#lon=2", "/v1/loc%61te?lat=1",
        "http://example.com/v1/locate?lat=1&lon=2", "v1/locate?lat=1", "/v1/locate?lat=4\u{0661}", "/v1/locate?lat=1;lon=2", "",
    ]

    @Test(arguments: Self.targets)
    func readsTargetsAsURIDoes(_ target: String) {
        let uri = URI(target), ours = RequestTarget(target)
        #expect(ours.path == uri.path[...])
        let parsed = uri.queryParameters, query = ours.queryParameters
        // Every name the target gives, and some it does not.
        let names = Set(parsed.map { String($0.key) } + ["lat", "lon", "accuracy", "radius", "", "x", "lat=1", "LAT"])
        for name in names {
            #expect(query.value(named: name) == parsed[name[...]], "\(name)")
        }
    }

    /// The lane leaves every target that gives a name twice to the router, which refuses it, and
    /// keeps one that does not (a plain one of up to 16 pieces).
    @Test(arguments: Self.targets + [
        "/v1/locate?lat=1&lon=2&lat=3", "/v1/locate?lat=1&latitude=2&la=3", "/v1/locate?lat&lat=", "/v1/locate?=1&=2",
        "/v1/locate?" + (1...16).map { "p\($0)=1" }.joined(separator: "&"), "/v1/locate?" + (1...17).map { "p\($0)=1" }.joined(separator: "&"),
    ])
    func aRepeatedNameIsLeftToTheRouter(_ target: String) {
        let repeated = URI(target).queryParameters.repeatedName
        let query = RequestTarget(target).queryParameters
        if repeated != nil { #expect(query.mayRepeatAName, "\(target)") }
        if !RequestTarget.isPlain(target) || target.split(separator: "&").count <= 16 {
            #expect(query.mayRepeatAName == (repeated != nil), "\(target)")
        }
    }

    @Test func repeatedNamesAreFound() {
        #expect(URI("/v1/locate?lat=1&lon=2&lat=3").queryParameters.repeatedName == "lat")
        #expect(URI("/v1/locate?lat=1&&lon=2&&").queryParameters.repeatedName == nil)
        #expect(URI("/v1/locate?lat=%34&lat=2").queryParameters.repeatedName == "lat")
        #expect(RequestTarget("/v1/locate?lat=1&lon=2&lat=3").queryParameters.mayRepeatAName)
        #expect(!RequestTarget("/v1/locate?lat=1&&lon=2&&accuracy=3").queryParameters.mayRepeatAName)
    }

    @Test func onlyPlainTargetsAreReadWithoutURI() {
        #expect(RequestTarget.isPlain("/v1/locate?lat=41.48&lon=-82.68&accuracy=10"))
        for target in ["/v1/locate?lat=%34", "/a+b", "/a#b", "http://x/", "a/b", "", "/caf\u{e9}"] {
            #expect(!RequestTarget.isPlain(target), "\(target)")
        }
    }
}
