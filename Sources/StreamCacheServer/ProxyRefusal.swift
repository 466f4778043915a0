import HTTPTypes

/// Why the proxy turns a request away before it reaches the cache: a status and one line.
public struct ProxyRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status to answer with (4xx).
    public let status: HTTPResponse.Status
    /// One line for the client and the error log; never holds request headers.
    public let reason: String

    init(_ status: HTTPResponse.Status, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status.code) \(reason)" }
}
