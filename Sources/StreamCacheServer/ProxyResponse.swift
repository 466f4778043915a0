import HTTPTypes
import NIOCore

/// An answer of the responder, as the executor (``ResponderHandler``) writes it: a status,
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

    func write(_ buffer: ByteBuffer) async throws {
        try await send(buffer)
    }
}
