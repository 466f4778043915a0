import Foundation

/// The bytes of one read, delivered in order and progressively: from the cache file where they
/// are present, from the origin (through the shared ``ResourceSession``) where they are not.
///
/// Iterate it once. The read starts with the first `next()`; cancelling the iterating task, or
/// leaving the loop (dropping the iterator), ends it and stops the origin fetches no other reader
/// needs.
public struct ByteStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    let lease: SessionLease
    let offset: Int64
    let length: Int64?
    let configuration: CacheConfiguration
    /// Whether the version is checked with the origin before a cached byte is read.
    var revalidates = false
    /// Whether the read fetches its part on a connection of its own unless the bytes are about to
    /// arrive (``CachedResource/readAhead(from:length:)``).
    var readsAhead = false
    /// Whether bytes a fetch has just written come as spans of the cache file rather than from
    /// memory: for a sender that hands file spans to the kernel (`sendfile`), which then skips
    /// a copy into a buffer of its own.
    package var prefersFileSpans = false
    /// The head of the answer relayed to this read, if the cache may not keep the resource's: it,
    /// not the session's last, describes the bytes the read gets.
    private let relayedInfo = Locked<ContentInfo?>(nil)

    /// What the origin has said about the resource so far (length, type, validators): for a
    /// response the cache may not keep, what the answer this read gets said.
    public func currentInfo() async -> ContentInfo {
        if let relayed = relayedInfo.value { return relayed }
        return await lease.session.info
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(
            lease: lease,
            offset: offset,
            length: length,
            configuration: configuration,
            revalidates: revalidates,
            readsAhead: readsAhead,
            prefersFileSpans: prefersFileSpans,
            relayedInfo: relayedInfo
        )
    }

    /// Pulls the next chunk of the read.
    public struct Iterator: AsyncIteratorProtocol {
        private let lease: SessionLease
        private var position: Int64
        /// Where the read ends (exclusive), `nil`: at the end of the resource.
        private let end: Int64?
        private let configuration: CacheConfiguration
        private let revalidates: Bool
        private let readsAhead: Bool
        private let prefersFileSpans: Bool
        private var reader: ReaderRegistration?
        /// The rest of the read straight from the origin, once the disk was too full to cache it.
        private var uncached: PassThrough.AsyncIterator?
        private var failures = 0
        /// Whether bytes were delivered since the last transient failure.
        private var progressed = false
        private var finished = false
        private let relayedInfo: Locked<ContentInfo?>

        init(
            lease: SessionLease,
            offset: Int64,
            length: Int64?,
            configuration: CacheConfiguration,
            revalidates: Bool,
            readsAhead: Bool,
            prefersFileSpans: Bool,
            relayedInfo: Locked<ContentInfo?>
        ) {
            self.relayedInfo = relayedInfo
            self.lease = lease
            self.revalidates = revalidates
            self.readsAhead = readsAhead
            self.prefersFileSpans = prefersFileSpans
            self.position = offset
            self.end = length.map { offset + $0 }
            self.configuration = configuration
        }

        /// The next chunk, `nil` at the end of the read.
        ///
        /// - Throws: a ``StreamCacheError`` once the origin failed `maxAttempts` times without
        ///   progress (or at once for errors a retry cannot fix), or `CancellationError`.
        public mutating func next() async throws -> [UInt8]? {
            while let chunk = try await nextChunk() {
                if chunk.count > 0 { return try chunk.read() }
            }
            return nil
        }

        /// Where the next chunk of the read lies in the cache file, `nil` at the end of the read.
        /// The last chunk may be empty: it carries the ``CachedChunk/originBytes`` counted after
        /// the read's last byte.
        ///
        /// For callers that read the bytes into buffers of their own (``CachedChunk/read(into:)``);
        /// the position moves past the chunk, whether it is read or not.
        ///
        /// - Throws: as ``next()``.
        public mutating func nextChunk() async throws -> CachedChunk? {
            guard !finished else { return nil }
            if uncached != nil { return try await nextUncachedChunk() }
            let session = lease.session
            if reader == nil {
                let id = await session.addReader(
                    offset: position,
                    end: end,
                    revalidates: revalidates,
                    readsAhead: readsAhead
                )
                reader = ReaderRegistration(session: session, id: id, chores: lease.chores)
            }
            guard let reader else { return nil }
            while true {
                let span: ReadStep
                do {
                    span = try await session.nextStep(reader: reader.id, at: position, preferringFile: prefersFileSpans)
                } catch let error as StreamCacheError where error.kind == .diskFull {
                    // Ask the engine to make room for the next reads; this one goes on uncached.
                    lease.chores.post(.diskFull)
                    let known = await session.info
                    await leaveSession()
                    uncached = session.uncached(from: position, end: end, known: known).makeAsyncIterator()
                    return try await nextUncachedChunk()
                } catch let error as StreamCacheError
                    where error.isTransient && failures + 1 < configuration.maxAttempts
                    && (error.kind != .originStatus || configuration.retriesErrorStatuses)
                {
                    // A fetch that failed after bringing bytes made progress: go on at once.
                    if progressed {
                        progressed = false
                        continue
                    }
                    failures += 1
                    try await Task.sleep(for: .milliseconds(200 << failures))
                    continue
                } catch {
                    await finish()
                    throw error
                }
                switch span {
                case .passThrough(let against):
                    let known: ContentInfo
                    if let against { known = against } else { known = await session.info }
                    // The answer its fetch got, if the cache may not keep it; else one of its own.
                    let relayed = await session.relay(for: reader.id, from: position, end: end)
                    if let relayed { relayedInfo.withLock { $0 = relayed.info } }
                    await leaveSession()
                    let source = relayed?.bytes ?? session.uncached(from: position, end: end, known: known)
                    uncached = source.makeAsyncIterator()
                    return try await nextUncachedChunk()
                case .end(let originBytes):
                    await finish()
                    guard originBytes > 0 else { return nil }
                    return CachedChunk(bytes: [], offset: position, fromOrigin: true, originBytes: originBytes)
                case .bytes(let range, let file, let fromOrigin, let originBytes):
                    let count = Int(Swift.min(range.count, Int64(configuration.readChunkSize)))
                    return delivered(
                        CachedChunk(
                            file: file,
                            offset: range.lowerBound,
                            count: count,
                            fromOrigin: fromOrigin,
                            originBytes: originBytes
                        )
                    )
                case .memory(let bytes, let offset, let fromOrigin, let originBytes):
                    return delivered(
                        CachedChunk(
                            bytes: bytes.prefix(configuration.readChunkSize),
                            offset: offset,
                            fromOrigin: fromOrigin,
                            originBytes: originBytes
                        )
                    )
                }
            }
        }

        /// Moves the read past `chunk`.
        private mutating func delivered(_ chunk: CachedChunk) -> CachedChunk {
            position += Int64(chunk.count)
            failures = 0
            progressed = true
            return chunk
        }

        /// The next bytes of a read that goes on uncached.
        private mutating func nextUncachedChunk() async throws -> CachedChunk? {
            guard let bytes = try await uncached?.next() else {
                finished = true
                uncached = nil
                return nil
            }
            let chunk = CachedChunk(
                bytes: bytes[...],
                offset: position,
                fromOrigin: true,
                originBytes: Int64(bytes.count)
            )
            position += Int64(bytes.count)
            return chunk
        }

        private mutating func finish() async {
            finished = true
            await leaveSession()
        }

        /// Removes the reader from its session (the read ends, or goes on uncached).
        private mutating func leaveSession() async {
            await reader?.remove()
            reader = nil
        }
    }
}

