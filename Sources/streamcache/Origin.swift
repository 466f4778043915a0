import ArgumentParser
import Foundation
import StreamCacheTesting

extension StreamCacheCommand {
    struct Origin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a directory as a conditioned test origin (bandwidth, latency, faults).",
            discussion: """
                Prints 'listening on http://HOST:PORT' first. GET /_origin/stats returns the bytes sent as JSON (once no request is being answered, 0.25 s at most).
                Faults: ignore-range, wrong-range-start, short-body, reset-after=N, status=N, changing-etag, changing-etag-only, no-validators, gzip-encoding, no-length, flaky.
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

        @Option(name: .long, help: "Answer PATH with 302 to LOCATION, as PATH=LOCATION (repeatable).")
        var redirect: [String] = []

        /// The `--redirect` values as path and location.
        private var redirects: [(path: String, location: String)] {
            redirect.compactMap { text in
                guard let equals = text.firstIndex(of: "="), text.hasPrefix("/") else { return nil }
                return (String(text[..<equals]), String(text[text.index(after: equals)...]))
            }
        }

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
            guard redirects.count == redirect.count else {
                throw ValidationError("invalid --redirect: expected /PATH=LOCATION")
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
                throw CommandFailure("cannot listen on \(host):\(port): \(error)")
            }
            for (path, location) in redirects { origin.setRedirect(path, to: location) }
            let signals = await TerminationSignal.trap()
            FileHandle.standardOutput.write(Data("listening on http://\(host):\(origin.port)\n".utf8))
            for await _ in signals { break }
            await origin.shutdown()
        }
    }
}
