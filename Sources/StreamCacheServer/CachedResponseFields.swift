import Foundation
import StreamCache

/// What every answer from the cache says besides the bytes (RFC 9111 §4): the origin's stored
/// end-to-end fields and the response's `Age`; and whether a player's own conditional request
/// is answered `304 Not Modified` (RFC 9110 §13.1).
enum CachedResponseFields {
    /// Fields an answer sets itself, never replayed from the store.
    private static let setByTheAnswer: Set<String> = [
        "accept-ranges", "content-type", "etag", "last-modified", "content-length", "content-range", "date",
        "connection", "keep-alive", "transfer-encoding", "vary", "age", "streamcache-variant",
    ]

    /// The stored fields of `info` to send with an answer (`Age` aside: see ``age(of:at:)``),
    /// and the cookies of its response unless the cache is `shared` (``StoredFields/cookies``).
    static func replayed(_ info: ContentInfo, shared: Bool) -> [HeaderField] {
        let kept = info.stored.fields.filter {
            let name = $0.name.lowercased()
            return !setByTheAnswer.contains(name) && !SandboxFields.replaced.contains(name)
        }
        var fields = kept
        if let vary = info.stored.values("Vary").first { fields.append(HeaderField("Vary", vary)) }
        if !shared { fields += info.stored.cookies }
        return fields
    }

    /// The `Age` of an answer about `info` at `now`, in whole seconds; `nil` for a response
    /// never stored (a file of an offline package, a rewritten playlist).
    static func age(of info: ContentInfo, at now: Date) -> Int64? {
        guard info.stored.receivedAt > 0 else { return nil }
        return Int64(max(0, info.stored.age(at: now.timeIntervalSince1970)).rounded(.down))
    }

    /// Whether a player's `If-None-Match` (or, without it, `If-Modified-Since`) says it holds the
    /// cached version already (RFC 9110 §13.1.2, §13.1.3: weak comparison for `If-None-Match`).
    static func playerHasIt(ifNoneMatch: String?, ifModifiedSince: String?, info: ContentInfo) -> Bool {
        if let ifNoneMatch {
            guard let etag = info.etag else { return false }
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return tags.contains("*") || tags.contains { weak($0) == weak(etag) }
        }
        guard let ifModifiedSince, let since = HTTPDate.parse(ifModifiedSince),
            let lastModified = info.lastModified.flatMap(HTTPDate.parse)
        else { return false }
        return lastModified <= since
    }

    /// An entity tag without its weakness indicator.
    private static func weak(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}
