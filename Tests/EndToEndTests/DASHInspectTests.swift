import Foundation
import StreamCacheTesting
import Testing

/// `hls inspect` of a DASH MPD shows its representations and their segments, as it shows an HLS
/// playlist's variants; a document that is not an MPD gets one line.
@Suite(.timeLimit(.minutes(2))) struct DASHInspectTests {
    @Test(arguments: DASHThroughServeTests.Shape.allCases.filter { $0 != .absoluteBase })
    func eachShapeOfFfmpegsMuxerShowsItsRepresentationsAndSegments(shape: DASHThroughServeTests.Shape) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let folder = workspace.originDirectory + "/dash"
        try await DASHThroughServeTests.make(shape, in: folder)
        let result = try await CLI.run(
            ["hls", "inspect", "--json", folder + "/manifest.mpd"],
            cacheDir: workspace.cacheDirectory
        )
        #expect(result.status == 0, "\(result.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let representations = try #require(document["representations"] as? [[String: Any]])
        #expect(representations.map { $0["contentType"] as? String } == ["video", "audio"])
        for representation in representations {
            // 8 s in 2 s segments, each a file ffmpeg wrote (or a range of one).
            #expect(representation["segments"] as? Int == 4, "\(shape): \(representation)")
            #expect(
                (representation["duration"] as? Double).map { abs($0 - 8) < 0.2 } == true,
                "\(shape): \(representation)"
            )
        }
    }

    /// An MPD at a path that names no format is told by its bytes, as `serve` and `download` tell
    /// it, for `hls inspect` and `download -F` alike.
    @Test func anMPDAtAPathThatSaysNothingIsInspectedAsDASH() async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let folder = workspace.originDirectory + "/dash"
        try await DASHThroughServeTests.make(.number, in: folder)
        try FileManager.default.copyItem(atPath: folder + "/manifest.mpd", toPath: folder + "/show")
        let origin = try await OriginProcess(directory: workspace.originDirectory)
        let inspected = try await CLI.run(
            ["hls", "inspect", origin.url("dash/show")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(inspected.status == 0 && inspected.output.contains("representations: 2"), "\(inspected.stderr)")
        let formats = try await CLI.run(
            ["download", "-F", origin.url("dash/show")],
            cacheDir: workspace.cacheDirectory
        )
        #expect(formats.status == 0 && formats.output.contains("a1  audio"), "\(formats.output)\(formats.stderr)")
        try await origin.stop()
    }

    @Test(arguments: [
        ("<html><body/></html>", "not MPD"),
        (
            "<MPD mediaPresentationDuration=\"PT2S\"><Period><AdaptationSet><SegmentTemplate media=\"$Nope$\" duration=\"1\"/><Representation id=\"r\"/></AdaptationSet></Period></MPD>",
            "unknown identifier $Nope$"
        ),
        ("<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY a \"b\">]><MPD/>", "document type declaration"),
        ("<MPD><Period>", "not well-formed"),
    ])
    func badDocumentsGetOneLine(text: String, message: String) async throws {
        let workspace = Workspace()
        defer { workspace.remove() }
        let path = workspace.outputDirectory + "/bad.mpd"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await CLI.run(["hls", "inspect", path], cacheDir: workspace.cacheDirectory)
        let said = result.stderr + result.output
        #expect(said.contains(message), "\(said)")
        #expect(result.stderr.split(separator: "\n").count <= 1, "\(result.stderr)")
    }
}
