import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Why a document could not be read as a manifest: one line naming where.
public struct ManifestParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Reads an XML document into an ``XMLNode`` tree with Foundation's `XMLParser`, within bounds:
/// no document type declaration (an MPD needs none; entity expansion is how an XML bomb grows),
/// no external entities, at most ``maximumDepth`` levels and ``maximumElements`` elements.
public enum XMLTreeParser {
    public static let maximumDepth = 64
    public static let maximumElements = 1_000_000

    /// The document's root element.
    ///
    /// - Throws: ``ManifestParseError`` naming the line, for text that is not XML, a document
    ///   type declaration, or a document past the bounds.
    public static func parse(_ bytes: [UInt8]) throws(ManifestParseError) -> XMLNode {
        if Self.declaresDocumentType(bytes) {
            throw ManifestParseError("a document type declaration (<!DOCTYPE or <!ENTITY) is refused")
        }
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let builder = TreeBuilder()
        parser.delegate = builder
        let parsed = parser.parse()
        if let failure = builder.failure { throw failure }
        guard parsed, let root = builder.root else {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "not XML"
            throw ManifestParseError("line \(parser.lineNumber): not well-formed XML (\(reason))")
        }
        return root
    }

    /// Whether `<!DOCTYPE` or `<!ENTITY` appears before the root element's content, or anywhere.
    private static func declaresDocumentType(_ bytes: [UInt8]) -> Bool {
        let needles: [[UInt8]] = [Array("<!DOCTYPE".utf8), Array("<!ENTITY".utf8)]
        guard bytes.count >= 8 else { return false }
        for start in 0..<(bytes.count - 7)
        where bytes[start] == UInt8(ascii: "<") && bytes[start + 1] == UInt8(ascii: "!") {
            for needle in needles where start + needle.count <= bytes.count {
                if bytes[start..<start + needle.count].elementsEqual(needle) { return true }
            }
        }
        return false
    }
}

private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLNode?
    var failure: ManifestParseError?
    private var stack: [XMLNode] = []
    private var elements = 0

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements += 1
        guard stack.count < XMLTreeParser.maximumDepth else {
            return stop(parser, "line \(parser.lineNumber): elements nested deeper than \(XMLTreeParser.maximumDepth)")
        }
        guard elements <= XMLTreeParser.maximumElements else {
            return stop(parser, "more than \(XMLTreeParser.maximumElements) elements")
        }
        stack.append(XMLNode(name: elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(.element(node))
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard !stack.isEmpty else { return }
        if case .text(let before)? = stack[stack.count - 1].children.last {
            stack[stack.count - 1].children[stack[stack.count - 1].children.count - 1] = .text(before + string)
        } else {
            stack[stack.count - 1].children.append(.text(string))
        }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        self.parser(parser, foundCharacters: String(decoding: CDATABlock, as: UTF8.self))
    }

    private func stop(_ parser: XMLParser, _ message: String) {
        if failure == nil { failure = ManifestParseError(message) }
        parser.abortParsing()
    }
}
