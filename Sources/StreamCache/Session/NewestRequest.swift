import Foundation

/// The URL and origin headers the newest reader of a resource opened it with, read by the
/// session's fetches from any task: a signed URL's newest token, never a stored one.
final class NewestRequest: Sendable {
    private let current: Locked<(url: URL, headers: OriginHeaders)>

    init(url: URL, headers: OriginHeaders) {
        current = Locked((url, headers))
    }

    var url: URL { current.value.url }
    var headers: OriginHeaders { current.value.headers }

    /// Takes `url` and `headers` as the newest; whether the URL differs from the one before.
    func update(url: URL, headers: OriginHeaders) -> Bool {
        current.withLock { current in
            let changed = current.url != url
            current = (url, headers)
            return changed
        }
    }
}
