import Foundation

extension ResourceSession {
    /// Asks the origin whether `known` is still the current version, as the machine told a
    /// reader to: a conditional request (`If-None-Match`, else `If-Modified-Since`) for the
    /// cached bytes at the start, at most ``retagSample`` of them. If the origin cannot be
    /// reached, the cached bytes are served as they are (offline playback).
    func validate(_ known: ContentInfo) async {
        let sample = machine.written.range(containing: 0).map { min($0.count, Self.retagSample) } ?? 1
        let result = await askOrigin(about: known, sample: sample)
        let change = machine.validated(result, now: .now)
        wakeAll()
        if let (newInfo, cancel) = change {
            try? await replaceVersion(with: newInfo, cancel: cancel)
        } else if result.confirmsTheCachedBytes {
            // The origin's word and the fields of its answer are the stored ones now, for every
            // process (RFC 9111 §4.3.4); best-effort on a full disk.
            try? await index.update(id: record.id, info: machine.info)
        }
    }

    /// The most cached bytes from the start a revalidation asks for along with its condition: a
    /// `304` carries none of them, and another tag on the same length brings them to compare.
    static let retagSample: Int64 = 64 << 10

    /// Asks with `If-None-Match` (else `If-Modified-Since`) for the first `sample` bytes, which
    /// the file holds. An answer under another strong tag, of the same length and
    /// `Last-Modified` (or none), whose bytes are the cached ones, is the version retagged (an
    /// origin that tags every response anew); other bytes are a new version.
    nonisolated private func askOrigin(about known: ContentInfo, sample: Int64) async -> ResourceStateMachine.Validation
    {
        let request = OriginRequest(
            url: url,
            range: (0, sample - 1),
            ifNoneMatch: known.etag,
            ifModifiedSince: known.etag == nil ? known.lastModified : nil
        )
        do {
            let (answer, sampled) = try await fetchFromOrigin(request) { head, body in
                let answer = try await OriginAnswer.judge(head, body: body, first: 0, last: sample - 1)
                guard case .partial(let range, let newInfo) = answer, known.mayHoldTheSameBytes(as: newInfo) else {
                    return (answer, [UInt8]?.none)
                }
                var bytes: [UInt8] = []
                for try await chunk in body {
                    bytes += chunk
                    if bytes.count >= range.count { break }
                }
                return (answer, bytes)
            }
            if case .partial(_, let newInfo) = answer, let sampled, await self.holdsAtStart(sampled) {
                return .retagged(newInfo)
            }
            switch answer {
            case .notModified(let fields):
                // A 304 naming another entity tag does not describe the stored response: its
                // fields are not taken (RFC 9111 §4.3.4).
                let tag = fields.value("ETag")
                return .current(tag == nil || tag == known.etag ? fields : nil)
            case .partial(_, let newInfo), .full(let newInfo), .endOfResource(_, let newInfo):
                var newInfo = newInfo
                if case .endOfResource(let total, _) = answer { newInfo.length = total }
                return known.isDifferentVersion(from: newInfo) ? .changed(newInfo) : .current(newInfo.stored)
            }
        } catch is CancellationError {
            return .abandoned
        } catch let error as StreamCacheError where error.kind == .originStatus && (error.status ?? 0) < 500 {
            return .refused(error)
        } catch {
            logger.warning("cannot revalidate; serving cached bytes", metadata: ["key": "\(key)", "error": "\(error)"])
            return .unreachable(
                error as? StreamCacheError ?? StreamCacheError(.originUnreachable, "the origin cannot be reached")
            )
        }
    }

    /// Whether the file holds `bytes` from its first byte on.
    private func holdsAtStart(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty, let compared = try? comparedWithCache(bytes[...], at: 0) else { return false }
        return compared == Int64(bytes.count)
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
        // Not a child of the caller: a cancelled caller would cancel the write half-way.
        let replacement = Task {
            let newRecord = try await index.replaceVersion(
                of: oldRecord.id,
                key: key,
                url: url.absoluteString,
                info: newInfo
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
