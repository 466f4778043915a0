import Foundation
import StreamCacheTesting
import Testing

/// What a DASH recording does with dynamic MPDs that lie or strain it: a presentation that began
/// a quarter of a century ago, reloads asked for without pause, `Location`s that point at each
/// other, an update that drops the chosen representation. Each records what it can, reloads at
/// a bounded pace, and ends with the package finished, in one line when it fails.
@Suite(.timeLimit(.minutes(3))) struct LiveMPDBadInputTests {
    /// A dynamic MPD of one representation `id` of 2 s segments by number since 2000, asking to
    /// be reloaded without pause, with `location` as its `Location` when given.
    static func mpd(id: String = "v", location: String? = nil) -> String {
        """
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2000-01-01T00:00:00Z" \
        minimumUpdatePeriod="PT0S">\(location.map { "<Location>\($0)</Location>" } ?? "")
        <Period id="1" start="PT0S"><AdaptationSet contentType="video" mimeType="video/mp4">
        <Representation id="\(id)" bandwidth="1000" codecs="avc1.640028" width="320" height="240">
        <SegmentTemplate timescale="1" duration="2" media="seg.m4s?n=$Number$" initialization="init.mp4"/>
        </Representation></AdaptationSet></Period></MPD>
        """
    }

    /// The origin's script: the MPDs by path, an initialization segment and every media segment.
    static func script(_ documents: [String: String]) -> [String: Any] {
        var script: [String: Any] = [
            "/init.mp4": ["status": 200, "size": 100], "/seg.m4s": ["status": 200, "size": 1000],
        ]
        for (path, text) in documents {
            script[path] = ["status": 200, "headers": [["Content-Type", "application/dash+xml"]], "text": text]
        }
        return script
    }

    /// Numbers near 400 million, reloads paced whatever `minimumUpdatePeriod` says, and two MPDs
    /// whose `Location`s name each other, each reload one request.
    @Test func aPresentationFromLongAgoIsRecordedAtItsEdgeAtABoundedPace() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(Self.script([:]), in: workspace)
        defer { origin.process.terminate() }
        try origin.rescript(
            Self.script([
                "/a.mpd": Self.mpd(location: origin.url("b.mpd")), "/b.mpd": Self.mpd(location: origin.url("a.mpd")),
            ])
        )
        let started = ContinuousClock.now
        let result = try await CLI.run(
            ["download", origin.url("a.mpd"), "--duration", "12"],
            cacheDir: workspace.cacheDirectory,
            timeout: .seconds(60)
        )
        let seconds = Double((ContinuousClock.now - started).components.seconds) + 1
        #expect(result.status == 0, "\(result.stderr)")
        let requests = try await origin.allRequests()
        let numbers = requests.compactMap { $0.path.split(separator: "n=").last.flatMap { Int64($0) } }
        let now = Date().timeIntervalSince(ISO8601DateFormatter().date(from: "2000-01-01T00:00:00Z")!)
        #expect(numbers.count >= 3 && numbers.allSatisfy { abs(Double($0) - now / 2) < 30 }, "\(numbers)")
        let reloads = requests.filter { $0.path.hasSuffix(".mpd") }.map(\.path)
        #expect(Set(reloads) == ["/a.mpd", "/b.mpd"], "\(reloads)")
        // A reload a second at most (what `minimumUpdatePeriod="PT0S"` is taken as), each at most
        // two requests through the cache (an origin without validators is asked for the bytes).
        #expect(Double(reloads.count) <= 2 * (seconds + 2), "\(reloads.count) MPD requests in \(seconds) s")
    }

    @Test func anUpdateThatDropsTheRepresentationEndsTheRecordingInOneLine() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let origin = try await ScriptedOrigin(Self.script(["/live.mpd": Self.mpd()]), in: workspace)
        defer { origin.process.terminate() }
        let recording = Task {
            try await CLI.run(
                ["download", origin.url("live.mpd"), "--duration", "600"],
                cacheDir: workspace.cacheDirectory,
                timeout: .seconds(150)
            )
        }
        // Once a segment is in (the recording chose `v`), every representation is another's.
        let deadline = ContinuousClock.now + .seconds(120)
        var started = false
        while !started, .now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            started = try await !origin.allRequests().filter({ $0.path.contains("seg.m4s") }).isEmpty
        }
        try #require(started, "the recording asked for no segment")
        try origin.rescript(Self.script(["/live.mpd": Self.mpd(id: "w")]))
        let result = try await recording.value
        #expect(result.status != 0)
        let errors = result.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(
            errors.count == 1 && errors[0].contains("no longer lists representation v")
                && errors[0].contains("the recording ends with"),
            "\(result.stderr)"
        )
        let listing = try await CLI.run(["packages", "ls", "--json"], cacheDir: workspace.cacheDirectory)
        #expect(listing.output.contains("\"complete\""), "\(listing.output)")
    }
}
