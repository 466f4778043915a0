import Foundation
import StreamCache

/// Where `get` and `export` write: stdout, a special file, or a regular file that appears only
/// once it is complete.
///
/// A regular file (or one that does not exist yet) is written under a temporary name beside it
/// and renamed at the end, so a failed or interrupted run leaves no partial file behind. Anything
/// else (a device such as `/dev/null`, a FIFO, a socket) is written straight, never replaced; a
/// symlink is followed to its target.
final class OutputFile {
    private let handle: FileHandle
    /// The path the user gave, for messages.
    private let shownPath: String
    /// The file the output becomes, when written beside it first.
    private let finalPath: String?
    private let temporaryPath: String?
    private var committed = false

    /// Checks that `path` can be written, before any byte is fetched: stdout for `-`.
    ///
    /// - Throws: ``OutputError`` for a directory, a missing folder or a folder that
    ///   cannot be written, one line naming the path.
    static func check(_ path: String) throws {
        guard path != "-" else { return }
        let target = Self.resolved(path)
        var info = stat()
        if path.hasSuffix("/") || (stat(target, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR) {
            throw OutputError("\(path) is a directory; name the file to write")
        }
        let folderPath = LocalPath.folder(of: target)
        var folderInfo = stat()
        guard stat(folderPath, &folderInfo) == 0, (folderInfo.st_mode & S_IFMT) == S_IFDIR else {
            throw OutputError("cannot write \(path): folder \(folderPath) does not exist")
        }
        if stat(target, &info) != 0 || (info.st_mode & S_IFMT) == S_IFREG {
            guard access(folderPath, W_OK) == 0 else {
                throw OutputError("cannot write \(path): folder \(folderPath) is not writable")
            }
        }
    }

    /// Opens `path` for writing, or stdout for `-`.
    init(path: String) throws {
        shownPath = path
        if path == "-" {
            handle = .standardOutput
            finalPath = nil
            temporaryPath = nil
            return
        }
        try Self.check(path)
        let target = Self.resolved(path)
        var info = stat()
        if stat(target, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            // A device, FIFO or socket: written straight, never replaced by a file of ours.
            let descriptor = open(target, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            finalPath = nil
            temporaryPath = nil
            return
        }
        let temporary = LocalPath.appending(
            ".\(LocalPath.lastComponent(of: target)).\(getpid()).partial",
            to: LocalPath.folder(of: target)
        )
        // A name of this process's own, created anew: a link planted there is never followed.
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        finalPath = target
        temporaryPath = temporary
    }

    /// `path` with a symlink (at its end) followed to the file it names; a dangling link names
    /// the file to create.
    private static func resolved(_ path: String) -> String {
        var target = path
        for _ in 0..<40 {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: target) else { break }
            target =
                destination.hasPrefix("/")
                ? destination
                : LocalPath.appending(destination, to: LocalPath.folder(of: target))
        }
        return target
    }

    deinit {
        discard()
    }

    /// Removes the partial file of an output that will not be finished.
    func discard() {
        if !committed, let temporaryPath { unlink(temporaryPath) }
    }

    /// Whether the output goes to a terminal (binary output there is refused unless asked for).
    var isTerminal: Bool { isatty(handle.fileHandleDescriptor) == 1 }

    /// Whether spans of a cache file still go to the output by the kernel (`sendfile`); cleared
    /// for good the first time the kernel cannot write this output that way.
    private var sendsFileSpans = true

    /// Appends the bytes of `chunk`: from memory as they are, from the cache file by the kernel
    /// where it can (no copy through this process), else read and written.
    ///
    /// - Throws: as ``write(_:)``; ``StreamCacheError`` `storage` if the cache file is short.
    func write(_ chunk: CachedChunk) throws {
        if let bytes = chunk.memory { return try write(bytes) }
        if let file = chunk.file, sendsFileSpans {
            var done = 0
            while done < chunk.count {
                let result = file.send(chunk.count - done, at: chunk.offset + Int64(done), to: descriptor)
                if result > 0 {
                    done += result
                } else if result == 0 {
                    throw StreamCacheError(.storage, "cache file \(file.path) is shorter than its index says")
                } else if errno == EINTR {
                    continue
                } else if done == 0, errno == EINVAL || errno == ENOSYS {
                    sendsFileSpans = false
                    break
                } else {
                    try failed(errno)
                }
            }
            if sendsFileSpans {
                // Sent by the kernel from the file: nothing may have changed it meanwhile.
                guard file.isTrustedNow() else {
                    throw StreamCacheError(
                        .storage,
                        "cache file \(file.path) changed behind the cache's back during a read"
                    )
                }
                return
            }
        }
        try write(chunk.read())
    }

    /// Appends `bytes`.
    ///
    /// - Throws: ``OutputClosed`` when the reader of a pipe went away (`get … | head`), else
    ///   ``OutputError``.
    func write(_ bytes: some ContiguousBytes) throws {
        if let code = bytes.withUnsafeBytes({ writeWhole(descriptor, $0) }) { try failed(code) }
    }

    private var descriptor: Int32 { handle.fileHandleDescriptor }

    /// Throws what a failed write to the output means.
    private func failed(_ code: Int32) throws -> Never {
        if code == EPIPE { throw OutputClosed() }
        throw OutputError(
            "cannot write \(shownPath == "-" ? "standard output" : shownPath): \(String(cString: strerror(code)))"
        )
    }

    /// Finishes the output: closes the file and gives it its final name.
    func commit() throws {
        guard let finalPath, let temporaryPath else { return }
        try handle.close()
        guard rename(temporaryPath, finalPath) == 0 else {
            throw OutputError("cannot rename to \(finalPath): \(String(cString: strerror(errno)))")
        }
        committed = true
    }
}

/// The reader of the output pipe went away: not an error (`get … | head -c 100` exits 0).
struct OutputClosed: Error {}

/// The output cannot be written (a folder, a full disk): one line naming the path; exit status
/// 23, as curl's "write error".
struct OutputError: Error, CustomStringConvertible {
    let message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

extension FileHandle {
    fileprivate var fileHandleDescriptor: Int32 { fileDescriptor }
}
