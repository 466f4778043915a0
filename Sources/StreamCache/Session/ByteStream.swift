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

    /// What the origin has said about the resource so far (length, type, validators).
    public func currentInfo() async -> ContentInfo { await lease.session.info }

    public func makeAsyncIterator() -> Iterator {
        Iterator(lease: lease, offset: offset, length: length, configuration: configuration)
    }

    /// Pulls the next chunk of the read.
    public struct Iterator: AsyncIteratorProtocol {
        private let lease: SessionLease
        private var position: Int64
        private let length: Int64?
        private let configuration: CacheConfiguration
        private var reader: ReaderRegistration?
        private var failures = 0
        private var finished = false

        init(lease: SessionLease, offset: Int64, length: Int64?, configuration: CacheConfiguration) {
            self.lease = lease
            self.position = offset
            self.length = length
            self.configuration = configuration
        }

        /// The next chunk, `nil` at the end of the read.
        ///
        /// - Throws: a ``StreamCacheError`` once the origin failed `maxAttempts` times without
        ///   progress (or at once for errors a retry cannot fix), or `CancellationError`.
        public mutating func next() async throws -> [UInt8]? {
            guard !finished else { return nil }
            let session = lease.session
            if reader == nil {
                let id = await session.addReader(offset: position, end: length.map { position + $0 })
                reader = ReaderRegistration(session: session, id: id)
            }
            guard let reader else { return nil }
            while true {
                let span: Span
                do {
                    span = try await session.nextSpan(reader: reader.id, at: position)
                } catch let error as StreamCacheError
                    where error.isTransient && failures + 1 < configuration.maxAttempts
                {
                    failures += 1
                    try await Task.sleep(for: .milliseconds(200 << failures))
                    continue
                } catch {
                    await finish()
                    throw error
                }
                switch span {
                case .end:
                    await finish()
                    return nil
                case .bytes(let range, let file):
                    let count = Int(Swift.min(range.count, Int64(configuration.readChunkSize)))
                    let bytes = try file.read(at: range.lowerBound, count: count)
                    guard bytes.count == count else {
                        await finish()
                        throw StreamCacheError(.storage, "cache file \(file.path) is shorter than its index says")
                    }
                    position += Int64(count)
                    failures = 0
                    return bytes
                }
            }
        }

        private mutating func finish() async {
            finished = true
            await reader?.remove()
            reader = nil
        }
    }
}

/// A reader's registration with its session; removed once, explicitly or when the iterator goes.
final class ReaderRegistration: Sendable {
    let session: ResourceSession
    let id: Int
    private let removed = Flag()

    init(session: ResourceSession, id: Int) {
        self.session = session
        self.id = id
    }

    func remove() async {
        guard removed.set() else { return }
        await session.removeReader(id)
    }

    deinit {
        guard removed.set() else { return }
        Task { [session, id] in await session.removeReader(id) }
    }
}

/// Keeps a session open in its engine while a stream of it exists.
final class SessionLease: Sendable {
    let session: ResourceSession
    private let onRelease: @Sendable () async -> Void

    init(session: ResourceSession, onRelease: @escaping @Sendable () async -> Void) {
        self.session = session
        self.onRelease = onRelease
    }

    deinit {
        Task { [onRelease] in await onRelease() }
    }
}
