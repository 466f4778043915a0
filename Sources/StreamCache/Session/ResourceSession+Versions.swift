import Foundation

extension ResourceSession {
    /// Asks the origin whether `known` is still the current version, as the machine told a
    /// reader to: a conditional request (`If-None-Match`, else `If-Modified-Since`) for the first
    /// cached bytes. Where no strong validator can say the answer is the cached version (none,
    /// a tag that changed, or bytes that must prove themselves, ``ResourceStateMachine/Validation``),
    /// the bytes the answers carry are compared with the cached ones (``VersionSamples``). If the
    /// origin cannot be reached, the cached bytes are served as they are (offline playback).
    func validate(_ known: ContentInfo, bytesOnly: Bool) async {
        guard !machine.written.isEmpty else { return }
        let (result, newBody) = await askOrigin(
            about: known,
            samples: VersionSamples(of: machine.written),
            bytesOnly: bytesOnly
        )
        await settle(result, change: machine.validated(result, now: .now), newBody: newBody, bytesOnly: bytesOnly)
    }

    /// Asks the origin whether `known` is still the current version as ``validate(_:bytesOnly:)``
    /// does, while the readers go on with it (its `stale-while-revalidate` window).
    func checkInBackground(_ known: ContentInfo) async {
        let (result, newBody) = await askOrigin(
            about: known,
            samples: VersionSamples(of: machine.written),
            bytesOnly: false
        )
        await settle(result, change: machine.checkedInBackground(result, now: .now), newBody: newBody, bytesOnly: false)
    }

    /// Carries out what the machine made of a check's `result`: a new version, whose first fetch
    /// replays `newBody` where the check's answer held all of it, or the origin's word stored.
    private func settle(
        _ result: ResourceStateMachine.Validation,
        change: (ContentInfo, cancel: [Int])?,
        newBody: CheckedBody?,
        bytesOnly: Bool
    ) async {
        wakeAll()
        if let (newInfo, cancel) = change {
            guard (try? await replaceVersion(with: newInfo, cancel: cancel)) != nil else { return }
            // Set before the readers woken by the replacement ask for a fetch (no suspension
            // since): the first fetch of this version takes it.
            checkedBody = newBody.map { (machine.generation, $0) }
        } else if result.confirmsTheCachedBytes {
            // The origin's word and the fields of its answer are the stored ones now, for every
            // process (RFC 9111 §4.3.4); best-effort on a full disk.
            try? await index.update(id: record.id, info: machine.info)
            if bytesOnly {
                // The bytes are proven those of the URL asked with.
                record.tokenDigest = environment.configuration.tokenDigest(url)
                try? await index.setTokenDigest(record.tokenDigest, id: record.id)
            }
        }
    }

    /// Asks for `samples.first` with `If-None-Match` (else `If-Modified-Since`), unless
    /// `bytesOnly`: then only bytes can answer. An answer whose fields prove another version is
    /// one; one whose fields prove nothing (``ContentInfo/match(_:)``) is the cached version only
    /// if the bytes it carries, and those of every spread sample, are the cached ones; one whose
    /// strong validator agrees, asked for `bytesOnly`, if the bytes it carries are.
    ///
    /// - Returns: the outcome, and where it is another version that the first answer held whole,
    ///   that answer.
    nonisolated private func askOrigin(
        about known: ContentInfo,
        samples: VersionSamples,
        bytesOnly: Bool
    ) async -> (ResourceStateMachine.Validation, CheckedBody?) {
        // A small resource cached whole is asked for up to the first sample's most bytes: its
        // next version, if it is one, comes whole in the answer (``CheckedBody``).
        let first = samples.first
        let wholeCached = first.lowerBound == 0 && known.length == first.upperBound
        let last = wholeCached ? max(first.upperBound, VersionSamples.firstSpan) - 1 : first.upperBound - 1
        let request = OriginRequest(
            url: url,
            range: (first.lowerBound, last),
            ifNoneMatch: bytesOnly ? nil : known.etag,
            ifModifiedSince: bytesOnly || known.etag != nil ? nil : known.lastModified
        )
        do {
            let (answer, compared, whole) = try await sample(request, first: first)
            switch answer {
            case .notModified(let fields):
                // A 304 naming another entity tag does not describe the stored response: its
                // fields are not taken (RFC 9111 §4.3.4).
                let tag = fields.value("ETag")
                return (.current(tag == nil || tag == known.etag ? fields : nil, proven: known.hasStrongValidator), nil)
            case .partial(_, let newInfo), .full(let newInfo), .endOfResource(_, let newInfo):
                var newInfo = newInfo
                if case .endOfResource(let total, _) = answer { newInfo.length = total }
                let match = known.match(newInfo)
                if match == .different { return (.changed(newInfo), whole) }
                if match == .same, !bytesOnly { return (.current(newInfo.stored, proven: true), nil) }
                // Only the bytes can tell: every sample must hold the cached ones. Where a strong
                // validator agrees (bytes fetched with other token values), the first corroborates
                // it; an origin that ignores `Range` would send its whole body for each of the rest.
                guard let compared, compared > 0 else { return (.changed(newInfo), whole) }
                let spread = match == .same || !known.byteRangeAccess ? [] : samples.spread
                for piece in spread {
                    let request = OriginRequest(url: url, range: (piece.lowerBound, piece.upperBound - 1))
                    let (answer, compared, _) = try await sample(request, first: piece)
                    guard case .partial(_, let pieceInfo) = answer, known.match(pieceInfo) != .different,
                        compared != nil
                    else { return (.changed(newInfo), nil) }
                }
                return (newInfo.etag == known.etag ? .current(newInfo.stored, proven: true) : .retagged(newInfo), nil)
            }
        } catch is CancellationError {
            return (.abandoned, nil)
        } catch let error as StreamCacheError where error.kind == .originStatus && (error.status ?? 0) < 500 {
            return (.refused(error), nil)
        } catch {
            logger.warning("cannot revalidate; serving cached bytes", metadata: ["key": "\(key)", "error": "\(error)"])
            let failure =
                error as? StreamCacheError ?? StreamCacheError(.originUnreachable, "the origin cannot be reached")
            return (.unreachable(failure), nil)
        }
    }

