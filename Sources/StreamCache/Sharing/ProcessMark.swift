import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The mark an engine leaves in its cache directory while it runs: a file under `owners/`, named
/// by a token of its own and held with an exclusive `flock`.
///
/// The kernel drops the lock when the process dies, however it dies (`kill -9` too), so another
/// process sharing the directory can tell whether the owner of a claim (``CacheIndex/claim``) is
/// still there without a daemon or a heartbeat: a lock it can take means the owner is gone.
package final class ProcessMark: Sendable {
    /// The token the engine's claims carry.
    package let token: String
    private let path: String
    private let descriptor: Int32

    /// Leaves a new mark in `folder` (created if needed).
    ///
    /// - Throws: ``StreamCacheError/Kind/storage`` if the mark cannot be made.
    package init(folder: String) throws {
        mkdir(folder, 0o700)
        token = UUID().uuidString.lowercased()
        path = folder + "/" + token
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StreamCacheError.storage("cannot create", path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw StreamCacheError.storage("cannot lock", path: path, errno: code)
        }
        descriptor = fd
    }

    deinit {
        unlink(path)
        close(descriptor)
    }

    /// Whether the engine that left mark `token` in `folder` still runs. A mark whose owner is
    /// gone is removed.
    package static func isAlive(_ token: String, in folder: String) -> Bool {
        // Tokens are made here; anything else in a claim is not an engine's.
        guard !token.isEmpty, token.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return false }
        let path = folder + "/" + token
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno != ENOENT }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            unlink(path)
            return false
        }
        return true
    }
}
