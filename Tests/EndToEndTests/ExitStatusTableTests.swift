import Foundation
import StreamCacheTesting
import Testing

/// The exit-status table of `docs/command-line.md`, run over every command it covers (`get`,
/// `export`, `download`, `verify`, `serve`'s start-up) and every kind of failure: curl's number
/// where curl has one, 64 for every usage error, 1 for the rest; and each says one line.
@Suite(.timeLimit(.minutes(3))) struct ExitStatusTableTests {
    /// One failure of one command.
    enum Failure: String, CaseIterable, Sendable {
        case getNotFound, getRefused, getUnresolved, getTimeout, getUnwritable, getRangePastTheEnd
        case getMissingURL, getUnknownOption, getBadRange, getBadTimeout, getNotAURL, getBadHeader, commandTypo
        case exportNotFound, exportRefused, exportUnwritable, exportMissingFile, exportFolderWithoutName
        case exportManifestAsMedia
        case downloadPlaylistNotFound, downloadRefused, downloadSegmentNotFound, downloadNotAPlaylist
        case downloadBadJobs, downloadNeitherURLNorID
        case verifyUnknownOption
        case serveBadPort, serveNotThisMachine, servePortInUse

        /// The status the table gives it, and what its line says.
        var expected: (status: Int32, says: String) {
            switch self {
            case .getNotFound, .exportNotFound, .downloadPlaylistNotFound, .downloadSegmentNotFound:
                (22, "answered 404 Not Found")
            case .getRangePastTheEnd: (22, "past the end")
            case .getRefused, .exportRefused, .downloadRefused: (7, "connection refused")
            case .getUnresolved: (6, "cannot resolve host")
            case .getTimeout: (28, "timed out")
            case .getUnwritable, .exportUnwritable: (23, "does not exist")
            case .getMissingURL, .exportMissingFile: (64, "Missing expected argument")
            case .getUnknownOption, .verifyUnknownOption: (64, "Unknown option")
            case .getBadRange: (64, "invalid --range")
            case .getBadTimeout: (64, "invalid --timeout")
            case .getNotAURL: (64, "not an absolute URL")
            case .getBadHeader: (64, "invalid --header")
            case .commandTypo: (64, "did you mean 'get'?")
            case .exportFolderWithoutName: (64, "give a file name")
            case .exportManifestAsMedia: (64, "download URL -o")
            case .downloadBadJobs: (64, "invalid --jobs")
            case .downloadNeitherURLNorID: (64, "it is not a URL")
            case .downloadNotAPlaylist: (1, "not an HLS playlist")
            case .serveBadPort: (64, "invalid port")
            case .serveNotThisMachine: (64, "not an address of this machine")
            case .servePortInUse: (1, "is in use")
            }
        }

        func arguments(origin: ListeningProcess, refused: Int, output: String) -> [String] {
            let missing = output + "/no/such/folder/file"
            switch self {
            case .getNotFound: return ["get", origin.url("nope.bin"), "-o", output + "/x"]
            case .getRefused: return ["get", "http://127.0.0.1:\(refused)/a.bin", "-o", output + "/x"]
            case .getUnresolved: return ["get", "http://no-such-host.invalid/a.bin", "-o", output + "/x"]
            case .getTimeout: return ["get", origin.url("a.bin"), "-o", output + "/x", "--timeout", "1"]
            case .getUnwritable: return ["get", origin.url("a.bin"), "-o", missing]
            case .getRangePastTheEnd: return ["get", origin.url("a.bin"), "-r", "5000-6000", "-o", output + "/x"]
            case .getMissingURL: return ["get"]
            case .getUnknownOption: return ["get", "--bogus", origin.url("a.bin")]
            case .getBadRange: return ["get", origin.url("a.bin"), "-r", "5-2", "-o", output + "/x"]
            case .getBadTimeout: return ["get", origin.url("a.bin"), "--timeout", "0", "-o", output + "/x"]
            case .getNotAURL: return ["get", "a.bin", "-o", output + "/x"]
            case .getBadHeader: return ["get", origin.url("a.bin"), "-H", "no colon", "-o", output + "/x"]
            case .commandTypo: return ["gte", origin.url("a.bin")]
            case .exportNotFound: return ["export", origin.url("nope.bin"), output + "/x"]
            case .exportRefused: return ["export", "http://127.0.0.1:\(refused)/a.bin", output + "/x"]
            case .exportUnwritable: return ["export", origin.url("a.bin"), missing]
            case .exportMissingFile: return ["export", origin.url("a.bin")]
            case .exportFolderWithoutName: return ["export", origin.url(""), output]
            case .exportManifestAsMedia: return ["export", origin.url("show/master.m3u8"), output + "/show.mp4"]
            case .downloadPlaylistNotFound: return ["download", origin.url("nope.m3u8")]
            case .downloadRefused: return ["download", "http://127.0.0.1:\(refused)/a.m3u8"]
            case .downloadSegmentNotFound: return ["download", origin.url("gap.m3u8")]
            case .downloadNotAPlaylist: return ["download", origin.url("a.bin")]
            case .downloadBadJobs: return ["download", origin.url("gap.m3u8"), "--jobs", "0"]
            case .downloadNeitherURLNorID: return ["download", "episode"]
            case .verifyUnknownOption: return ["verify", "--bogus"]
            case .serveBadPort: return ["serve", "--port", "99999"]
            case .serveNotThisMachine: return ["serve", "--host", "192.0.2.1", "--port", "0"]
            case .servePortInUse: return ["serve", "--port", "\(origin.port)"]
            }
        }
    }

    @Test(arguments: Failure.allCases)
    func eachFailureExitsWithTheTablesStatusAndOneLine(failure: Failure) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        try Data(count: 1000).write(to: URL(fileURLWithPath: workspace.originDirectory + "/a.bin"))
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\ngone.ts\n#EXT-X-ENDLIST\n"
        try playlist.write(toFile: workspace.originDirectory + "/gap.m3u8", atomically: true, encoding: .utf8)
        let origin = try await OriginProcess(
            directory: workspace.originDirectory,
            arguments: failure == .getTimeout ? ["--latency", "4000"] : []
        )
        let refused = try RefusingPort()
        let result = try await CLI.run(
            failure.arguments(origin: origin, refused: refused.port, output: workspace.outputDirectory),
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        let (status, says) = failure.expected
        #expect(result.status == status, "\(failure): \(result.stderr)")
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("streamcache: error:") }
        #expect(errors.count == 1 && errors[0].contains(says), "\(failure): \(result.stderr)")
        withExtendedLifetime(refused) {}
    }
}