    /// Sends `request` for the cached bytes `piece` (and perhaps more after them) and compares
    /// what its answer carries of them (a whole body, from its first byte) with the file.
    ///
    /// - Returns: the answer; how many bytes were compared (`nil`: one differs; none for a `304`
    ///   or an answer without those bytes); and the answer with its body, where it holds every
    ///   byte of the resource and no more than ``VersionSamples/firstSpan``.
    nonisolated private func sample(
        _ request: OriginRequest,
        first piece: ByteRange
    ) async throws -> (OriginAnswer, Int64?, CheckedBody?) {
        try await fetchFromOrigin(request) { head, body in
            let answer = try await OriginAnswer.judge(
                head,
                body: body,
                first: request.range?.first ?? piece.lowerBound,
                last: request.range?.last,
                keepsCoding: environment.configuration.keepsEncodedContent
            )
            let start: Int64
            var whole: Int64?
            switch answer {
            case .partial(let range, let info):
                start = range.lowerBound
                if range.lowerBound == 0, range.upperBound == info.length { whole = info.length }
            case .full(let info):
                start = 0
                whole = info.length
            case .notModified, .endOfResource: return (answer, nil, nil)
            }
            if let length = whole, length > VersionSamples.firstSpan { whole = nil }
            var bytes: [UInt8] = []
            let wanted = Int(piece.upperBound - start)
            let kept = max(wanted, whole.map(Int.init) ?? 0)
            for try await chunk in body {
                bytes += chunk.prefix(kept - bytes.count)
                if bytes.count >= kept { break }
            }
            let newBody = whole.flatMap { bytes.count == $0 ? CheckedBody(head: head, bytes: bytes) : nil }
            guard bytes.count >= wanted else { return (answer, nil, newBody) }
            let compared = try await self.comparedWithCache(
                bytes[Int(piece.lowerBound - start)..<wanted],
                at: piece.lowerBound
            )
            return (answer, compared, newBody)
        }
    }

