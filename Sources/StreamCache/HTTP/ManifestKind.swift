import Foundation

/// Which manifest format a resource is, told one way everywhere (the proxy, `download`,
/// `inspect`): its media type first; where the type is generic (none, `text/plain`, an octet
/// stream, plain XML), its first bytes when they are at hand; then its path's extension.
public enum ManifestKind: String, Sendable, CaseIterable {
    /// An HLS playlist (RFC 8216).
    case hls
    /// A DASH media presentation description (ISO/IEC 23009-1).
    case dash

    /// The most bytes a manifest of either kind may have, wherever it is read (the proxy, a
    /// download, `inspect`, `ls`, `rm`): a bound on the document before any parse budget.
    public static let largestDocument = 16 << 20

    /// What a media type says of a resource.
    public enum TypeVerdict: Equatable, Sendable {
        case manifest(ManifestKind)
        /// A type of its own that is no manifest (`video/mp4`, `text/html`).
        case notAManifest
        /// A type that says nothing: the bytes or the path decide.
        case generic
    }

    /// The kind `contentType` names. (No Foundation: the proxy's event loop asks it for each
    /// first touch of a segment.)
    public static func judge(type contentType: String?) -> TypeVerdict {
        switch mediaType(contentType) {
        case "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl":
            .manifest(.hls)
        case "application/dash+xml":
            .manifest(.dash)
        case "", "application/octet-stream", "binary/octet-stream", "text/plain", "application/xml", "text/xml":
            .generic
        default:
            .notAManifest
        }
    }

    /// Whether `contentType` names `kind`: `true` or `false`, or `nil` when it leaves the kind to
    /// the bytes or the path. Plain XML leaves it for an MPD, not for a playlist, which is never
    /// XML.
    public static func judge(type contentType: String?, as kind: ManifestKind) -> Bool? {
        switch judge(type: contentType) {
        case .manifest(let named): return named == kind
        case .notAManifest: return false
        case .generic:
            let type = mediaType(contentType)
            return kind == .dash || (type != "application/xml" && type != "text/xml") ? nil : false
        }
    }

    /// The kind the first bytes of a resource show: `#EXTM3U` opens a playlist, an `MPD` root
    /// element an MPD (after a byte order mark, blanks, an XML declaration or comments).
    public static func judge(firstBytes bytes: some Collection<UInt8>) -> ManifestKind? {
        var text = Substring(decoding: bytes.prefix(4096), as: UTF8.self)
        if text.first == "\u{FEFF}" { text = text.dropFirst() }
        text = text.drop { $0.isWhitespace }
        if text.hasPrefix("#EXTM3U") { return .hls }
        guard text.hasPrefix("<") else { return nil }
        // The root element: the first tag that is neither a declaration nor a comment.
        while let open = text.firstIndex(of: "<") {
            let tag = text[text.index(after: open)...]
            if tag.hasPrefix("?") || tag.hasPrefix("!") {
                guard let close = tag.firstIndex(of: ">") else { return nil }
                text = tag[tag.index(after: close)...]
                continue
            }
            let name = tag.prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }
            return name == "MPD" || name.hasSuffix(":MPD") ? .dash : nil
        }
        return nil
    }

    /// The kind the extension of the last segment of `url`'s path names: `.m3u8` and `.m3u`,
    /// `.mpd`. (Read on the path's bytes: `pathExtension` decodes and splits the whole path, for
    /// each first touch of a segment; Foundation reads the odd ones, percent-encoded or starting
    /// with a dot.)
    public static func judge(path url: URL) -> ManifestKind? {
        var path = Substring(url.path(percentEncoded: true))
        while path.utf8.last == UInt8(ascii: "/") { path = path.dropLast() }
        let name = path.utf8.split(separator: UInt8(ascii: "/")).last ?? path.utf8[...]
        let pathExtension: String
        if name.first == UInt8(ascii: ".") || name.contains(UInt8(ascii: "%")) {
            pathExtension = url.pathExtension.lowercased()
        } else if let dot = name.lastIndex(of: UInt8(ascii: ".")) {
            pathExtension = String(Substring(name[name.index(after: dot)...])).lowercased()
        } else {
            return nil
        }
        switch pathExtension {
        case "m3u8", "m3u": return .hls
        case "mpd": return .dash
        default: return nil
        }
    }

    /// The kind of a resource of `url` with `contentType` and, if at hand, `firstBytes`: the type,
    /// else the bytes, else the path; `nil` for what is no manifest.
    public static func of(url: URL, contentType: String?, firstBytes: [UInt8]?) -> ManifestKind? {
        switch judge(type: contentType) {
        case .manifest(let kind): return kind
        case .notAManifest: return nil
        case .generic:
            if let firstBytes, let kind = judge(firstBytes: firstBytes) { return kind }
            guard let kind = judge(path: url) else { return nil }
            return judge(type: contentType, as: kind) == nil ? kind : nil
        }
    }

    /// The media type of a `Content-Type` value, lower case, without its parameters and the
    /// blanks around it.
    public static func mediaType(_ contentType: String?) -> String {
        var type = (contentType ?? "").prefix { $0 != ";" }
        while let first = type.first, first == " " || first == "\t" { type = type.dropFirst() }
        while let last = type.last, last == " " || last == "\t" { type = type.dropLast() }
        return type.lowercased()
    }
}