/// A run of bytes of a read, ready to be read: in the cache file, or in memory where a fetch has
/// just written them (or, when the disk is full, straight from the origin).
public struct CachedChunk: Sendable {
    private enum Storage: Sendable {
        /// In the cache file, at ``CachedChunk/offset``.
        case file(CacheFile)
        /// In memory: as a fetch wrote them to the cache file, or straight from the origin when
        /// the disk is full.
        case memory(ArraySlice<UInt8>)
    }

    private let storage: Storage
    /// Where the bytes start in the resource (and the file).
    public let offset: Int64
    /// How many bytes.
    public let count: Int
    /// Whether the read waited for these bytes to arrive from the origin (else they were cached).
    public let fromOrigin: Bool
    /// How many body bytes the origin sent for this read since its previous chunk, kept or not
    /// (an origin that ignores `Range` sends the bytes before the ones asked for too).
    public let originBytes: Int64

    init(file: CacheFile, offset: Int64, count: Int, fromOrigin: Bool, originBytes: Int64) {
        storage = .file(file)
        self.offset = offset
        self.count = count
        self.fromOrigin = fromOrigin
        self.originBytes = originBytes
    }

    init(bytes: ArraySlice<UInt8>, offset: Int64, fromOrigin: Bool, originBytes: Int64) {
        storage = .memory(bytes)
        self.offset = offset
        self.count = bytes.count
        self.fromOrigin = fromOrigin
        self.originBytes = originBytes
    }

