import Foundation

/// What each origin did with a request for a range, by scheme, host and port, as one engine has
/// met them since it started: answered it with the range, or with the whole body.
///
/// A server that ignores `Range` sends every byte from the first to every request, so two
/// requests for a new resource of such an origin have it sent twice. A resource's first
/// answer says whether its origin honours ranges; until it comes, a second reader of a
/// resource waits for it rather than send a request of its own, if its origin is known here to
/// ignore ranges or is not known here at all (``ResourceStateMachine/rangeSupport``): the wait
/// is one answer head, once per origin.
final class OriginRangeSupport: Sendable {
    /// What is known of one origin.
    enum Support: Equatable, Sendable {
        /// No answer to a range came from it yet.
        case unknown
        /// Its last answer to a range was the range.
        case honoured
        /// Its last answer to a range was the whole body.
        case ignored
    }

    /// Origins remembered at most; past it the list starts over (an origin forgotten costs its
    /// next resource's second reader one answer head of waiting).
    private static let capacity = 10_000
    /// Each origin met, `honoured` or `ignored`.
    private let origins = Locked<[String: Support]>([:])

    /// What the origin of `url` did with the last request for a range it answered.
    func support(of url: URL) -> Support {
        let origin = Self.origin(of: url)
        return origins.withLock { $0[origin] ?? .unknown }
    }

    /// Notes what the origin of `url` did with a request for a range: answered it with the whole
    /// body (`ignored`), or with the range (a CDN that answered one range whole on a miss of its
    /// own honours the next).
    func note(_ url: URL, ignored: Bool) {
        let origin = Self.origin(of: url)
        origins.withLock { origins in
            if origins[origin] == nil, origins.count >= Self.capacity { origins.removeAll() }
            origins[origin] = ignored ? .ignored : .honoured
        }
    }

    private static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port.map(String.init) ?? "")"
    }
}
