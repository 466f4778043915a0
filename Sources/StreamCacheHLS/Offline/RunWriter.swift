/// Splits the body of one request into the files of its run: each file takes its length of
/// bytes, is made durable and renamed, and the next one begins.
struct RunWriter {
    private let entries: [ItemFetcher.Entry]
    private let folder: String
    private var position = 0
    private var file: PackageFile?

    init(entries: [ItemFetcher.Entry], folder: String) throws {
        self.entries = entries
        self.folder = folder
        file = try open(0)
    }

    /// Every file of the run is done.
    var isFinished: Bool { position == entries.count }

    /// Writes the part of `bytes` that belongs to the current file; returns the rest.
    mutating func write(_ bytes: ArraySlice<UInt8>) throws -> ArraySlice<UInt8> {
        guard let file else { return bytes }
        guard let length = entries[position].item.length else {
            try file.write(bytes)
            return []
        }
        let count = Int(min(Int64(bytes.count), length - file.written))
        try file.write(bytes.prefix(count))
        return bytes.dropFirst(count)
    }

    /// If the current file has all its bytes, commits it and opens the next.
    ///
    /// - Returns: the file committed (its index in the plan and its size), if any.
    mutating func commitIfFull() async throws -> (index: Int, bytes: Int64)? {
        guard let current = file, let length = entries[position].item.length, current.written == length else {
            return nil
        }
        return try await commitAndAdvance(current)
    }

    /// At the end of the body: commits a file whose length only the body's end told, after
    /// checking it against `Content-Length`.
    mutating func commitAtEnd(contentLength: Int64?) async throws -> (index: Int, bytes: Int64)? {
        guard let current = file, entries[position].item.length == nil else { return try await commitIfFull() }
        if let contentLength, contentLength != current.written { throw ShortBody() }
        return try await commitAndAdvance(current)
    }

    private mutating func commitAndAdvance(_ current: PackageFile) async throws -> (index: Int, bytes: Int64) {
        try await current.commit()
        let finished = (entries[position].index, current.written)
        position += 1
        file = isFinished ? nil : try open(position)
        return finished
    }

    private func open(_ position: Int) throws -> PackageFile {
        let item = entries[position].item
        return try PackageFile(path: folder + "/" + item.path, isPrivate: item.kind == .key)
    }
}
