/// How the ``TestOrigin`` misbehaves: in the spirit of Apple's Network Link Conditioner, plus faults.
public struct OriginConditions: Sendable, Hashable {
    /// Body bytes per second per connection, or `nil` for as fast as possible.
    public var bytesPerSecond: Int?
    /// Added before each response head.
    public var latency: Duration
    /// Faults applied to every request (except `/_origin/` endpoints).
    public var faults: [OriginFault]

    /// Creates conditions; the defaults are a perfect origin.
    public init(bytesPerSecond: Int? = nil, latency: Duration = .zero, faults: [OriginFault] = []) {
        self.bytesPerSecond = bytesPerSecond
        self.latency = latency
        self.faults = faults
    }
}

/// A way the ``TestOrigin`` can misbehave.
public enum OriginFault: Sendable, Hashable, CustomStringConvertible {
    /// Answers every request with `200` and the whole body, ignoring `Range`.
    case ignoreRange
    /// Sends a `Content-Range` whose start is one past the requested start (and those bytes).
    case wrongRangeStart
    /// Sends half of the body it announced, then closes the connection.
    case shortBody
    /// Resets the connection (TCP RST) after this many body bytes.
    case resetAfter(Int)
    /// Answers every request with this status and a short text body.
    case status(Int)
    /// Gives every response a new ETag, as if the file changed each time.
    case changingETag
    /// As ``changingETag``, with no `Last-Modified`: only the bytes tell the version.
    case changingETagOnly
    /// Sends neither `ETag` nor `Last-Modified`.
    case noValidators
    /// Labels every body `Content-Encoding: gzip`, whatever `Accept-Encoding` said.
    case gzipEncoding
    /// Sends no `Content-Length`: the body is chunked, its length known only at its end.
    case noLength
    /// Fails the first two requests of each path: the first with `503` (`Retry-After: 0`), the
    /// second with a reset halfway through its body; later ones succeed.
    case flaky

    /// Parses the command-line form: `ignore-range`, `wrong-range-start`, `short-body`,
    /// `reset-after=N`, `status=N`, `changing-etag`, `changing-etag-only`, `no-validators`, `gzip-encoding`, `no-length`, `flaky`.
    public init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        switch (parts.first ?? "", parts.count == 2 ? Int(parts[1]) : nil) {
        case ("ignore-range", nil) where parts.count == 1: self = .ignoreRange
        case ("wrong-range-start", nil) where parts.count == 1: self = .wrongRangeStart
        case ("short-body", nil) where parts.count == 1: self = .shortBody
        case ("changing-etag", nil) where parts.count == 1: self = .changingETag
        case ("changing-etag-only", nil) where parts.count == 1: self = .changingETagOnly
        case ("no-validators", nil) where parts.count == 1: self = .noValidators
        case ("gzip-encoding", nil) where parts.count == 1: self = .gzipEncoding
        case ("no-length", nil) where parts.count == 1: self = .noLength
        case ("flaky", nil) where parts.count == 1: self = .flaky
        case ("reset-after", let count?) where count >= 0: self = .resetAfter(count)
        case ("status", let code?) where (100...599).contains(code): self = .status(code)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .ignoreRange: "ignore-range"
        case .wrongRangeStart: "wrong-range-start"
        case .shortBody: "short-body"
        case .resetAfter(let count): "reset-after=\(count)"
        case .status(let code): "status=\(code)"
        case .changingETag: "changing-etag"
        case .changingETagOnly: "changing-etag-only"
        case .noValidators: "no-validators"
        case .gzipEncoding: "gzip-encoding"
        case .noLength: "no-length"
        case .flaky: "flaky"
        }
    }
}
