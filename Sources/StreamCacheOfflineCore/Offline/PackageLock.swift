import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock a download holds on its package folder (`.lock`, `flock`): one download per asset
/// at a time, and `hls ls` can tell a running download from one that was stopped.
package final class PackageLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock of `folder`, or returns `nil` if another process holds it.
    ///
    /// - Throws: ``OfflineError`` `storage` if the lock file cannot be opened.
    package init?(folder: String) throws(OfflineError) {
        descriptor = open(folder + "/.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PackageFile.failure("cannot open", folder + "/.lock") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
    }

    deinit {
        close(descriptor)
    }

    /// Whether a process holds the lock of `folder` now.
    package static func isHeld(folder: String) -> Bool {
        let descriptor = open(folder + "/.lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(descriptor, LOCK_UN)
        return false
    }
}

extension OfflineLibrary {
    /// The package folder of the recording `manifest` plans, made ready to record into (the
    /// library, its track folders) and locked for this process.
    ///
    /// - Throws: ``OfflineError`` `busy` when another process records the asset, `storage` when
    ///   the folder cannot be made or locked.
    package func lockForRecording(_ manifest: AssetManifest) throws -> PackageLock {
        try prepare()
        try createFolders(for: manifest)
        guard let lock = try PackageLock(folder: folder(manifest.id)) else {
            throw OfflineError(.busy, "asset \(manifest.id) is being recorded by another process")
        }
        return lock
    }
}
