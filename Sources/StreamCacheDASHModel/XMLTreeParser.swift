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
/// no external entities, UTF-8 only, at most ``maximumDepth`` levels, ``maximumElements``
/// elements and ``maximumAttributes`` attributes on one element. Every bound is checked in one
/// pass over the bytes before the parser sees them (the system's libxml2 takes quadratic time
/// over many attributes of one element), and text is gathered once per element: the time a
/// parse takes grows with the document, never with its square.
public enum XMLTreeParser {
    public static let maximumDepth = 64
    public static let maximumElements = 1_000_000
    /// The most attributes one element may have (an MPD's have a few dozen at most).
    public static let maximumAttributes = 1_000

    /// The document's root element.
    ///
    /// - Throws: ``ManifestParseError`` naming the line, for text that is not XML, a document
    ///   type declaration, or a document past the bounds.
    public static func parse(_ bytes: [UInt8]) throws(ManifestParseError) -> XMLNode {
        try Self.checkBounds(bytes)
        // Fed as a stream, in pieces: given whole, libxml2 refuses a document past 10 MB as not
        // well-formed, well within the size a manifest may have.
        let parser = XMLParser(stream: InputStream(data: Data(bytes)))
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

    /// Refuses, in one pass over the bytes, a document the parser is not to see: text that is not
    /// UTF-8 (a NUL byte: UTF-16 or UTF-32, whose `<!DOCTYPE` a byte search would not find),
    /// a document type declaration (`<!DOCTYPE`, `<!ENTITY`) anywhere, or an element with more
    /// than ``maximumAttributes`` attributes (counted by their `=` outside quoted values).
    static func checkBounds(_ bytes: [UInt8]) throws(ManifestParseError) {
        let needles: [[UInt8]] = [Array("<!DOCTYPE".utf8), Array("<!ENTITY".utf8)]
        var line = 1
        var inTag = false
        var quote: UInt8 = 0
        var attributes = 0
        for index in bytes.indices {
            let byte = bytes[index]
            switch byte {
            case 0:
                throw ManifestParseError("line \(line): not UTF-8 text (a NUL byte; UTF-16 and UTF-32 are refused)")
            case UInt8(ascii: "\n"):
                line += 1
                continue
            default:
                break
            }
            if quote != 0 {
                if byte == quote { quote = 0 }
                continue
            }
            if inTag {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
                case UInt8(ascii: ">"): inTag = false
                case UInt8(ascii: "="):
                    attributes += 1
                    guard attributes <= maximumAttributes else {
                        throw ManifestParseError(
                            "line \(line): an element with more than \(maximumAttributes) attributes"
                        )
                    }
                default: break
                }
                continue
            }
            guard byte == UInt8(ascii: "<") else { continue }
            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "!") {
                for needle in needles where index + needle.count <= bytes.count {
                    if bytes[index..<index + needle.count].elementsEqual(needle) {
                        throw ManifestParseError(
                            "line \(line): a document type declaration (<!DOCTYPE or <!ENTITY) is refused"
                        )
                    }
                }
                // A comment or CDATA section: its text holds no attributes.
                continue
            }
            inTag = true
            attributes = 0
        }
    }
}

private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLNode?
    var failure: ManifestParseError?
    private var stack: [XMLNode] = []
    private var elements = 0
    /// The text of the innermost open element since its last child began: gathered here, in
    /// place, and added to the element as one piece (each piece libxml2 reports, `&amp;` among
    /// them, appended to the text before it would copy the text each time).
    private var text = ""

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
        flushText()
        stack.append(XMLNode(name: elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        flushText()
        guard let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(.element(node))
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard !stack.isEmpty else { return }
        text += string
    }

    /// Adds the text gathered to the innermost open element.
    private func flushText() {
        guard !text.isEmpty else { return }
        if !stack.isEmpty { stack[stack.count - 1].children.append(.text(text)) }
        text = ""
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        self.parser(parser, foundCharacters: String(decoding: CDATABlock, as: UTF8.self))
    }

    private func stop(_ parser: XMLParser, _ message: String) {
        if failure == nil { failure = ManifestParseError(message) }
        parser.abortParsing()
    }
}
