import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One resource's sparse data file: bytes live at their own offset, holes are never read.
///
/// Reads and writes are positional (`pread`/`pwrite`), so any number of tasks may use one
/// `CacheFile` at once. While open it holds a shared `flock`, which tells eviction in this or any
/// other process that the resource is in use.
package final class CacheFile: Sendable {
    /// The path of the file.
    package let path: String
    private let descriptor: Int32
    /// The last status read, and when (see ``status(readWithin:now:)``).
    private let lastStatus = LastStatus()
    /// The file as this object last left it (see ``isTrusted(_:)``).
    private let trusted = TrustedIdentity()

    /// Opens (creating if needed) the file at `path` and takes a shared lock on it.
    ///
    /// Eviction holds an exclusive lock for a moment while it deletes a file; opening waits for
    /// it without blocking a thread.
    /// - Throws: ``StreamCacheError/Kind/storage`` if the file cannot be opened.
    package static func openLocked(path: String) async throws -> CacheFile {
        while true {
            if let file = try CacheFile(path: path) { return file }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Opens the regular file at `path` if it exists and takes a shared lock at once: `nil` if
    /// it does not exist, is not a regular file, or eviction holds its exclusive lock. Never waits
    /// and never creates, so an event loop may call it.
    ///
    /// - Returns: the file, and its status once locked (no writer changes it while it is held).
    package static func openExistingLocked(path: String) -> (file: CacheFile, status: Status)? {
        // Non-blocking: a pipe planted in `data/` would otherwise hold the caller (an event loop)
        // until something writes to it; it is refused below like any file that is not regular.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard flock(fd, LOCK_SH | LOCK_NB) == 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        let file = CacheFile(path: path, descriptor: fd)
        let status = Status(info)
        file.lastStatus.set(status, at: .now)
        file.trusted.set(status.identity)
        return (file, status)
    }

    /// Cuts the regular file at `path` to nothing, never through a symbolic link and never a
    /// file an offline package shares: its blocks come back even while another process holds
    /// it open.
    package static func empty(at path: String) {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        SharedFiles.cut(fd, to: 0)
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Opens the file and takes a shared lock, or returns `nil` if someone holds an exclusive one.
    private init?(path: String) throws {
        let fd = try Self.openRegular(path)
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw StreamCacheError.storage("cannot lock", path: path, errno: code)
        }
        self.path = path
        self.descriptor = fd
        // Trusted as opened: a session checks what changed since the index last saw it (its
        // blocks against their sums) before it serves a byte.
        trusted.set(status()?.identity)
    }

    deinit {
        close(descriptor)
    }

    /// Opens (creating) the regular file at `path`, never through a link: something else
    /// planted in `data/` (a link to another file, a pipe) is removed and replaced by a new
    /// file, so the origin's bytes go only to the cache's own.
    private static func openRegular(_ path: String) throws -> Int32 {
        for attempt in 0..<2 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            var status = stat()
            if fd >= 0, fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG { return fd }
            let code = errno
            if fd >= 0 { close(fd) }
            guard attempt == 0, fd >= 0 || code == ELOOP, unlink(path) == 0 || errno == ENOENT else {
                throw StreamCacheError.storage(
                    "cannot open a regular file at",
                    path: path,
                    errno: fd >= 0 ? EINVAL : code
                )
            }
        }
        throw StreamCacheError.storage("cannot open a regular file at", path: path, errno: EINVAL)
    }

    /// Turns the shared lock into an exclusive one if no other process has the file open.
    ///
    /// - Returns: whether the lock is now exclusive.
    package func lockExclusively() -> Bool {
        flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// The size of the file in bytes (the end of the highest byte ever written).
    package func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw StreamCacheError.storage("cannot stat", path: path, errno: errno)
        }
        return Int64(info.st_size)
    }

    /// The file's size and modification time now.
    package func state() -> DataFileState? { status()?.state }

    /// What one `fstat` says of the open file.
    package struct Status {
        /// Whether the file was deleted from the directory while open (another process replaced
        /// the resource's version, evicted or removed it): its bytes are no longer the cache's.
        package let isUnlinked: Bool
        /// Its size and modification time.
        package let state: DataFileState
        /// Its size and modification time as one value: any write changes it, whoever writes.
        /// (Not the change time: unlinking the file, which a new version or `rm` does while a
        /// read goes on, changes that without touching a byte.)
        package let identity: Identity

        package var size: Int64 { state.size }

        /// Whether all of `range` can be read: the file is still the cache's and not shorter
        /// than the range's end (it was cut behind the cache's back).
        package func holds(_ range: ByteRange) -> Bool { !isUnlinked && size >= range.upperBound }

        /// What `fstat` said.
        init(_ info: stat) {
            isUnlinked = info.st_nlink == 0
            #if canImport(Darwin)
            let modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
            #else
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            #endif
            state = DataFileState(size: Int64(info.st_size), modified: modified)
            identity = Identity(size: Int64(info.st_size), modified: modified)
        }
    }

    /// A data file's contents as `fstat` tells them apart: equal identities, the same bytes.
    package struct Identity: Hashable, Sendable {
        package let size: Int64
        package let modified: Int64
    }

    /// Whether the file is as this object last left it: as opened, then changed by its own
    /// writes only. Every byte sent from a data file is checked so, or read and checked against
    /// its block's checksum: bytes written over it by anything else (another program, another
    /// process's fetch) are never served unchecked.
    package func isTrusted(_ status: Status) -> Bool {
        trusted.get() == status.identity
    }

    /// Whether the file is trusted as `fstat` says it is now (after bytes were read or sent from
    /// it: nothing changed them before they were). It never waits, so an event loop or a session
    /// may ask: while a write of this object is under way (its own bytes change the file's status
    /// until it ends), the file is as it was judged when the write began, which is as far as the
    /// write itself can tell.
    package func isTrustedNow() -> Bool {
        if let status = status(), isTrusted(status) { return true }
        return trusted.ifNotWriting { status().map(isTrusted) ?? false } ?? (trusted.get() != nil)
    }

    /// Says the file's bytes are checked as they are now (its blocks read against their sums).
    package func trust(_ status: Status) {
        trusted.set(status.identity)
    }

    /// The identity the file is trusted at; `nil` once something else changed it. A write of
    /// the file holds `writing` from the status before to the status after it; `value` is read
    /// and set under a lock of its own, held for a moment only.
    private final class TrustedIdentity: Sendable {
        private let value = Locked<Identity?>(nil)
        /// Held for the whole of a write: its region, not a value.
        private let writing = Locked(())

        func get() -> Identity? { value.value }
        func set(_ identity: Identity?) { value.withLock { $0 = identity } }

        /// Runs `write`, which returns the identity it leaves the file at: trusted after it if the
        /// file was as this object left it just before (`status` equal to the trusted identity),
        /// and at once no longer trusted if not.
        func write(judging status: () -> Identity?, _ write: () throws -> Identity?) rethrows {
            try writing.withLock { _ in
                let before = status()
                let trustedBefore = before != nil && before == get()
                if !trustedBefore { set(nil) }
                let after = try write()
                if trustedBefore { set(after) }
            }
        }

        /// Runs `body` if no write is under way now; `nil` at once if one is.
        func ifNotWriting<T>(_ body: () throws -> T) rethrows -> T? {
            try writing.withLockIfAvailable { _ in try body() }
        }
    }

    /// The file's status now; `nil` if `fstat` fails.
    package func status() -> Status? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        let status = Status(info)
        lastStatus.set(status, at: .now)
        return status
    }

    /// The file's status as read at most `age` before `now`, read again if it is older: a server's
    /// many cache hits on one file in a moment share one `fstat`.
    package func status(readWithin age: Duration, now: ContinuousClock.Instant = .now) -> Status? {
        if let (status, readAt) = lastStatus.get(), now - readAt <= age { return status }
        return status()
    }

    /// A status and when it was read, for any thread.
    private final class LastStatus: Sendable {
        private let value = Locked<(Status, ContinuousClock.Instant)?>(nil)

        func get() -> (Status, ContinuousClock.Instant)? { value.value }
        func set(_ status: Status, at instant: ContinuousClock.Instant) { value.withLock { $0 = (status, instant) } }
    }

    /// See ``Status/isUnlinked``.
    package var isUnlinked: Bool { status()?.isUnlinked ?? false }

    /// See ``Status/holds(_:)``.
    package func holds(_ range: ByteRange) -> Bool { status()?.holds(range) ?? false }

    /// Writes all of `bytes` at `offset`.
    ///
    /// The file stays trusted (``isTrusted(_:)``) if it was as this object left it just before.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var failure: StreamCacheError?
        trusted.write(judging: { status()?.identity }) {
            var done = 0
            while done < bytes.count {
                let position = off_t(offset) + off_t(done)
                let result = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, position)
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = StreamCacheError.storage("cannot write", path: path, errno: errno)
                    break
                }
                done += result
            }
            return status()?.identity
        }
        if let failure { throw failure }
    }

    /// Fills `buffer` with the bytes at `offset`.
    ///
    /// - Returns: how many bytes were read; fewer than `buffer.count` only at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let result = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if result < 0 {
                if errno == EINTR { continue }
                throw StreamCacheError.storage("cannot read", path: path, errno: errno)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    /// Has the kernel write up to `count` bytes at `offset` to `output` (`sendfile`), without a
    /// pass through memory of ours. Linux only: elsewhere `sendfile` takes only sockets.
    ///
    /// - Returns: the bytes written; 0 at the end of the file; -1 with `errno` set (`EINVAL` or
    ///   `ENOSYS` for an output the kernel cannot write this way).
    package func send(_ count: Int, at offset: Int64, to output: Int32) -> Int {
        #if os(Linux)
        var position = off_t(offset)
        return sendfile(output, descriptor, &position, count)
        #else
        errno = ENOSYS
        return -1
        #endif
    }

    /// A new descriptor of the open file, for a sender that hands it to the kernel (`sendfile`)
    /// and closes it itself. It shares the open file, so the shared lock stays taken until it is
    /// closed too.
    ///
    /// - Throws: ``StreamCacheError/Kind/storage`` if no descriptor is left.
    package func duplicateDescriptor() throws -> Int32 {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw StreamCacheError.storage("cannot duplicate the descriptor of", path: path, errno: errno)
        }
        return copy
    }

    /// Makes every byte written so far durable (``FileSync``).
    private func synchronize() throws {
        let result = FileSync.data(of: descriptor)
        guard result == 0 else { throw StreamCacheError.storage("cannot sync", path: path, errno: errno) }
    }

    /// Makes every byte written so far durable, on a thread outside Swift's cooperative pool
    /// (``BlockingWork/disk``).
    package func synchronizeOffPool() async throws {
        try await BlockingWork.disk.run { try self.synchronize() }
    }

    /// Writes each of `pieces` of `chunk` where it says, one after another, and adds them to
    /// `sums` as written, on a thread outside Swift's cooperative pool (``BlockingWork/disk``): a
    /// disk that holds a write for seconds holds that thread only.
    ///
    /// - Returns: `sums` with the pieces added.
    func writeOffPool(
        _ chunk: [UInt8],
        _ pieces: [ResourceStateMachine.Piece],
        summing sums: FetchSums?
    ) async throws -> FetchSums? {
        try await BlockingWork.disk.run {
            var sums = sums
            for piece in pieces {
                try chunk[piece.skip..<piece.skip + piece.count].withUnsafeBytes { bytes in
                    try self.write(bytes, at: piece.offset)
                    sums?.add(bytes, at: piece.offset)
                }
            }
            return sums
        }
    }

    /// Runs `body` while holding an exclusive lock on the data file at `path`, if nobody has it open.
    /// `body` gets the locked descriptor, or `nil` if the file does not exist.
    static func withExclusiveLock(path: String, _ body: (Int32?) async throws -> Void) async throws -> Bool {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            guard errno == ENOENT else { throw StreamCacheError.storage("cannot open", path: path, errno: errno) }
            try await body(nil)
            return true
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        try await body(fd)
        return true
    }
}
