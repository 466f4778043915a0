import Foundation
import StreamCacheTesting
import Testing

/// A command whose reader of standard output or standard error goes away (`download --json |
/// head -1`) neither stops with a stack trace nor leaves its work undone: what it would print goes
/// nowhere.
@Suite(.timeLimit(.minutes(2))) struct ClosedPipeTests {
    @Test func aDownloadWhoseJSONReaderLeavesFinishesQuietly() async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        _ = try setup.writeTwoSegmentShow(seed: 740)
        let command = [
            CLI.binary, "download", setup.origin.url("show/index.m3u8"), "--json",
            "--cache-dir", setup.workspace.cacheDirectory, "--library", setup.library,
        ]
        .map { "'" + $0 + "'" }.joined(separator: " ")
        let script = "set -o pipefail; \(command) | head -1 >/dev/null; echo \"status ${PIPESTATUS[0]}\""
        let run = try await Tool.run("bash", ["-c", script])
        #expect(run.output.contains("status 0"), "\(run.output) \(run.stderr)")
        #expect(!run.stderr.contains("Fatal error"), "\(run.stderr)")
        let assets = try await setup.assets()
        #expect(assets.count == 1 && assets.first?.state == "complete", "\(assets.map(\.state))")
    }

    /// Where the reader that leaves reads from.
    enum Stream: String, Sendable {
        case standardOutput, standardError
    }

    /// `get`, `download`, `ls` and `hls ls --json`, each with the reader of stdout, then of
    /// stderr (progress forced on), gone after its first byte: status 0, and the work done.
    @Test(arguments: [
        (["get", "big.bin", "-o", "-"], Stream.standardOutput),
        (["get", "big.bin", "-o", "OUT", "--progress"], .standardError),
        (["download", "show/index.m3u8", "--json"], .standardOutput),
        (["download", "show/index.m3u8", "--progress"], .standardError),
        (["ls"], .standardOutput),
        (["hls", "ls", "--json"], .standardOutput),
    ])
    func aCommandWhoseReaderLeavesEndsQuietly(arguments: [String], stream: Stream) async throws {
        let setup = try await OfflineSetup()
        defer { setup.remove() }
        _ = try setup.writeTwoSegmentShow(seed: 741)
        let big = TestData.bytes(count: 3_000_000, seed: 742)
        try setup.workspace.write(big, as: "big.bin")
        let output = setup.workspace.output("big.bin")
        if arguments.contains("ls") {
            // Something to list: a download and a cached file.
            let download = try await setup.download("show/index.m3u8", [], command: ["download"])
            #expect(download.status == 0, "\(download.stderr)")
        }
        let command = arguments.map { argument in
            switch argument {
            case "big.bin", "show/index.m3u8": setup.origin.url(argument)
            case "OUT": output
            default: argument
            }
        }
        let quoted = ([CLI.binary] + command + ["--cache-dir", setup.workspace.cacheDirectory])
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let library = "STREAMCACHE_LIBRARY='\(setup.library)' "
        let pipe =
            switch stream {
            case .standardOutput: "\(library)\(quoted) 2>/dev/null | head -c 1 >/dev/null"
            case .standardError: "{ \(library)\(quoted) 2>&1 >/dev/null | head -c 1 >/dev/null; }"
            }
        let run = try await Tool.run("bash", ["-c", "\(pipe); echo \"status ${PIPESTATUS[0]}\""])
        #expect(run.output.contains("status 0"), "\(arguments) \(stream): \(run.output) \(run.stderr)")
        if arguments.contains("-o"), arguments.contains("OUT") {
            #expect(setup.workspace.read(output) == big, "\(arguments): the file was not written whole")
        }
        if arguments.first == "download" {
            let assets = try await setup.assets()
            #expect(assets.count == 1 && assets.first?.state == "complete", "\(assets.map(\.state))")
        }
    }
}
