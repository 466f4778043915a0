import Foundation
import Testing

@testable import StreamCacheDASHModel

/// The MPD's XML kept whole, its URLs mapped where a player resolves them, and what it refuses.
@Suite struct MediaPresentationTests {
    static let url = URL(string: "https://cdn.example/show/manifest.mpd")!

    static func mapped(_ text: String) throws -> String {
        try MediaPresentation(parsing: Array(text.utf8)).mappingURLs(documentURL: url) { "/" + $0 }.text
    }

    @Test func baseURLsAndRootedTemplatesAreMappedAndRelativeOnesResolveThroughThem() throws {
        let text = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" xmlns:cenc="urn:mpeg:cenc:2013">
              <BaseURL>https://media.example/root/</BaseURL>
              <Period>
                <AdaptationSet mimeType="video/mp4" x-unknown="kept">
                  <cenc:pssh>AAAA</cenc:pssh>
                  <Representation id="v1" bandwidth="100">
                    <BaseURL>v1/</BaseURL>
                    <SegmentTemplate media="$Number$.m4s" initialization="/abs/init-$RepresentationID$.mp4"/>
                  </Representation>
                  <Representation id="v2" bandwidth="200">
                    <SegmentList><SegmentURL media="https://other.example/a.m4s"/><SegmentURL media="b.m4s"/></SegmentList>
                  </Representation>
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let out = try Self.mapped(text)
        #expect(out.contains("<BaseURL>/https://media.example/root/</BaseURL>"))
        #expect(out.contains("<BaseURL>/https://media.example/root/v1/</BaseURL>"))
        #expect(out.contains("media=\"$Number$.m4s\""))
        #expect(out.contains("initialization=\"/https://media.example/abs/init-$RepresentationID$.mp4\""))
        #expect(out.contains("media=\"/https://other.example/a.m4s\"") && out.contains("media=\"b.m4s\""))
        // What the cache does not know is written back as it was.
        #expect(out.contains("x-unknown=\"kept\"") && out.contains("<cenc:pssh>AAAA</cenc:pssh>"))
        #expect(out.contains("xmlns:cenc=\"urn:mpeg:cenc:2013\""))
        // And the result reads again to the same tree.
        let again = try MediaPresentation(parsing: Array(out.utf8))
        #expect(again.root.elements("Period").count == 1)
    }

    /// Representations are counted over the whole document, in every period and set, before any
    /// is worked out: one more than the bound is refused, the bound itself is read.
    @Test func representationsPastTheBoundAreRefusedBeforeAnyIsWorkedOut() throws {
        func mpd(_ count: Int, periods: Int) -> [UInt8] {
            let each = count / periods
            let set =
                "<AdaptationSet>" + String(repeating: "<Representation bandwidth=\"1\"/>", count: each)
                + "</AdaptationSet>"
            return Array(("<MPD>" + String(repeating: "<Period>\(set)</Period>", count: periods) + "</MPD>").utf8)
        }
        let bound = MediaPresentation.maximumRepresentations
        #expect(try MediaPresentation(parsing: mpd(bound, periods: 2)).root.elements("Period").count == 2)
        let error = #expect(throws: ManifestParseError.self) {
            try MediaPresentation(parsing: mpd(bound + 2, periods: 2))
        }
        #expect(error?.message.contains("\(bound + 2) representations") == true)
    }

    @Test func aDynamicPresentationSaysSo() throws {
        #expect(try MediaPresentation(parsing: Array("<MPD type=\"dynamic\"/>".utf8)).isDynamic)
        #expect(try !MediaPresentation(parsing: Array("<MPD type=\"static\"/>".utf8)).isDynamic)
    }

    @Test(arguments: [
        ("not xml at all", "not well-formed"),
        ("<HTML><body/></HTML>", "not MPD"),
        (
            "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><MPD>&lol2;</MPD>",
            "document type declaration"
        ),
        (String(repeating: "<MPD>", count: 100) + String(repeating: "</MPD>", count: 100), "nested deeper"),
    ])
    func badDocumentsAreRefusedInOneLine(text: String, message: String) {
        #expect {
            _ = try MediaPresentation(parsing: Array(text.utf8))
        } throws: { error in
            "\(error)".contains(message) && !"\(error)".contains("\n")
        }
    }

    /// MPDs written by other projects (`Tests/Fixtures/dash`, with their licences).
    static let fixtures: [String] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/dash").path
        let walker = FileManager.default.enumerator(atPath: folder)
        var paths: [String] = []
        while let name = walker?.nextObject() as? String {
            if name.hasSuffix(".mpd") { paths.append(folder + "/" + name) }
        }
        return paths.sorted()
    }()

    @Test func thirdPartyMPDsReadWriteBackAndReadAgainTheSame() throws {
        #expect(Self.fixtures.count >= 3)
        for path in Self.fixtures {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let presentation = try MediaPresentation(parsing: bytes)
            let again = try MediaPresentation(parsing: Array(presentation.text.utf8))
            #expect(again == presentation, "\(path) changed when written back")
            // Mapped, every BaseURL names the proxy and nothing else is lost.
            var mapped = presentation.mappingURLs(documentURL: Self.url) { "/" + $0 }
            var baseURLs: [String] = []
            var elements = 0
            mapped.root.transformAll { node in
                elements += 1
                if node.localName == "BaseURL" { baseURLs.append(node.text) }
            }
            var before = 0
            var original = presentation.root
            original.transformAll { _ in before += 1 }
            #expect(elements == before, "\(path)")
            #expect(
                baseURLs.allSatisfy { $0.hasPrefix("/https://") || $0.hasPrefix("/http://") },
                "\(path): \(baseURLs)"
            )
        }
    }
}
