/// The `NAME=VALUE,…` list of an HLS tag (RFC 8216 §4.2), in the order written. Values keep
/// their form (quoted string or not), so a list is written back as it was read.
public struct AttributeList: Hashable, Sendable {
    /// One `NAME=VALUE`.
    public struct Attribute: Hashable, Sendable {
        public var name: String
        public var value: String
        /// Whether the value is a quoted string (written between `"`).
        public var isQuoted: Bool

        public init(name: String, value: String, isQuoted: Bool) {
            self.name = name
            self.value = value
            self.isQuoted = isQuoted
        }
    }

    public var attributes: [Attribute]

    public init(_ attributes: [Attribute] = []) {
        self.attributes = attributes
    }

    /// Parses an attribute list.
    ///
    /// - Throws: a reason (without a line) for a missing `=`, an empty or invalid name, or a quoted
    ///   string that is not closed or is followed by something other than `,`.
    public init(parsing text: Substring) throws(AttributeListError) {
        var attributes: [Attribute] = []
        var rest = text[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else {
                throw AttributeListError("attribute '\(rest.prefix(40))' has no '='")
            }
            let name = String(rest[..<equals]).trimmingSpaces()
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isNameByte) else {
                throw AttributeListError("invalid attribute name '\(name.prefix(40))'")
            }
            rest = rest[rest.index(after: equals)...]
            if rest.first == "\"" {
                let body = rest.dropFirst()
                guard let close = body.firstIndex(of: "\"") else {
                    throw AttributeListError("the quoted value of \(name) is not closed")
                }
                attributes.append(Attribute(name: name, value: String(body[..<close]), isQuoted: true))
                rest = body[body.index(after: close)...]
                if rest.isEmpty { break }
                guard rest.first == "," else {
                    throw AttributeListError("unexpected '\(rest.prefix(20))' after the quoted value of \(name)")
                }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                let value = String(rest[..<end]).trimmingSpaces()
                guard !value.contains("\"") else {
                    throw AttributeListError("stray '\"' in the value of \(name)")
                }
                attributes.append(Attribute(name: name, value: value, isQuoted: false))
                rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            }
        }
        self.attributes = attributes
    }

    /// The list as written in a tag: `BANDWIDTH=1280000,CODECS="avc1.4d401e,mp4a.40.2"`.
    public var text: String {
        attributes.map { $0.isQuoted ? "\($0.name)=\"\($0.value)\"" : "\($0.name)=\($0.value)" }
            .joined(separator: ",")
    }

    /// The value of the first attribute called `name`.
    public subscript(name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// Sets (or adds) attribute `name` as a quoted string.
    public mutating func setQuoted(_ name: String, to value: String) {
        set(name, to: value, isQuoted: true)
    }

    /// Removes every attribute called `name`.
    public mutating func remove(_ name: String) {
        attributes.removeAll { $0.name == name }
    }

    /// Sets (or adds) attribute `name` as an enumerated (unquoted) value.
    public mutating func setUnquoted(_ name: String, to value: String) {
        set(name, to: value, isQuoted: false)
    }

    private mutating func set(_ name: String, to value: String, isQuoted: Bool) {
        if let index = attributes.firstIndex(where: { $0.name == name }) {
            attributes[index].value = value
            attributes[index].isQuoted = isQuoted
        } else {
            attributes.append(Attribute(name: name, value: value, isQuoted: isQuoted))
        }
    }

    /// Replaces every quoted value with `transform(value)` (variable substitution).
    mutating func transformQuotedValues(_ transform: (String) throws(HLSParseError) -> String) throws(HLSParseError) {
        for index in attributes.indices where attributes[index].isQuoted {
            attributes[index].value = try transform(attributes[index].value)
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
            || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }
}

/// A malformed attribute list; the parser adds the line.
public struct AttributeListError: Error, Hashable, Sendable {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
}
