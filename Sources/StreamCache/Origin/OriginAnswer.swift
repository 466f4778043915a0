import Foundation

/// What an origin's response to a ranged GET means, after the strict checks of an origin that
/// is not trusted (`docs/correctness.md`).
public enum OriginAnswer: Hashable, Sendable {
    /// A `206` carrying exactly `range` (which starts at the requested offset).
    case partial(range: ByteRange, info: ContentInfo)
    /// A `200` carrying the whole resource from byte 0 (the origin ignored `Range`, or `If-Range` failed).
    case full(info: ContentInfo)
    /// A `416` at an offset at or past the total length: there is nothing past `total`.
    case endOfResource(total: Int64, info: ContentInfo)
    /// A `304`: the validators sent still match; its fields update the stored ones.
    case notModified(StoredFields)

    /// What the answer's head says of the resource; `nil` for a `304`, whose fields update it.
    public var info: ContentInfo? {
        switch self {
        case .partial(_, let info), .full(let info), .endOfResource(_, let info): info
        case .notModified: nil
        }
    }

    /// Judges `head`, the answer to a request for bytes `first...last` (`last == nil`: to the end).
    ///
    /// - Parameter keepsCoding: whether content under a `Content-Encoding` is taken as it came
    ///   (``CacheConfiguration/keepsEncodedContent``); else it is refused.
    /// - Throws: ``StreamCacheError`` `originStatus` for error statuses, `originProtocolViolation`
    ///   for a response that does not carry what was asked (wrong start, overlong range, bad totals),
    ///   `encodedBody` for bytes that are not the content or its coding as `Content-Encoding` says.
    public static func judge(
        _ head: OriginResponseHead,
        first: Int64,
        last: Int64?,
        keepsCoding: Bool = false
    ) throws -> OriginAnswer {
        let info = head.contentInfo
        let host = head.url.originName
        if !keepsCoding, head.status == 200 || head.status == 206, let encoding = info.contentCoding {
            throw StreamCacheError(
                .encodedBody,
                "origin \(host) sent Content-Encoding: \(encoding) although only unencoded bytes were asked for"
            )
        }
        if let codings = head["Transfer-Encoding"],
            codings.split(separator: ",").map({ $0.trimming(" \t").lowercased() }) != ["chunked"]
        {
            // The client removed only the chunked framing: what is left is not the content.
            throw StreamCacheError(
                .encodedBody,
                "origin \(host) sent Transfer-Encoding: \(codings); only chunked is accepted"
            )
        }
        switch head.status {
        case 206:
            guard let value = head["Content-Range"], let contentRange = ContentRange(parsing: value),
                let range = contentRange.range
            else {
                throw StreamCacheError(
                    .originProtocolViolation,
                    "origin \(host) sent 206 without a valid Content-Range"
                )
            }
            guard range.lowerBound == first else {
                throw StreamCacheError(
                    .originProtocolViolation,
                    "origin \(host) sent bytes \(range) for a request starting at \(first)"
                )
            }
            if let last, range.upperBound - 1 > last {
                throw StreamCacheError(
                    .originProtocolViolation,
                    "origin \(host) sent bytes \(range), more than the requested \(first)-\(last)"
                )
            }
            guard contentRange.total != nil else {
                throw StreamCacheError(.originProtocolViolation, "origin \(host) sent 206 without a total length")
            }
            if let length = head.contentLength, length != range.count {
                throw StreamCacheError(
                    .originProtocolViolation,
                    "origin \(host) sent Content-Length \(length) for a \(range.count)-byte range"
                )
            }
            return .partial(range: range, info: info)
        case 200:
            return .full(info: info)
        case 304:
            return .notModified(info.stored)
        case 416:
            if let value = head["Content-Range"], let total = ContentRange(parsing: value)?.total, total <= first {
                return .endOfResource(total: total, info: info)
            }
            throw StreamCacheError(.originStatus, "origin \(host) answered 416 Range Not Satisfiable", status: 416)
        case 300..<400:
            throw StreamCacheError(
                .tooManyRedirects,
                "origin \(host) answered \(head.status) without a usable redirect"
            )
        default:
            throw StreamCacheError(
                .originStatus,
                "origin \(host) answered \(head.status) \(HTTPStatus.reason(head.status)) for \(head.url.path.isEmpty ? "/" : head.url.path)",
                status: head.status
            )
        }
    }
}

/// Reason phrases for the statuses a user may meet.
public enum HTTPStatus {
    /// The standard reason phrase of `status`, or `""`.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
