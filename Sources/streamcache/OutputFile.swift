import Foundation
import StreamCache

/// Where `get` and `export` write: stdout, or a file that appears only once it is complete.
///
/// A file is written under a temporary name beside it and renamed at the end, so a failed run
/// leaves no partial file behind.
final class OutputFile {
    private let handle: FileHandle
    private let finalPath: String?
    private let temporaryPath: String?
    private var committed = false

    /// Opens `path` for writing, or stdout for `-`.
    init(path: String) throws {
        if path == "-" {
            handle = .standardOutput
            finalPath = nil
            temporaryPath = nil
            return
        }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(getpid()).partial"
        ).path
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary)
        else {
            throw StreamCacheError(.storage, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        finalPath = path
        temporaryPath = temporary
    }

    deinit {
        if !committed, let temporaryPath { unlink(temporaryPath) }
    }

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) throws {
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? "\(error.localizedDescription)"
            throw StreamCacheError(.storage, "cannot write \(finalPath ?? "standard output"): \(reason)")
        }
    }

    /// Finishes the output: closes the file and gives it its final name.
    func commit() throws {
        guard let finalPath, let temporaryPath else { return }
        try handle.close()
        guard rename(temporaryPath, finalPath) == 0 else {
            throw StreamCacheError(.storage, "cannot rename to \(finalPath): \(String(cString: strerror(errno)))")
        }
        committed = true
    }
}
