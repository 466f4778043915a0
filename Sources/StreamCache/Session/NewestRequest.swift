import Foundation

/// The URL and origin headers the newest reader of a resource opened it with, read by the
/// session's fetches from any task: a signed URL's newest token, never a stored one.
final class NewestRequest: @unchecked Sendable {
    // Guarded by `lock` (NSLock rather than Mutex, which needs iOS 18).
    private let lock = NSLock()
    private var current: (url: URL, headers: OriginHeaders)

    init(url: URL, headers: OriginHeaders) {
        current = (url, headers)
    }

    var url: URL { lock.withLock { current.url } }
    var headers: OriginHeaders { lock.withLock { current.headers } }

    /// Takes `url` and `headers` as the newest; whether the URL differs from the one before.
    func update(url: URL, headers: OriginHeaders) -> Bool {
        lock.withLock {
            let changed = current.url != url
            current = (url, headers)
            return changed
        }
    }
}
