import Foundation

/// Disk space a recording holds back so that it can always finish its package: a file of its
/// own, allocated up front (`posix_fallocate`) and grown with what finishing will write, then
/// given back just before the package's last playlists and manifest are written. A disk that
/// fills while the recording runs then still gets a package that plays.
package struct SpaceReserve {
    package static let fileName = ".reserve"
    /// The least it holds.
    package static let minimum: Int64 = 1 << 20
    private let path: String
    private(set) var size: Int64 = 0

    package init(folder: String) {
        path = folder + "/" + Self.fileName
    }

    /// Holds at least `bytes` (and ``minimum``); whether the disk had them.
    @discardableResult
    package mutating func hold(atLeast bytes: Int64) -> Bool {
        let wanted = max(bytes, Self.minimum)
        guard wanted > size else { return true }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard posix_fallocate(descriptor, 0, off_t(wanted)) == 0 else { return false }
        size = wanted
        return true
    }

    /// Gives the space back.
    package mutating func release() {
        unlink(path)
        size = 0
    }
}
