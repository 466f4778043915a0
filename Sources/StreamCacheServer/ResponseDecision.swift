import Foundation
import HTTPTypes
import StreamCache

/// The head of the proxy's answer to a `GET` or `HEAD` of a resource whose content information
/// is known: its status, its fields and which bytes it carries. One pure decision (RFC 9110 §13
/// and §14, RFC 9111 §4) that both executors carry out: the responder, and the cache hits on the
/// event loop (``CacheHits``).
struct ResponseDecision: Equatable {
    enum Outcome: Equatable {
        /// `200` (`partial == false`) or `206` with these bytes; a `nil` range is the whole of a
        /// resource whose length is not known yet (sent chunked).
        case send(partial: Bool, range: ByteRange?)
        /// `304 Not Modified`: the player holds this version already.
        case notModified
        /// `416`: the range starts at or past the end of a `length`-byte representation.
        case unsatisfiable(length: Int64)
    }

    let outcome: Outcome
    /// The fields of the representation the answer sends (see ``Representation/fields``), shared
    /// with it rather than copied: a cache hit decides this for every range.
    let representationFields: ArraySlice<HeaderField>
    /// The fields that describe this answer's bytes (`Content-Range`, `Content-Length`).
    let bytesFields: [HeaderField]

    /// The response's fields, in the order they are sent.
    var fields: [HeaderField] { Array(representationFields) + bytesFields }

    static func == (a: ResponseDecision, b: ResponseDecision) -> Bool {
        a.outcome == b.outcome && a.fields == b.fields
    }

    /// What every answer about one representation says at one age, whatever the request: its
    /// `Accept-Ranges`, `Content-Type`, validators, stored fields and `Age`. An executor that
    /// answers one resource again and again (the cache hits) keep it while ``holds(_:at:)``.
    struct Representation {
        let info: ContentInfo
        let age: Int64?
        /// The fields of a `200` or `206`, in order; a `304` sends all but the first two.
        let fields: [HeaderField]

        /// `shared`: the answer of a shared cache, which sends no stored cookie.
        init(_ info: ContentInfo, at now: Date = Date(), shared: Bool = false) {
            self.info = info
            age = CachedResponseFields.age(of: info, at: now)
            var fields = [
                HeaderField("Accept-Ranges", "bytes"),
                HeaderField("Content-Type", info.contentType ?? "application/octet-stream"),
            ]
            if let etag = info.etag { fields.append(HeaderField("ETag", etag)) }
            if let lastModified = info.lastModified { fields.append(HeaderField("Last-Modified", lastModified)) }
            // The origin's, which its `Age` counts from (RFC 9111 §4.2.3); the responder dates
            // an answer without one.
            if let date = info.stored.value("Date") { fields.append(HeaderField("Date", date)) }
            fields += CachedResponseFields.replayed(info, shared: shared)
            if let age { fields.append(HeaderField("Age", String(age))) }
            self.fields = fields
        }

        /// Whether an answer about `info` at `now` says the same.
        func holds(_ info: ContentInfo, at now: Date) -> Bool {
            self.info == info && age == CachedResponseFields.age(of: info, at: now)
        }
    }

    /// Decides the answer for `info` from the request's `Range`, `If-Range`, `If-None-Match` and
    /// `If-Modified-Since` (one value each).
    init(
        info: ContentInfo,
        range: String?,
        ifRange: String?,
        ifNoneMatch: String? = nil,
        ifModifiedSince: String? = nil,
        now: Date = Date(),
        shared: Bool = false
    ) {
        self.init(
            Representation(info, at: now, shared: shared),
            range: range,
            ifRange: ifRange,
            ifNoneMatch: ifNoneMatch,
            ifModifiedSince: ifModifiedSince
        )
    }

    /// Decides the answer for the representation from the request's `Range`, `If-Range`,
    /// `If-None-Match` and `If-Modified-Since` (one value each).
    init(
        _ representation: Representation,
        range: String?,
        ifRange: String?,
        ifNoneMatch: String? = nil,
        ifModifiedSince: String? = nil
    ) {
        let info = representation.info
        if CachedResponseFields.playerHasIt(ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, info: info) {
            outcome = .notModified
            representationFields = representation.fields.dropFirst(2)
            bytesFields = []
            return
        }
        var bytesFields: [HeaderField] = []
        switch RangeRequest(range: range, ifRange: ifRange).plan(for: info) {
        case .unsatisfiable:
            outcome = .unsatisfiable(length: info.length ?? 0)
            representationFields = []
            self.bytesFields = [HeaderField("Content-Range", "bytes */\(info.length ?? 0)")]
            return
        case .whole:
            outcome = .send(partial: false, range: info.length.map { ByteRange(0, $0) })
            // What a whole answer of the origin said of itself, stored as it came (RFC 9111 §3.1).
            bytesFields += info.stored.values("Content-Range").map { HeaderField("Content-Range", $0) }
        case .partial(let part):
            outcome = .send(partial: true, range: part)
            bytesFields.append(
                HeaderField("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(info.length ?? 0)")
            )
        }
        if case .send(_, let range?) = outcome {
            bytesFields.append(HeaderField("Content-Length", String(range.count)))
        }
        representationFields = representation.fields[...]
        self.bytesFields = bytesFields
    }

    /// The fields as HTTPTypes carries them.
    var httpFields: HTTPFields {
        var fields = HTTPFields()
        for field in representationFields + bytesFields {
            if let name = HTTPField.Name(field.name) { fields.append(HTTPField(name: name, value: field.value)) }
        }
        return fields
    }

    /// The status code.
    var status: Int {
        switch outcome {
        case .send(let partial, _): partial ? 206 : 200
        case .notModified: 304
        case .unsatisfiable: 416
        }
    }
}
