import Foundation

/// An MPEG-DASH media presentation description (ISO/IEC 23009-1) as a tree of its XML, with
/// what the cache needs of it: whether it is `dynamic` (live: it changes at the origin), and its
/// URLs mapped, each where the player would resolve it.
public struct MediaPresentation: Hashable, Sendable {
    /// The `MPD` element.
    public var root: XMLNode

    /// Elements whose text is a URL.
    static let urlElements: Set<Substring> = ["BaseURL", "Location", "PatchLocation"]
    /// Attributes that hold a URL or a URL template, by element.
    static let urlAttributes: [Substring: [String]] = [
        "SegmentTemplate": ["media", "initialization", "index", "bitstreamSwitching"],
        "SegmentURL": ["media", "index"],
        "Initialization": ["sourceURL"],
        "RepresentationIndex": ["sourceURL"],
        "BitstreamSwitching": ["sourceURL"],
        "Period": ["xlink:href"],
        "AdaptationSet": ["xlink:href"],
        "SegmentList": ["xlink:href"],
        "EventStream": ["xlink:href"],
    ]

    /// The most representations one MPD may list, over all its periods and adaptation sets: far
    /// more than any presentation has (tens), so that a document of hundreds of thousands, each
    /// worked out with its segments, is refused before it is.
    public static let maximumRepresentations = 10_000

    /// Reads an MPD.
    ///
    /// - Throws: ``ManifestParseError`` for text that is not XML (naming the line), an XML bomb,
    ///   a document whose root is not `MPD`, or one of more than ``maximumRepresentations``.
    public init(parsing bytes: [UInt8]) throws(ManifestParseError) {
        let root = try XMLTreeParser.parse(bytes)
        guard root.localName == "MPD" else {
            throw ManifestParseError("the root element is \(root.name.prefix(40)), not MPD")
        }
        var count = 0
        for period in root.elements("Period") {
            for set in period.elements("AdaptationSet") { count += set.elements("Representation").count }
        }
        guard count <= Self.maximumRepresentations else {
            throw ManifestParseError(
                "the MPD lists \(count) representations, more than the \(Self.maximumRepresentations) one may have"
            )
        }
        self.root = root
    }

    /// `type="dynamic"`: a live presentation, whose MPD the origin updates.
    public var isDynamic: Bool { root.attributes["type"] == "dynamic" }

    /// When a dynamic presentation's first segment becomes available (`availabilityStartTime`,
    /// an `xs:dateTime`), if the MPD gives a valid one.
    public var availabilityStart: Date? {
        guard let text = root.attributes["availabilityStartTime"]?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        // A time with no zone is UTC, as DASH players read it.
        return formatter.date(from: text) ?? formatter.date(from: text + "Z")
    }

    /// The MPD with every URL it names mapped by `transform`, which gets the URL as the player
    /// would resolve it (against the `BaseURL`s in force, and at the top against `documentURL`).
    ///
    /// `BaseURL`s and `Location`s become `transform`'s answer for their absolute URL. Templates and
    /// segment URLs that are absolute or start with `/` do too (with their `$…$` identifiers left in
    /// place); relative ones are left as they are, since they resolve against a mapped `BaseURL`
    /// or, with none, against the MPD's own URL.
    public func mappingURLs(documentURL: URL, _ transform: (String) -> String) -> MediaPresentation {
        var mapped = self
        mapped.root = Self.map(root, base: documentURL, transform)
        return mapped
    }

    private static func map(_ node: XMLNode, base incoming: URL, _ transform: (String) -> String) -> XMLNode {
        var node = node
        var base = incoming
        if let first = node.elements("BaseURL").first, let resolved = resolve(first.text, against: incoming) {
            base = resolved
        }
        for name in urlAttributes[node.localName] ?? [] {
            guard let value = node.attributes[name], isRooted(value), let absolute = resolve(value, against: base)
            else {
                continue
            }
            node.attributes[name] = transform(templateText(absolute))
        }
        for index in node.children.indices {
            guard case .element(var child) = node.children[index] else { continue }
            if urlElements.contains(child.localName) {
                if let absolute = resolve(child.text, against: incoming) {
                    child.setText(transform(templateText(absolute)))
                }
            } else {
                child = map(child, base: base, transform)
            }
            node.children[index] = .element(child)
        }
        return node
    }

    /// Whether `value` names its own scheme, host or root path rather than being relative to the
    /// base in force.
    static func isRooted(_ value: String) -> Bool {
        if value.hasPrefix("/") { return true }
        guard let colon = value.firstIndex(of: ":") else { return false }
        let scheme = value[..<colon]
        return !scheme.isEmpty && scheme.first!.isLetter
            && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// `value` (a URL or a template with `$…$` identifiers) resolved against `base`.
    static func resolve(_ value: String, against base: URL) -> URL? {
        // `$` is a valid URL character; a template's identifiers survive resolution as they are.
        URL(string: value.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: base)?.absoluteURL
    }

    /// The absolute URL's text, with the template identifiers a URL parser may have escaped
    /// (`%24Number%24`) back as written.
    static func templateText(_ url: URL) -> String {
        url.absoluteString.replacingOccurrences(of: "%24", with: "$")
    }

    /// The MPD as XML text.
    public var text: String { root.xml() }
}
