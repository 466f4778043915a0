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
                With --live, every VOD media playlist and every static MPD with a SegmentTimeline of the directory is \
                served as a live stream that advances with the clock: its first --window segments at first, one more \
                as each segment's duration passes, a sliding window (or, with --event, every segment from the first), \
                EXT-X-ENDLIST (a static MPD again) once all are listed.
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

        @Flag(name: .long, help: "Serve the VOD media playlists as live streams advancing with the clock.")
        var live = false

        @Option(name: .long, help: "With --live: the segments a sliding window lists, and those listed at first.")
        var window: Int?

        @Flag(name: .long, help: "With --live: EVENT playlists (segments are only added) instead of a sliding window.")
        var event = false

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
            guard live || (window == nil && !event) else {
                throw ValidationError("--window and --event go with --live")
            }
            if let window, !(1...100_000).contains(window) {
                throw ValidationError("invalid --window \(window): expected 1 or more segments")
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
                origin = try await TestOrigin(
                    directory: directory,
                    host: host,
                    port: port,
                    conditions: conditions,
                    live: live ? LiveSchedule(window: window ?? 6, isEvent: event) : nil
                )
            } catch {
                throw CommandFailure("cannot listen on \(host):\(port): \(error)")
            }
            for (path, location) in redirects { origin.setRedirect(path, to: location) }
            let signals = await TerminationSignal.trap()
            StandardOutput.write(Data("listening on http://\(host):\(origin.port)\n".utf8))
            for await _ in signals { break }
            await origin.shutdown()
        }
    }
}
