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
    /// `must-revalidate`: never served stale, offline included (§5.2.2.2).
    public var mustRevalidate = false
    /// `proxy-revalidate`: `must-revalidate` for a shared cache only (§5.2.2.8).
    public var proxyRevalidate = false
    /// `s-maxage`, in seconds: `max-age` for a shared cache only (§5.2.2.10); `0` if invalid.
    public var sharedMaxAge: Int64?
    /// `private`: for one user's cache only; a shared cache stores none of it (§5.2.2.7).
    public var isPrivate = false
    /// `public`.
    public var isPublic = false
    /// `immutable` (RFC 8246).
    public var immutable = false
    /// `stale-while-revalidate`, in seconds (RFC 5861 §3): how long past its freshness the
    /// response may be served while it is checked in the background.
    public var staleWhileRevalidate: Int64?
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
                case "must-revalidate": mustRevalidate = true
                case "proxy-revalidate": proxyRevalidate = true
                case "s-maxage":
                    let seconds = value.flatMap { Self.seconds($0) } ?? 0
                    sharedMaxAge = min(sharedMaxAge ?? Int64.max, seconds)
                case "private": isPrivate = true
                case "public": isPublic = true
                case "immutable": immutable = true
                case "stale-while-revalidate":
                    if let seconds = value.flatMap({ Self.seconds($0) }) {
                        staleWhileRevalidate = min(staleWhileRevalidate ?? Int64.max, seconds)
                    }
                default: other.append(name)
                }
            }
        }
    }

    /// The directives as a shared cache acts on them: `s-maxage` stands for `max-age` and, like
    /// `proxy-revalidate`, for `must-revalidate`; `private` forbids storing (RFC 9111 §5.2.2).
    public var shared: CacheControl {
        var shared = self
        if let sharedMaxAge { shared.maxAge = sharedMaxAge }
        shared.mustRevalidate = mustRevalidate || proxyRevalidate || sharedMaxAge != nil
        shared.noStore = noStore || isPrivate
        return shared
    }

    /// The directives of a `CDN-Cache-Control` field value (RFC 9213), which a shared cache
    /// takes instead of `Cache-Control`'s: `nil` if the value is no valid Structured Field
    /// dictionary (RFC 8941), which is then ignored whole. A directive of the wrong type
    /// (`max-age="10"`) is ignored alone.
    public static func targeted(_ values: [String]) -> CacheControl? {
        guard !values.isEmpty else { return nil }
        var control = CacheControl(fields: [])
        for value in values {
            guard let members = StructuredDictionary.members(of: value) else { return nil }
            for (name, member) in members {
                switch (name, member) {
                case ("max-age", .integer(let seconds)): control.maxAge = min(max(0, seconds), maximumSeconds)
                case ("max-age", _): break
                case ("no-store", .true): control.noStore = true
                case ("no-cache", .true): control.noCache = true
                case ("must-revalidate", .true): control.mustRevalidate = true
                case ("private", .true): control.isPrivate = true
                case ("public", .true): control.isPublic = true
                default: control.other.append(name)
                }
            }
        }
        // For the cache it targets, `private` means what it means to any shared cache.
        control.noStore = control.noStore || control.isPrivate
        return control
    }

    /// A delta-seconds value: digits only; larger than 2^31 is 2^31.
    static func seconds(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        guard text.utf8.count <= 18, let value = Int64(text) else { return maximumSeconds }
        return min(value, maximumSeconds)
    }

    /// The `name[=value]` directives of one field value, names lowercased, quotes removed;
    /// empty elements (`,,`) skipped.
    ///
    /// Read on the value's UTF-8 bytes: every resource's fields are parsed each time its row is
    /// read, for each first touch of a segment.
    static func directives(in field: String) -> [(String, Substring?)] {
        var result: [(String, Substring?)] = []
        let bytes = Array(field.utf8)
        var index = 0
        /// Moves `index` to the next comma (or the end).
        func skipToComma() {
            while index < bytes.count, bytes[index] != comma { index += 1 }
        }
        while index < bytes.count {
            while index < bytes.count, isBlank(bytes[index]) || bytes[index] == comma { index += 1 }
            guard index < bytes.count else { break }
            let nameStart = index
            while index < bytes.count, bytes[index] != equals, bytes[index] != comma { index += 1 }
            let name = text(bytes[nameStart..<index], trimmed: true, lowercased: true)
            var value: Substring?
            if index < bytes.count, bytes[index] == equals {
                index += 1
                if index < bytes.count, bytes[index] == quote {
                    // A quoted string: up to the closing quote, backslash escapes kept simple.
                    var unquoted: [UInt8] = []
                    var escaped = false
                    index += 1
                    while index < bytes.count {
                        let byte = bytes[index]
                        if escaped {
                            unquoted.append(byte)
                            escaped = false
                        } else if byte == backslash {
                            escaped = true
                        } else if byte == quote {
                            break
                        } else {
                            unquoted.append(byte)
                        }
                        index += 1
                    }
                    value = Substring(String(decoding: unquoted, as: UTF8.self))
                    skipToComma()
                } else {
                    let valueStart = index
                    skipToComma()
                    value = Substring(text(bytes[valueStart..<index], trimmed: true, lowercased: false))
                }
            }
            if !name.isEmpty { result.append((name, value)) }
        }
        return result
    }

    /// `bytes` as text, without trailing spaces and tabs if `trimmed`, ASCII letters in lower
    /// case if `lowercased`.
    private static func text(_ bytes: ArraySlice<UInt8>, trimmed: Bool, lowercased: Bool) -> String {
        var end = bytes.endIndex
        while trimmed, end > bytes.startIndex, isBlank(bytes[end - 1]) { end -= 1 }
        let kept = bytes[bytes.startIndex..<end]
        guard lowercased else { return String(decoding: kept, as: UTF8.self) }
        return String(
            decoding: kept.lazy.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 },
            as: UTF8.self
        )
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
    private static let comma = UInt8(ascii: ",")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")
}