    /// The cache file the bytes are in, at ``offset``; `nil` when they are in memory. A sender
    /// may hand the span to the kernel (`sendfile`) rather than read it.
    package var file: CacheFile? {
        if case .file(let file) = storage { return file }
        return nil
    }

    /// The bytes where they are in memory (no copy is made); `nil` when they are in the cache
    /// file (``file``).
    package var memory: ArraySlice<UInt8>? {
        if case .memory(let bytes) = storage { return bytes }
        return nil
    }

    /// The bytes, as an array.
    ///
    /// - Throws: ``StreamCacheError`` `storage` if the file cannot be read or is short.
    public func read() throws -> [UInt8] {
        if case .memory(let bytes) = storage { return Array(bytes) }
        return try [UInt8](unsafeUninitializedCapacity: count) { raw, initialized in
            initialized = 0
            try read(into: UnsafeMutableRawBufferPointer(raw))
            initialized = count
        }
    }

    /// Fills `buffer` (at least ``count`` bytes) with the bytes.
    ///
    /// - Throws: ``StreamCacheError`` `storage` if the file cannot be read or is short.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws {
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
        switch storage {
        case .memory(let bytes):
            bytes.withUnsafeBytes { target.copyMemory(from: $0) }
        case .file(let file):
            guard try file.read(into: target, at: offset) == count else {
                throw StreamCacheError(.storage, "cache file \(file.path) is shorter than its index says")
            }
            guard file.isTrustedNow() else {
                throw StreamCacheError(
                    .storage,
                    "cache file \(file.path) changed behind the cache's back during a read"
                )
            }
        }
    }
}

/// A reader's registration with its session; removed once, explicitly or when the iterator goes.
final class ReaderRegistration: Sendable {
    let session: ResourceSession
    let id: Int
    private let chores: EngineChores
    private let removed = Flag()

    init(session: ResourceSession, id: Int, chores: EngineChores) {
        self.session = session
        self.id = id
        self.chores = chores
    }

    func remove() async {
        guard removed.set() else { return }
        await session.removeReader(id)
    }

    deinit {
        guard removed.set() else { return }
        chores.post(.readerAbandoned(session, reader: id))
    }
}

/// Keeps a session open in its engine while a handle or stream of it exists.
final class SessionLease: Sendable {
    let session: ResourceSession
    let key: String
    let chores: EngineChores

    init(session: ResourceSession, key: String, chores: EngineChores) {
        self.session = session
        self.key = key
        self.chores = chores
    }

    deinit {
        chores.post(.leaseReleased(key: key))
    }
}
