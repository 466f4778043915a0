import Foundation
import StreamCache

/// What part of a resource a response carries.
public enum ResponsePlan: Hashable, Sendable {
    /// `200` with the whole representation.
    case whole
    /// `206` with these bytes.
    case partial(ByteRange)
    /// `416`: the range starts at or past the end.
    case unsatisfiable
}

/// A request's `Range` and `If-Range` headers, judged by RFC 9110 §14: one range is honoured; an
/// invalid `Range` is ignored; several ranges get the whole body; an `If-Range` that does not
/// match the current validator gets the whole body.
public struct RangeRequest: Hashable, Sendable {
    /// The ranges asked for, `nil` without a (valid) `Range` header.
    public let specifiers: [RangeSpecifier]?
    /// The `If-Range` value, verbatim.
    public let ifRange: String?

    public init(range: String?, ifRange: String?) {
        self.specifiers = range.flatMap(RangeSpecifier.parse)
        self.ifRange = ifRange
    }

    /// The one range to honour, if there is exactly one.
    private var single: RangeSpecifier? {
        guard let specifiers, specifiers.count == 1 else { return nil }
        return specifiers[0]
    }

    /// Where a read can start before the resource's length is known: the first and last byte of
    /// a single `a-b` or `a-` range without `If-Range`, or the whole resource without `Range`.
    /// `nil` when the length or validators must be known first (`-n`, `If-Range`, several ranges).
    public var startBeforeLength: (first: Int64, last: Int64?)? {
        if specifiers == nil { return (0, nil) }
        guard ifRange == nil, case .from(let first, let last) = single else { return nil }
        return (first, last)
    }

    /// The response for a resource described by `info`.
    public func plan(for info: ContentInfo) -> ResponsePlan {
        guard let length = info.length, let single else { return .whole }
        if let ifRange, !Self.validator(ifRange, matches: info) { return .whole }
        guard let range = single.resolve(length: length) else { return .unsatisfiable }
        return .partial(range)
    }

    /// RFC 9110 §13.1.5: an entity tag matches by strong comparison, a date only exactly.
    static func validator(_ value: String, matches info: ContentInfo) -> Bool {
        let value = value.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard !value.hasPrefix("W/"), let etag = info.etag, !etag.hasPrefix("W/") else { return false }
            return etag == value
        }
        return info.lastModified == value
    }
}
