@testable import CoasterAPI
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

    @Test func onlyPlainTargetsAreReadWithoutURI() {
        #expect(RequestTarget.isPlain("/v1/locate?lat=41.48&lon=-82.68&accuracy=10"))
        for target in ["/v1/locate?lat=%34", "/a+b", "/a#b", "http://x/", "a/b", "", "/caf\u{e9}"] {
            #expect(!RequestTarget.isPlain(target), "\(target)")
        }
    }
}
