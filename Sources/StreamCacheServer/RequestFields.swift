import NIOHTTP1
import StreamCache

/// What the proxy reads of a request's fields before it answers, in one pass over them: the
/// admission's fields (``RequestAdmission``) and the cache hits' (``CacheHits``).
struct RequestFields {
    /// The first `Host`, and how many there are.
    private(set) var host: String?
    private(set) var hostCount = 0
    /// The transfer codings, lowercased, in order.
    private(set) var transferCodings: [String] = []
    /// `Origin`, `Sec-Fetch-Site` and `Referer`, each with its values joined by `, ` as one
    /// field (RFC 9110 §5.3).
    private(set) var origin: String?
    private(set) var fetchSite: String?
    private(set) var referer: String?
    /// `Sec-Fetch-Mode` and `Sec-Fetch-Dest`, lowercased (the last of each).
    private(set) var fetchMode: String?
    private(set) var fetchDest: String?
    private(set) var range: String?
    private(set) var ifRange: String?
    /// Whether only the responder answers the request: it has a body or a transfer coding, is
    /// conditional (but for `If-Range`: perhaps a `304`), or has two values of a field read once
    /// here.
    private(set) var isTheResponders = false

    init(_ headers: HTTPHeaders) {
        for (name, value) in headers {
            // By length first: most names are compared with none.
            switch name.utf8.count {
            case 4 where HeaderField.namesMatch(name, "host"):
                hostCount += 1
                if host == nil { host = value } else { isTheResponders = true }
            case 5 where HeaderField.namesMatch(name, "range"):
                Self.keepOne(value, in: &range, twice: &isTheResponders)
            case 6 where HeaderField.namesMatch(name, "origin"):
                Self.join(value, to: &origin, twice: &isTheResponders)
            case 7 where HeaderField.namesMatch(name, "referer"):
                Self.join(value, to: &referer, twice: &isTheResponders)
            case 8 where HeaderField.namesMatch(name, "if-range"):
                Self.keepOne(value, in: &ifRange, twice: &isTheResponders)
            case 14 where HeaderField.namesMatch(name, "sec-fetch-site"):
                Self.join(value, to: &fetchSite, twice: &isTheResponders)
            case 14 where HeaderField.namesMatch(name, "sec-fetch-mode"):
                fetchMode = value.lowercased()
            case 14 where HeaderField.namesMatch(name, "sec-fetch-dest"):
                fetchDest = value.lowercased()
            case 14 where HeaderField.namesMatch(name, "content-length"):
                if value != "0" { isTheResponders = true }
            case 17 where HeaderField.namesMatch(name, "transfer-encoding"):
                transferCodings.append(value.lowercased())
                isTheResponders = true
            case 13 where HeaderField.namesMatch(name, "if-none-match"),
                17 where HeaderField.namesMatch(name, "if-modified-since"):
                isTheResponders = true
            default: break
            }
        }
    }

    /// Whether what the request gets cannot become a document of the listener's web origin: a
    /// browser says so of a fetch, a media, image or font request in `Sec-Fetch-Mode` and
    /// `Sec-Fetch-Dest`; a navigation, a frame, an embed or a worker says otherwise, and a
    /// request without them (a player, an older browser) may be anything (``SandboxFields``).
    var opensNoDocument: Bool {
        guard let mode = fetchMode, mode != "navigate" else { return false }
        guard let dest = fetchDest else { return true }
        return Self.noDocumentDestinations.contains(dest)
    }

    private static let noDocumentDestinations: Set<String> = [
        "empty", "audio", "video", "track", "image", "font", "style", "manifest", "script",
    ]

    /// Keeps a field's value; a second one makes the request the responder's.
    private static func keepOne(_ value: String, in field: inout String?, twice: inout Bool) {
        if field != nil { twice = true }
        field = value
    }

    /// Joins a field's values; a second one makes the request the responder's.
    private static func join(_ value: String, to field: inout String?, twice: inout Bool) {
        if let first = field {
            twice = true
            field = first + ", " + value
        } else {
            field = value
        }
    }
}