    /// Moves to a new version the machine has switched to: a new index row and data file; the
    /// stale fetches are cancelled once the new version is in place.
    ///
    /// The caller may be one of those fetches (a `416` ends the version from inside the fetch
    /// that met it), and any caller may be cancelled: the index write and the new file are done
    /// in a task of their own, so a cancellation never leaves the session without a version.
    ///
    /// - Throws: ``StreamCacheError`` if the new row or file cannot be made; the session is then
    ///   broken: its readers fail, and the engine opens a new session for the next request.
    func replaceVersion(with newInfo: ContentInfo, cancel: [Int]) async throws {
        logger.info("resource changed at origin; discarding cached bytes", metadata: ["key": "\(key)"])
        recent.removeAll()
        let oldRecord = record
        let (index, directory, key, url) = (index, directory, key, url)
        let digest = environment.configuration.tokenDigest(url)
        // Not a child of the caller: a cancelled caller would cancel the write half-way.
        let replacement = Task {
            let newRecord = try await index.replaceVersion(
                of: oldRecord.id,
                key: key,
                url: url.absoluteString,
                info: newInfo,
                tokenDigest: digest
            )
            return (newRecord, try await CacheFile.openLocked(path: directory.dataPath(id: newRecord.id)))
        }
        do {
            let (newRecord, newFile) = try await replacement.value
            unlink(directory.dataPath(id: oldRecord.id))
            record = newRecord
            file = newFile
            machine.versionReplaced(now: .now)
            wakeAll()
        } catch {
            let failure =
                error as? StreamCacheError
                ?? StreamCacheError(.index, "cannot store the new version of \(url.absoluteString): \(error)")
            machine.replacementFailed(failure)
            wakeAll()
            for id in cancel { fetchTasks[id]?.cancel() }
            throw failure
        }
        for id in cancel { fetchTasks[id]?.cancel() }
    }

    /// Reads what the index holds of generation `generation` now: ranges other processes recorded
    /// and what they claim. If another process replaced the version meanwhile, moves to it.
    func refresh(generation: Int) async {
        let id = record.id
        let withHead = machine.info.length == nil
        guard let state = try? await index.sharedState(of: id, rules: environment.claimRules, withHead: withHead)
        else { return }
        guard state.exists else {
            await adoptCurrentVersion()
            guard record.id == id else { return }
            // Removed with no version after it (`rm` or an eviction in another process): nobody
            // claims or records its bytes any more. The claims the session last saw go, so its
            // readers stop waiting for them; their fetches go on, recording nothing (as a claim
            // on a removed row is granted, ``CacheIndex/claim(resource:fetch:first:last:rules:)``).
            machine.refreshed(shared(state), generation: generation, now: .now)
            wakeAll()
            return
        }
        machine.refreshed(shared(state), generation: generation, now: .now)
        wakeAll()
    }

    /// Moves to the version another process stored under the key, if the index has one other than
    /// the session's (it replaced the version; the session's file is gone from the directory).
    /// A resource removed outright is read on from the open file, recording nothing.
    func adoptCurrentVersion() async {
        lastAdoptionCheck = .now
        guard machine.phase == .ready, let current = try? await index.resource(forKey: key),
            current.id != record.id, machine.phase == .ready
        else { return }
        logger.info("another process stored a new version; reading it", metadata: ["key": "\(key)"])
        for id in machine.replaceVersion(with: current.info, survivor: nil) { fetchTasks[id]?.cancel() }
        recent.removeAll()
        wakeAll()
        do {
            let newFile = try await CacheFile.openLocked(path: directory.dataPath(id: current.id))
            let state = try await index.sharedState(of: current.id, rules: environment.claimRules, withHead: false)
            record = current
            file = newFile
            machine.versionReplaced(now: .now)
            var shared = self.shared(state)
            shared.recorded = shared.recorded.clamped(below: try newFile.size())
            machine.refreshed(shared, generation: machine.generation, now: .now)
        } catch {
            machine.replacementFailed(
                error as? StreamCacheError
                    ?? StreamCacheError(.index, "cannot read the new version of \(url.absoluteString): \(error)")
            )
        }
        wakeAll()
    }

    /// Whether `info` was stored for a request with the values of the fields its response varies
    /// on that `headers` send for `url` (RFC 9111 §4.1): one variant is kept per resource.
    static func isVariant(_ info: ContentInfo, requestedWith headers: OriginHeaders, at url: URL) -> Bool {
        info.stored.matches(headers.fields(for: url, firstURL: url))
    }

    /// What the machine is told of `state`: with the origin's head another process stored, and
    /// its freshness by the wall clock now, while the machine knows no length, if that head
    /// answers this session's request (not a variant for other values of the fields it varies
    /// on, RFC 9111 §4.1, which the session set aside when it opened).
    func shared(_ state: CacheIndex.SharedState) -> ResourceStateMachine.Shared {
        var shared = ResourceStateMachine.Shared(state)
        if machine.info.length == nil, let info = state.info, Self.isVariant(info, requestedWith: headers, at: url) {
            let freshUntil = Self.freshUntil(of: info, configuration: environment.configuration)
            shared.stored = .init(info: info, freshUntil: freshUntil)
        }
        return shared
    }
}
