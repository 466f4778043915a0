import Foundation
import StreamCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of a package being written: bytes go to `NAME.partial`, and only once they are
/// durable is it renamed to `NAME`. A file under its final name is therefore always whole,
/// whenever the process was stopped or killed (the crash-safe write protocol, `docs/correctness.md`).
package final class PackageFile {
    package let path: String
    private let descriptor: Int32
    private(set) var written: Int64 = 0
    /// Makes a descriptor's bytes durable; 0 when it did.
    private let sync: @Sendable (Int32) -> Int32

    /// Creates `path.partial` anew, readable by the owner only (a package holds keys and URLs
    /// with tokens).
    package init(path: String, sync: @escaping @Sendable (Int32) -> Int32 = FileSync.data(of:)) throws(OfflineError) {
        self.path = path
        self.sync = sync
        descriptor = Self.create(path + ".partial")
        guard descriptor >= 0 else { throw Self.failure("cannot create", path) }
    }

    /// Creates the file `path` anew, whatever is there: a file left by an earlier run is
    /// replaced, and a link planted in its place is removed, never followed (`O_NOFOLLOW`,
    /// `O_EXCL`), so bytes never go where the link points.
    private static func create(_ path: String) -> Int32 {
        unlink(path)
        return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends `bytes`.
    package func write(_ bytes: ArraySlice<UInt8>) throws(OfflineError) {
        let descriptor = descriptor
        guard bytes.withUnsafeBytes({ writeWhole(descriptor, $0) }) == nil else {
            throw Self.failure("cannot write", path)
        }
        written += Int64(bytes.count)
    }

    /// Gives the file its final name: the cache's data file where `sharing` makes that name
    /// its second one, given the path of the bytes written (one file on disk, this copy
    /// removed unsynced); else this copy, made durable first (on a thread outside Swift's
    /// cooperative pool).
    package func commit(sharing: ((String) async -> Bool)? = nil) async throws(OfflineError) {
        if let sharing, await sharing(path + ".partial") {
            discard()
            return
        }
        let (descriptor, sync) = (descriptor, sync)
        let synced: Bool = await withCheckedContinuation { continuation in
            Self.syncQueue.async { continuation.resume(returning: sync(descriptor) == 0) }
        }
        guard synced else { throw Self.failure("cannot sync", path) }
        guard rename(path + ".partial", path) == 0 else { throw Self.failure("cannot rename", path) }
    }

    /// Removes what was written.
    package func discard() {
        unlink(path + ".partial")
    }

    private static let syncQueue = DispatchQueue(label: "StreamCacheOffline.PackageFile.sync", attributes: .concurrent)

    private static func synchronize(_ descriptor: Int32) -> Int32 {
        FileSync.data(of: descriptor)
    }

    /// Writes `data` to `path` through a durable temporary file and a rename.
    package static func writeAtomically(_ data: Data, to path: String) throws {
        let temporary = path + ".partial"
        let descriptor = create(temporary)
        guard descriptor >= 0 else { throw failure("cannot create", path) }
        defer { close(descriptor) }
        let ok = data.withUnsafeBytes { writeWhole(descriptor, $0) } == nil
        guard ok, synchronize(descriptor) == 0 else { throw failure("cannot write", path) }
        guard rename(temporary, path) == 0 else { throw failure("cannot rename", path) }
    }

    package static func failure(_ what: String, _ path: String) -> OfflineError {
        let code = errno
        return OfflineError(.storage, "\(what) \(path): \(String(cString: strerror(code)))")
    }
}
