import Foundation

/// The bytes of one read, delivered in order and progressively: from the cache file where they
/// are present, from the origin (through the shared ``ResourceSession``) where they are not.
///
/// Iterate it once. Cancelling the iterating task, or dropping the iterator, ends the read and
/// stops the origin fetches no other reader needs.
public struct ByteStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    let lease: ReaderLease
    let offset: Int64
    let configuration: CacheConfiguration

    /// What the origin said about the resource, as known when the read started.
    public var contentInfo: ContentInfo { lease.initialInfo }

    /// What the origin has said about the resource so far (length, type, validators).
    public func currentInfo() async -> ContentInfo { await lease.session.info }

    public func makeAsyncIterator() -> Iterator {
        Iterator(lease: lease, position: offset, configuration: configuration)
    }

    /// Pulls the next chunk of the read.
    public struct Iterator: AsyncIteratorProtocol {
        let lease: ReaderLease
        var position: Int64
        let configuration: CacheConfiguration
        private var failures = 0
        private var finished = false

        init(lease: ReaderLease, position: Int64, configuration: CacheConfiguration) {
            self.lease = lease
            self.position = position
            self.configuration = configuration
        }

        /// The next chunk, `nil` at the end of the read.
        ///
        /// - Throws: a ``StreamCacheError`` once the origin failed `maxAttempts` times without
        ///   progress (or at once for errors a retry cannot fix), or `CancellationError`.
        public mutating func next() async throws -> [UInt8]? {
            guard !finished else { return nil }
            while true {
                let span: Span
                do {
                    span = try await lease.session.nextSpan(reader: lease.readerID, at: position)
                } catch let error as StreamCacheError where error.isTransient && failures + 1 < configuration.maxAttempts {
                    failures += 1
                    try await Task.sleep(for: .milliseconds(200 << failures))
                    continue
                } catch {
                    finished = true
                    await lease.release()
                    throw error
                }
                switch span {
                case .end:
                    finished = true
                    await lease.release()
                    return nil
                case .bytes(let range, let file):
                    let count = Int(Swift.min(range.count, Int64(configuration.readChunkSize)))
                    let bytes = try file.read(at: range.lowerBound, count: count)
                    guard bytes.count == count else {
                        finished = true
                        await lease.release()
                        throw StreamCacheError(.storage, "cache file \(file.path) is shorter than its index says")
                    }
                    position += Int64(count)
                    failures = 0
                    return bytes
                }
            }
        }
    }
}

/// A reader's registration with a session; released once, explicitly or when dropped.
final class ReaderLease: Sendable {
    let session: ResourceSession
    let readerID: Int
    let initialInfo: ContentInfo
    private let onRelease: @Sendable () async -> Void
    private let released = Flag()

    init(session: ResourceSession, readerID: Int, initialInfo: ContentInfo, onRelease: @escaping @Sendable () async -> Void) {
        self.session = session
        self.readerID = readerID
        self.initialInfo = initialInfo
        self.onRelease = onRelease
    }

    func release() async {
        guard released.set() else { return }
        await session.removeReader(readerID)
        await onRelease()
    }

    deinit {
        guard released.set() else { return }
        let session = session
        let readerID = readerID
        let onRelease = onRelease
        Task {
            await session.removeReader(readerID)
            await onRelease()
        }
    }
}
