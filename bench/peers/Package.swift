// swift-tools-version:6.0
import PackageDescription

// Benchmark peers: programs the benchmarks run beside StreamCache, built apart from it and no
// part of its products.
let package = Package(
    name: "StreamCacheBenchPeers",
    platforms: [.macOS(.v14)],
    products: [
        // bench/many.sh: the relay SwiftNIO's server and AsyncHTTPClient make with no cache.
        .executable(name: "relay-floor", targets: ["relay-floor"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .executableTarget(
            name: "relay-floor",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        )
    ]
)
