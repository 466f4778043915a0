import Foundation
import StreamCacheTesting
import Testing

/// `get`/`export` wrote `.NAME.PID.partial` beside the target and renamed it over the target, so
/// `get -o` into `/dev/null` replaced the machine's `/dev/null`, and a FIFO or a symlink was
/// replaced too; Ctrl-C left the partial file behind.
@Suite(.timeLimit(.minutes(3))) struct OutputTargetTests {
    static func partialFiles(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".partial") }
    }

    @Test func aFIFOIsWrittenStraightAndStaysAFIFO() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 300_000, seed: 580)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let fifo = workspace.output("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Task { try await Tool.run("cat", [fifo]) }
        let got = try await CLI.run(["get", origin.url("a.bin"), "-o", fifo], cacheDir: workspace.cacheDirectory)
        #expect(got.status == 0, "\(got.stderr)")
        let read = try await reader.value
        #expect(read.stdout == Data(data), "the reader of the FIFO got \(read.stdout.count) bytes")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the FIFO was replaced")
        #expect(Self.partialFiles(in: workspace.outputDirectory).isEmpty)
    }

    @Test func aSymlinkIsFollowedToItsTarget() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 100_000, seed: 581)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let target = workspace.output("target.bin")
        let link = workspace.output("link.bin")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let got = try await CLI.run(["get", origin.url("a.bin"), "-o", link], cacheDir: workspace.cacheDirectory)
        #expect(got.status == 0, "\(got.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target, "the link was replaced")
        #expect(workspace.read(target) == data)
    }

    @Test func sigintRemovesThePartialFileAndTheNextRunResumes() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 3_000_000, seed: 582)
        try workspace.write(data, as: "a.bin")
        // About 10 s to download: time to interrupt it however loaded the machine is.
        let origin = try await OriginProcess(directory: workspace.originDirectory, arguments: ["--rate", "300K"])
        let output = workspace.output("a.bin")
        let (process, _, errors) = try CLI.start(
            ["get", origin.url("a.bin"), "-o", output],
            cacheDir: workspace.cacheDirectory
        )
        // Interrupted once it has written some bytes to its partial file (on a loaded machine the
        // file can stand empty for seconds). Timed on a thread of its own: wake-ups on a busy
        // cooperative pool can come seconds late.
        let directory = workspace.outputDirectory
        let sawBytes = try await onOwnThread {
            var seen = false
            for _ in 0..<600 where !seen {
                seen = Self.partialFiles(in: directory).contains { name in
                    let size =
                        (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size]) as? Int
                    return (size ?? 0) >= 100_000
                }
                if !seen { usleep(50_000) }
            }
            if process.isRunning { kill(process.processIdentifier, SIGINT) }
            return seen
        }
        #expect(sawBytes, "no bytes in a partial file while downloading")
        let message = try await errors.all()
        try await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationStatus == 130)
        let text = String(decoding: message, as: UTF8.self)
        #expect(text.hasPrefix("interrupted; ") && text.contains("kept in the cache, run again to resume"), "\(text)")
        #expect(text.split(separator: "\n").count == 1)
        #expect(Self.partialFiles(in: workspace.outputDirectory).isEmpty, "a partial file was left")
        #expect(!FileManager.default.fileExists(atPath: output))

        struct Listed: Decodable { let cachedBytes: Int64 }
        let listed = try await CLI.run(["ls", "--json"], cacheDir: workspace.cacheDirectory)
        let kept =
            try JSONDecoder().decode(ListingOf<Listed>.self, from: listed.stdout).resources.first?.cachedBytes ?? 0
        #expect(kept > 0, "the interrupted run kept nothing in the cache")
        let before = try await origin.stats().bodyBytes
        let again = try await CLI.run(["get", origin.url("a.bin"), "-o", output], cacheDir: workspace.cacheDirectory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(workspace.read(output) == data)
        let fetched = try await origin.stats().bodyBytes - before
        #expect(fetched <= Int64(data.count) - kept, "the second run fetched \(fetched) bytes; \(kept) were cached")
    }

    @Test func aClosedPipeIsNotAnError() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try workspace.write(TestData.bytes(count: 2_000_000, seed: 583), as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let script =
            "set -o pipefail; STREAMCACHE_DIR='\(workspace.cacheDirectory)' '\(CLI.binary)' get "
            + "'\(origin.url("a.bin"))' -o - | head -c 100 | wc -c"
        let piped = try await Tool.run("bash", ["-c", script])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.isEmpty, "\(piped.stderr)")
        #expect(piped.output.trimmingCharacters(in: .whitespacesAndNewlines) == "100")
    }

    /// A cached resource goes to a file or pipe by `sendfile` on Linux; the shell's `>>` opens
    /// stdout for appending, which `sendfile` refuses, so those bytes are read and written.
    @Test func cachedBytesReachAFileThePipeAndAnAppendedFile() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 3_000_000, seed: 584)
        try workspace.write(data, as: "a.bin")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let get = "STREAMCACHE_DIR='\(workspace.cacheDirectory)' '\(CLI.binary)' get '\(origin.url("a.bin"))'"
        let file = workspace.output("a.bin")
        let appended = workspace.output("appended.bin")
        try Data("kept\n".utf8).write(to: URL(fileURLWithPath: appended))
        let script =
            "set -eo pipefail; \(get) -o - > /dev/null; \(get) -o '\(file)'; \(get) -o - >> '\(appended)'; "
            + "\(get) -o - | cat > '\(file).piped'"
        let run = try await Tool.run("bash", ["-c", script])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        for (path, expected) in [(file, data), (appended, Array("kept\n".utf8) + data), (file + ".piped", data)] {
            let written = workspace.read(path)
            let right = written == expected
            #expect(right, "\(path): \(written?.count ?? 0) bytes, not the \(expected.count) expected")
        }
    }

    @Test func foldersAreRefusedBeforeDownloadingOrNamedAfterTheURL() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let data = TestData.bytes(count: 10_000, seed: 584)
        try workspace.write(data, as: "episode.mp3")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let refused = try await CLI.run(
            ["get", origin.url("episode.mp3"), "-o", workspace.outputDirectory + "/"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(refused.status != 0 && refused.stderr.contains("is a directory"), "\(refused.stderr)")
        #expect(try await origin.stats().requests.isEmpty, "it downloaded before refusing")
        let exported = try await CLI.run(
            ["export", origin.url("episode.mp3"), workspace.outputDirectory],
            cacheDir: workspace.cacheDirectory
        )
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(workspace.read(workspace.output("episode.mp3")) == data)
    }
}
