import ArgumentParser
import Foundation
import StreamCacheTesting

extension StreamCacheCommand {
    struct Origin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a directory as a conditioned test origin (bandwidth, latency, faults).",
            discussion: """
                Prints 'listening on http://HOST:PORT' first. GET /_origin/stats returns the bytes sent as JSON.
                Faults: ignore-range, wrong-range-start, short-body, reset-after=N, status=N, changing-etag, no-validators.
                """
        )

        @Argument(help: "The directory to serve.")
        var directory: String

        @Option(name: .long, help: "The address to bind.")
        var host: String = "127.0.0.1"

        @Option(name: .long, help: "The port (0: any free port).")
        var port: Int = 0

        @Option(
            name: .long,
            help: "Body bytes per second per connection, e.g. 100M (default: unlimited).",
            transform: ByteCount.parse
        )
        var rate: Int64?

        @Option(name: .long, help: "Milliseconds added before each response.")
        var latency: Int = 0

        @Option(name: .long, help: "A fault to apply to every request (repeatable).")
        var fault: [String] = []

        func validate() throws {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw ValidationError("not a directory: \(directory)")
            }
            guard (0...65535).contains(port) else { throw ValidationError("invalid port \(port)") }
            guard latency >= 0 else { throw ValidationError("invalid latency \(latency)") }
            if let rate, rate <= 0 { throw ValidationError("invalid rate \(rate)") }
            for kind in fault where OriginFault(argument: kind) == nil {
                throw ValidationError("unknown fault '\(kind)'")
            }
        }

        func run() async throws {
            let conditions = OriginConditions(
                bytesPerSecond: rate.map { Int($0) },
                latency: .milliseconds(latency),
                faults: fault.compactMap(OriginFault.init(argument:))
            )
            let origin: TestOrigin
            do {
                origin = try await TestOrigin(directory: directory, host: host, port: port, conditions: conditions)
            } catch {
                Terminal.fail("cannot listen on \(host):\(port): \(error)")
            }
            FileHandle.standardOutput.write(Data("listening on http://\(host):\(origin.port)\n".utf8))
            await SignalWaiter.waitForTermination()
            await origin.shutdown()
        }
    }
}

/// Waiting for SIGINT or SIGTERM.
enum SignalWaiter {
    static func waitForTermination() async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed = OnceFlag()
            var sources: [DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    if resumed.set() { continuation.resume() }
                }
                source.resume()
                sources.append(source)
            }
            SignalWaiter.keep(sources)
        }
    }

    nonisolated(unsafe) private static var kept: [DispatchSourceSignal] = []
    private static func keep(_ sources: [DispatchSourceSignal]) { kept = sources }
}

/// A one-way switch.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    func set() -> Bool {
        lock.withLock {
            defer { isSet = true }; return !isSet
        }
    }
}
