// swift-tools-version:6.1
import PackageDescription

// Layering (the Architecture article): coasterlife → CoasterAPI → CoasterService → CoasterStore → CoasterCore
// → CGEOS/CProj/CMemory. Only CoasterStore touches SQL (SpatiaLite through GRDB, PostgreSQL + PostGIS
// through postgres-nio); only CoasterCore touches GEOS and PROJ;
// CoasterService holds the use cases and the state they keep in memory; CoasterAPI decodes,
// authenticates, calls the service and encodes. CoasterAPI also builds on CoasterHTTP, the server
// plumbing Hummingbird lacks, which imports none of ours.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "coasterlife",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "coasterlife", targets: ["coasterlife"]),
        .executable(name: "coasterbench", targets: ["coasterbench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", exact: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", exact: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CGEOS", pkgConfig: "geos",
            providers: [.apt(["libgeos-dev"]), .brew(["geos"])]),
        .systemLibrary(
            name: "CProj", pkgConfig: "proj",
            providers: [.apt(["libproj-dev"]), .brew(["proj"])]),
        .systemLibrary(
            name: "CSpatiaLite", pkgConfig: "spatialite",
            providers: [.apt(["libspatialite-dev"]), .brew(["libspatialite"])]),
        // Prefetch hints for the nearby query (CoasterCore's PersonDirectory).
        .target(name: "CMemory"),
        .target(
            name: "CoasterCore",
            dependencies: ["CGEOS", "CProj", "CMemory"],
            swiftSettings: swiftSettings),
        .target(
            name: "CoasterStore",
            dependencies: [
                "CoasterCore", "CSpatiaLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "CoasterHTTP",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "CoasterService",
            dependencies: [
                "CoasterCore", "CoasterStore",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "CoasterAPI",
            dependencies: [
                "CoasterCore", "CoasterStore", "CoasterService", "CoasterHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("openapi.json"), .copy("Pages/Templates"), .copy("Pages/Assets")],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "coasterlife",
            dependencies: [
                "CoasterAPI", "CoasterService", "CoasterStore", "CoasterCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "coasterbench",
            dependencies: ["CoasterAPI", "CoasterService", "CoasterStore", "CoasterCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings),
        // What the store, service and HTTP tests share: which store they run on.
        .target(
            name: "CoasterTestSupport",
            dependencies: [
                "CoasterStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/CoasterTestSupport",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CoasterCoreTests",
            dependencies: ["CoasterCore"],
            // Read from the source tree by path (reference data), not bundled.
            exclude: ["Data"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CoasterStoreTests",
            dependencies: ["CoasterStore", "CoasterCore", "CoasterTestSupport", .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CoasterServiceTests",
            dependencies: ["CoasterService", "CoasterCore", "CoasterStore"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CoasterHTTPTests",
            dependencies: [
                "CoasterHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CoasterAPITests",
            dependencies: [
                "CoasterAPI", "CoasterService", "CoasterStore", "CoasterCore", "CoasterHTTP", "CoasterTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Images and their provenance, read by path.
            exclude: ["Data"],
            swiftSettings: swiftSettings),
    ]
)
