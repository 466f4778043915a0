import Foundation
import Testing

@testable import StreamCacheDASHModel

/// What the XML reader refuses before the parser sees a byte, and the text it keeps whole.
@Suite struct XMLTreeParserTests {
    /// Text reported in many pieces (every `&amp;` is one) is one text child, whole, around the
    /// elements between its parts.
    @Test func textInManyPiecesIsKeptWhole() throws {
        let pieces = 50_000
        let document = "<a>x" + String(repeating: "&amp;", count: pieces) + "<b/>y&lt;z</a>"
        let root = try XMLTreeParser.parse(Array(document.utf8))
        #expect(root.children.count == 3)
        #expect(root.children.first == .text("x" + String(repeating: "&", count: pieces)))
        #expect(root.children.last == .text("y<z"))
    }

    /// A document of 15 MiB, within the 16 MiB a manifest may have, is read whole: given in one
    /// piece, the XML parser refused everything past 10 MB as not well-formed.
    @Test func aDocumentPastTenMegabytesIsReadWhole() throws {
        let text = String(repeating: "x", count: (1 << 20) - 16)
        let document = "<MPD>" + String(repeating: "<Title>\(text)</Title>\n", count: 15) + "<Period/></MPD>"
        let root = try XMLTreeParser.parse(Array(document.utf8))
        #expect(root.children.filter { if case .element = $0 { true } else { false } }.count == 16)
    }

    @Test(arguments: [
        // More attributes on one element than any MPD has.
        "<MPD " + (0...1_000).map { "a\($0)=\"1\"" }.joined(separator: " ") + "/>",
        // A document type declaration after the root began.
        "<MPD><!DOCTYPE x [<!ENTITY e \"e\">]></MPD>",
    ])
    func boundsAreCheckedBeforeParsing(document: String) {
        #expect(throws: ManifestParseError.self) { try XMLTreeParser.parse(Array(document.utf8)) }
    }

    /// UTF-16, whose `<!DOCTYPE` a search for its UTF-8 bytes would not find, is refused.
    @Test func textThatIsNotUTF8IsRefused() {
        let document = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE x [<!ENTITY e \"e\">]><MPD>&e;</MPD>"
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in document.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(throws: ManifestParseError.self) { try XMLTreeParser.parse(bytes) }
        // Quoted values may hold what a tag's syntax would not: `=` and `>` in them count for nothing.
        let quoted = "<MPD a=\"" + String(repeating: "=>", count: 5_000) + "\" b='x'/>"
        #expect((try? XMLTreeParser.parse(Array(quoted.utf8)))?.attributes["b"] == "x")
    }
}
