// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "StreamCache",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .visionOS(.v1)],
    products: [
        .library(name: "StreamCache", targets: ["StreamCache"]),
        .library(name: "StreamCacheHTTP", targets: ["StreamCacheHTTP"]),
        .library(name: "StreamCacheURLSession", targets: ["StreamCacheURLSession"]),
        .library(name: "StreamCacheResourceLoader", targets: ["StreamCacheResourceLoader"]),
        .library(name: "StreamCacheMediaModel", targets: ["StreamCacheMediaModel"]),
        .library(name: "StreamCacheHLSModel", targets: ["StreamCacheHLSModel"]),
        .library(name: "StreamCacheDASHModel", targets: ["StreamCacheDASHModel"]),
        .library(name: "StreamCacheOfflineCore", targets: ["StreamCacheOfflineCore"]),
        .library(name: "StreamCacheHLS", targets: ["StreamCacheHLS"]),
        .library(name: "StreamCacheDASH", targets: ["StreamCacheDASH"]),
        .library(name: "StreamCacheOffline", targets: ["StreamCacheOffline"]),
        .library(name: "StreamCacheServer", targets: ["StreamCacheServer"]),
        .library(name: "StreamCacheAVFoundation", targets: ["StreamCacheAVFoundation"]),
        .library(name: "StreamCacheTesting", targets: ["StreamCacheTesting"]),
        .library(name: "StreamCacheResourceLoaderTesting", targets: ["StreamCacheResourceLoaderTesting"]),
        .executable(name: "streamcache", targets: ["streamcache"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
    ],
    targets: [
        .target(
            name: "StreamCache",
            dependencies: [
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "StreamCacheHTTP",
            dependencies: [
                "StreamCache",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Apps' side, on Foundation's networking (which the command-line tool does not load).
        .target(name: "StreamCacheURLSession", dependencies: ["StreamCache"]),
        .target(name: "StreamCacheResourceLoader", dependencies: ["StreamCache"]),
        // What every format's model shares: a video's resolution, a bitrate as people read one.
        .target(name: "StreamCacheMediaModel"),
        // The HLS playlist model, parser and writer: pure, with no engine and no crypto.
        .target(name: "StreamCacheHLSModel", dependencies: ["StreamCacheMediaModel"]),
        // The MPEG-DASH manifest model (its XML kept whole), parser and writer: pure, as HLS's.
        .target(name: "StreamCacheDASHModel"),
        // Offline packages of any format: the library, the downloader, the schedule, the asset
        // manifest, the selection policy and what a format gives (its planner and recorder).
        .target(
            name: "StreamCacheOfflineCore",
            dependencies: [
                "StreamCacheMediaModel",
                "StreamCache",
                // AES-128-CBC, to store AES-128 segments decrypted.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // HLS packages: the planner of playlists and the live recorder.
        .target(
            name: "StreamCacheHLS",
            dependencies: ["StreamCacheHLSModel", "StreamCacheOfflineCore", "StreamCache"]
        ),
        // DASH packages: the planner of MPDs and the live recorder.
        .target(
            name: "StreamCacheDASH",
            dependencies: ["StreamCacheDASHModel", "StreamCacheOfflineCore", "StreamCache"]
        ),
        // The offline library with every format.
        .target(
            name: "StreamCacheOffline",
            dependencies: ["StreamCacheOfflineCore", "StreamCacheHLS", "StreamCacheDASH", "StreamCache"]
        ),
        .target(
            name: "StreamCacheServer",
            dependencies: [
                "StreamCache",
                "StreamCacheOffline",
                "StreamCacheHLS",
                "StreamCacheDASH",
                "StreamCacheDASHModel",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "StreamCacheAVFoundation",
            dependencies: ["StreamCache", "StreamCacheOffline", "StreamCacheResourceLoader", "StreamCacheServer"]
        ),
        .target(
            name: "StreamCacheTesting",
            dependencies: [
                "StreamCache",
                // Live views of VOD playlists and MPDs (`origin --live`).
                "StreamCacheHLSModel",
                "StreamCacheDASHModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "StreamCacheResourceLoaderTesting",
            dependencies: ["StreamCache", "StreamCacheOffline", "StreamCacheResourceLoader", "StreamCacheTesting"]
        ),
        .executableTarget(
            name: "streamcache",
            dependencies: [
                "StreamCache",
                "StreamCacheDASHModel",
                "StreamCacheOffline",
                "StreamCacheHTTP",
                "StreamCacheServer",
                "StreamCacheTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StreamCacheTests",
            dependencies: [
                "StreamCache",
                "StreamCacheHTTP",
                "StreamCacheURLSession",
                "StreamCacheResourceLoader",
                "StreamCacheResourceLoaderTesting",
                "StreamCacheTesting",
                "StreamCacheDASHModel",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "StreamCacheHLSModelTests",
            dependencies: ["StreamCacheHLSModel"]
        ),
        .testTarget(
            name: "StreamCacheOfflineTests",
            dependencies: [
                "StreamCacheOffline", "StreamCacheOfflineCore", "StreamCacheHLS", "StreamCacheDASH",
                "StreamCacheMediaModel", "StreamCacheTesting", "StreamCacheHTTP",
            ]
        ),
        .testTarget(
            name: "StreamCacheDASHTests",
            dependencies: ["StreamCacheDASHModel"]
        ),
        .testTarget(
            name: "StreamCacheServerTests",
            dependencies: [
                "StreamCache",
                "StreamCacheHLS",
                "StreamCacheHTTP",
                "StreamCacheServer",
                "StreamCacheTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The DocC articles' code, compiled and run.
        .testTarget(
            name: "DocSnippetTests",
            dependencies: [
                "StreamCache",
                "StreamCacheOffline",
                "StreamCacheServer",
                "StreamCacheTesting",
                "StreamCacheURLSession",
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "streamcache",
                "StreamCache",
                "StreamCacheDASHModel",
                "StreamCacheOffline",
                "StreamCacheHTTP",
                "StreamCacheServer",
                "StreamCacheResourceLoader",
                "StreamCacheResourceLoaderTesting",
                "StreamCacheTesting",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
