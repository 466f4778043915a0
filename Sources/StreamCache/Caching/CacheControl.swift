/// The directives of the `Cache-Control` fields of a response (RFC 9111 §5.2), as a private
/// cache reads them.
///
/// Every `Cache-Control` field counts (duplicates are joined); names are case-insensitive; a
/// value may be a token or a quoted string; unknown directives are kept aside and ignored. A
/// `max-age` that is not a non-negative number makes the response stale (RFC 9111 §4.2.1: an
/// invalid freshness lifetime is no freshness); a huge one is capped at 2^31 seconds, as §1.2.2
/// says.
public struct CacheControl: Hashable, Sendable {
    /// `max-age`, in seconds; `0` if given but invalid.
    public var maxAge: Int64?
    /// `no-store`: the response may not be stored (RFC 9111 §5.2.2.5).
    public var noStore = false
    /// `no-cache` without field names: every reuse is validated first. (With field names it asks
    /// only that those fields not be sent unvalidated; the cache sends none of them stale, so it
    /// is read the same way.)
    public var noCache = false
    /// `must-revalidate` (or `proxy-revalidate`): never served stale, offline included (§5.2.2.2).
    public var mustRevalidate = false
    /// `private`: for one user's cache only, which this is.
    public var isPrivate = false
    /// `public`.
    public var isPublic = false
    /// `immutable` (RFC 8246).
    public var immutable = false
    /// Directives this cache does not act on, lowercased.
    public var other: [String] = []

    /// The largest delta-seconds value kept (RFC 9111 §1.2.2).
    static let maximumSeconds: Int64 = 1 << 31

    /// Reads the directives of every value in `fields` (the values of all `Cache-Control` fields).
    public init(fields: [String]) {
        for field in fields {
            for (name, value) in Self.directives(in: field) {
                switch name {
                case "max-age":
                    let seconds = value.flatMap { Self.seconds($0) } ?? 0
                    // Of two max-age directives the smaller wins: the response is stale sooner.
                    maxAge = min(maxAge ?? Int64.max, seconds)
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "must-revalidate", "proxy-revalidate": mustRevalidate = true
                case "private": isPrivate = true
                case "public": isPublic = true
                case "immutable": immutable = true
                default: other.append(name)
                }
            }
        }
    }

    /// A delta-seconds value: digits only; larger than 2^31 is 2^31.
    static func seconds(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        guard text.count <= 18, let value = Int64(text) else { return maximumSeconds }
        return min(value, maximumSeconds)
    }

    /// The `name[=value]` directives of one field value, names lowercased, quotes removed;
    /// empty elements (`,,`) skipped.
    static func directives(in field: String) -> [(String, Substring?)] {
        var result: [(String, Substring?)] = []
        var rest = Substring(field)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !rest.isEmpty else { break }
            let name = rest.prefix { $0 != "=" && $0 != "," }
            rest = rest.dropFirst(name.count)
            var value: Substring?
            if rest.first == "=" {
                rest = rest.dropFirst()
                if rest.first == "\"" {
                    // A quoted string: up to the closing quote, backslash escapes kept simple.
                    var text = ""
                    var index = rest.index(after: rest.startIndex)
                    var escaped = false
                    while index < rest.endIndex {
                        let character = rest[index]
                        if escaped {
                            text.append(character)
                            escaped = false
                        } else if character == "\\" {
                            escaped = true
                        } else if character == "\"" {
                            break
                        } else {
                            text.append(character)
                        }
                        index = rest.index(after: index)
                    }
                    value = Substring(text)
                    rest = index < rest.endIndex ? rest[rest.index(after: index)...] : ""
                    rest = rest.drop { $0 != "," }
                } else {
                    let token = rest.prefix { $0 != "," }
                    rest = rest.dropFirst(token.count)
                    value = token.trimmingSuffix(" \t")
                }
            }
            let trimmed = name.trimmingSuffix(" \t").lowercased()
            if !trimmed.isEmpty { result.append((trimmed, value)) }
        }
        return result
    }
}

extension Substring {
    /// Without the trailing characters in `set`.
    func trimmingSuffix(_ set: String) -> Substring {
        var end = endIndex
        while end > startIndex, set.contains(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
