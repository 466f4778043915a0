import Foundation

/// The origins that answered a request for a range with the whole body, and none with the
/// range since, by scheme, host and port, as one engine has met them since it started.
///
/// A server that ignores `Range` sends every byte from the first to every request, so two
/// requests for a new resource of such an origin have it sent twice. A resource's first
/// answer says whether its origin honours ranges; until it comes, a second reader of a
/// resource from an origin known here waits for it (``ResourceStateMachine/ignoresRange``)
/// rather than send a request of its own.
final class RangeIgnoringOrigins: @unchecked Sendable {
    // `origins` is guarded by `lock` (NSLock rather than Mutex, which needs iOS 18).
    private let lock = NSLock()
    private var origins: Set<String> = []

    /// Whether the origin of `url` answered a range with the whole body before.
    func contains(_ url: URL) -> Bool {
        // Asked at every open of a resource nothing is known of: no name is built for an empty list.
        lock.withLock { !origins.isEmpty && origins.contains(Self.origin(of: url)) }
    }

    /// Notes what the origin of `url` did with a request for a range: answered it with the whole
    /// body (`ignored`), or with the range, which takes it off the list (a CDN that answered one
    /// range whole on a miss of its own honours the next).
    ///
    /// Told of every answer to a range: with no origin on the list, an answer of the range
    /// costs a look at an empty set.
    func note(_ url: URL, ignored: Bool) {
        lock.withLock {
            if ignored {
                origins.insert(Self.origin(of: url))
            } else if !origins.isEmpty {
                origins.remove(Self.origin(of: url))
            }
        }
    }

    private static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port.map(String.init) ?? "")"
    }
}
