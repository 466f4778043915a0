import Foundation

extension ResourceSession {
    /// Confirms with the origin that the cached version is current, once at a time.
    ///
    /// A conditional `Range: bytes=0-0` request (`If-None-Match`, else `If-Modified-Since`): `304`
    /// keeps the cache; different validators or length replace the version. If the origin cannot
    /// be reached, the cached bytes are served as they are (offline playback).
    func validate() async throws {
        if let validation {
            try await validation.value
            return
        }
        let task = Task { try await self.performValidation() }
        validation = task
        defer { validation = nil }
        try await task.value
    }

    nonisolated private func performValidation() async throws {
        let known = await info
        let request = OriginRequest(
            url: url,
            range: (0, 0),
            headers: headers,
            ifNoneMatch: known.etag,
            ifModifiedSince: known.etag == nil ? known.lastModified : nil
        )
        do {
            let answer = try await origin.fetch(request) { head, _ in try OriginAnswer.judge(head, first: 0, last: 0) }
            switch answer {
            case .notModified:
                await markValidated()
            case .partial(_, let newInfo), .full(let newInfo), .endOfResource(_, let newInfo):
                var newInfo = newInfo
                if case .endOfResource(let total, _) = answer { newInfo.length = total }
                if known.isDifferentVersion(from: newInfo) {
                    try await replaceVersion(with: newInfo, survivor: nil)
                } else {
                    await markValidated()
                }
            }
        } catch let error as StreamCacheError
            where error.kind != .resourceChanged && error.kind != .storage && error.kind != .index
        {
            logger.warning(
                "cannot revalidate; serving cached bytes",
                metadata: ["key": "\(key)", "error": "\(error.message)"]
            )
            await markValidated()
        }
    }

    private func markValidated() {
        validatedAt = .now
    }
}
