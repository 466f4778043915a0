import Foundation

/// The variables of `EXT-X-DEFINE` (rfc8216bis §4.4.2.3) and their `{$NAME}` substitution in
/// URI lines and quoted-string attribute values.
///
/// Variables may be defined from variables, so a small playlist could expand without bound
/// (each definition doubling the last): what substitution adds to one playlist is at most
/// ``maximumExpansion`` bytes, past which the playlist is refused.
struct Variables {
    /// The most bytes substitution may add to one playlist.
    static let maximumExpansion = 4 << 20

    /// What substitution has added so far, shared by every copy of one playlist's variables.
    private final class Expansion {
        // Used by the one task that parses the playlist.
        var added = 0
    }

    private var values: [String: String] = [:]
    private let expansion = Expansion()
    /// The playlist URL's query, for `QUERYPARAM`.
    private let query: [String: String]
    /// The multivariant playlist's variables, for `IMPORT`.
    private let imported: [String: String]

    init(url: String?, imported: [String: String]) {
        var query: [String: String] = [:]
        if let url, let mark = url.firstIndex(of: "?") {
            for pair in url[url.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncodingIfValid
                if query[name] == nil {
                    query[name] = parts.count > 1 ? String(parts[1]).removingPercentEncodingIfValid : ""
                }
            }
        }
        self.query = query
        self.imported = imported
    }

    /// The variables defined so far.
    var all: [String: String] { values }

    /// Adds the variable an `EXT-X-DEFINE` declares.
    mutating func define(_ attributes: AttributeList, line: Int) throws(HLSParseError) {
        let name: String
        let value: String
        if let given = attributes["NAME"] {
            guard let defined = attributes["VALUE"] else {
                throw HLSParseError(line: line, "EXT-X-DEFINE NAME without VALUE")
            }
            (name, value) = (given, defined)
        } else if let given = attributes["IMPORT"] {
            guard let defined = imported[given] else {
                throw HLSParseError(
                    line: line,
                    "EXT-X-DEFINE IMPORT of '\(given)', which the multivariant playlist does not define"
                )
            }
            (name, value) = (given, defined)
        } else if let given = attributes["QUERYPARAM"] {
            guard let defined = query[given] else {
                throw HLSParseError(line: line, "EXT-X-DEFINE QUERYPARAM '\(given)' is not in the playlist URL")
            }
            (name, value) = (given, defined)
        } else {
            throw HLSParseError(line: line, "EXT-X-DEFINE needs NAME, IMPORT or QUERYPARAM")
        }
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isNameByte) else {
            throw HLSParseError(line: line, "invalid variable name '\(name.prefix(40))'")
        }
        guard values[name] == nil else { throw HLSParseError(line: line, "variable '\(name)' is defined twice") }
        values[name] = value
    }

    /// `text` with every `{$NAME}` replaced by its value.
    func substitute(_ text: String, line: Int) throws(HLSParseError) -> String {
        guard text.contains("{$") else { return text }
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "{$") {
            result += rest[..<open.lowerBound]
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: "}") else {
                result += rest[open.lowerBound...]
                return result
            }
            let name = String(after[..<close])
            guard let value = values[name] else {
                throw HLSParseError(line: line, "undefined variable '\(name.prefix(40))'")
            }
            result += value
            expansion.added += value.utf8.count
            guard expansion.added <= Self.maximumExpansion else {
                throw HLSParseError(
                    line: line,
                    "variables expand the playlist by more than \(Self.maximumExpansion >> 20) MiB"
                )
            }
            rest = after[after.index(after: close)...]
        }
        return result + rest
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F
    }
}

extension String {
    /// Percent-decoded, or as it is if the encoding is broken.
    var removingPercentEncodingIfValid: String { removingPercentEncoding ?? self }
}
