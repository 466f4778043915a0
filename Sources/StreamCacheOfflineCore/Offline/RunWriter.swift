import StreamCache

/// Splits the body of one request into the files of its run: each file takes its length of
/// bytes (decrypted first when it has a ``Decryption``), is made durable and renamed, and the
/// next one begins.
package struct RunWriter {
    /// Makes the file at a path (the second) the cache's data file of an item, given the path of
    /// the bytes written for it (the first): `true` when it did (``PackageFile/commit(sharing:)``).
    package typealias Sharing = @Sendable (PackageItem, String, String) async -> Bool

    private let entries: [ItemFetcher.Entry]
    private let folder: String
    /// AES-128 keys by origin URL, for the files that are decrypted.
    private let keys: [String: [UInt8]]
    /// Shares the files stored as the origin sent them (whole, not decrypted) with the cache.
    private let sharing: Sharing?
    private var position = 0
    private var file: PackageFile?
    private var decryptor: SegmentDecryptor?
    /// Bytes of the body taken by the current file (before decryption).
    private var consumed: Int64 = 0

    package init(
        entries: [ItemFetcher.Entry],
        folder: String,
        keys: [String: [UInt8]] = [:],
        sharing: Sharing? = nil
    ) throws {
        self.entries = entries
        self.folder = folder
        self.keys = keys
        self.sharing = sharing
        try open(0)
    }

    /// Every file of the run is done.
    package var isFinished: Bool { position == entries.count }

    /// Writes the part of `bytes` that belongs to the current file; returns the rest.
    package mutating func write(_ bytes: ArraySlice<UInt8>) throws -> ArraySlice<UInt8> {
        guard let file else { return bytes }
        let count = entries[position].item.length.map { Int(min(Int64(bytes.count), $0 - consumed)) } ?? bytes.count
        let mine = bytes.prefix(count)
        consumed += Int64(count)
        do {
            if let clear = try decryptor?.decrypt(mine) { try file.write(clear[...]) } else { try file.write(mine) }
        } catch is DecryptionFailure {
            throw failure()
        }
        return bytes.dropFirst(count)
    }

    /// If the current file has all its bytes, commits it and opens the next.
    ///
    /// - Returns: the file committed (its index in the plan and its size), if any.
    package mutating func commitIfFull() async throws -> (index: Int, bytes: Int64)? {
        guard let current = file, let length = entries[position].item.length, consumed == length else {
            return nil
        }
        return try await commitAndAdvance(current)
    }

    /// At the end of the body: commits a file whose length only the body's end told, after
    /// checking it against `Content-Length`.
    package mutating func commitAtEnd(contentLength: Int64?) async throws -> (index: Int, bytes: Int64)? {
        guard let current = file, entries[position].item.length == nil else { return try await commitIfFull() }
        if let contentLength, contentLength != consumed { throw ShortBody() }
        return try await commitAndAdvance(current)
    }

    private mutating func commitAndAdvance(_ current: PackageFile) async throws -> (index: Int, bytes: Int64) {
        do {
            if let last = try decryptor?.finish() { try current.write(last[...]) }
        } catch is DecryptionFailure {
            throw failure()
        }
        let item = entries[position].item
        if let sharing, item.offset == nil, item.decryption == nil {
            try await current.commit { await sharing(item, $0, current.path) }
        } else {
            try await current.commit()
        }
        let finished = (entries[position].index, current.written)
        position += 1
        if isFinished {
            file = nil
        } else {
            try open(position)
        }
        return finished
    }

    private mutating func open(_ position: Int) throws {
        let item = entries[position].item
        file = try PackageFile(path: folder + "/" + item.path)
        consumed = 0
        decryptor = item.decryption.map { decryption in
            SegmentDecryptor(key: keys[decryption.key] ?? [], iv: decryption.ivBytes)
        }
    }

    /// The current file does not decrypt with its key.
    private func failure() -> OfflineError {
        let item = entries[position].item
        return OfflineError(
            .segment,
            "cannot decrypt \(Credentials.redacted(item.url)) (\(item.path)) with its AES-128 key: the bytes are not what the key encrypts"
        )
    }
}
