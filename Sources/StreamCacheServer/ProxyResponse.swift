import HTTPTypes
import NIOCore
import StreamCache

/// An answer of the responder, as the connection (``ProxyConnectionHandler``) writes it: a status,
/// fields and a body that is nothing, one buffer, or bytes written as they come.
struct ProxyResponse: Sendable {
    enum Body: Sendable {
        case empty
        case bytes(ByteBuffer)
        /// Written piece by piece by `write`; without a `length` the body is sent chunked.
        case stream(length: Int?, write: @Sendable (ResponseBodyWriter) async throws -> Void)

        /// The length the body will have, when it is known before it is written.
        var length: Int? {
            switch self {
            case .empty: 0
            case .bytes(let buffer): buffer.readableBytes
            case .stream(let length, _): length
            }
        }
    }

    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Body

    /// A response whose `Content-Length` is the body's, unless `headers` give one (the length of
    /// the bytes a `HEAD` would get) or the status has no body (`204`, `304`).
    init(status: HTTPResponse.Status, headers: HTTPFields = [:], body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
        if status != .noContent, status != .notModified, !headers.contains(.contentLength),
            let length = body.length
        {
            self.headers[.contentLength] = String(length)
        }
    }
}

/// Where a streamed body (``ProxyResponse/Body/stream(length:write:)``) writes its bytes: to the
/// client's connection, waiting while the connection cannot take more, so a slow player slows
/// the read behind it instead of filling memory.
struct ResponseBodyWriter: Sendable {
    /// Hands a piece of the body to the connection, and waits while it cannot take more.
    let send: @Sendable (ByteBuffer) async throws -> Void
    /// Hands a span of a cache file to the connection, which sends it with `sendfile`, and waits
    /// while it cannot take more.
    let sendFile: @Sendable (_ file: CacheFile, _ offset: Int64, _ count: Int) async throws -> Void

    /// Spans of a cache file at least this long go by `sendfile`; shorter ones are read into a
    /// buffer (one copy costs less than a descriptor and a file region).
    static let fileSpanMinimum = 64 * 1024

    func write(_ buffer: ByteBuffer) async throws {
        try await send(buffer)
    }

    /// Writes the bytes of `chunk`: a long span of a cache file by `sendfile`, other bytes
    /// through a buffer. The session hands out a span only while the file holds it (its one
    /// `fstat` per span), so `sendfile` never runs past the file's end.
    func write(_ chunk: CachedChunk, allocator: ByteBufferAllocator) async throws {
        if let file = chunk.file, chunk.count >= Self.fileSpanMinimum {
            try await sendFile(file, chunk.offset, chunk.count)
        } else {
            try await send(chunk.buffer(allocator: allocator))
        }
    }
}
