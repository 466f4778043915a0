import Foundation

extension ResourceSession {
    /// Asks the origin whether `known` is still the current version, as the machine told a
    /// reader to: a conditional `Range: bytes=0-0` request (`If-None-Match`, else
    /// `If-Modified-Since`). If the origin cannot be reached, the cached bytes are served as they
    /// are (offline playback).
    func validate(_ known: ContentInfo) async {
        let result = await askOrigin(about: known)
        let change = machine.validated(result, now: .now)
        wakeAll()
        if let (newInfo, cancel) = change {
            try? await replaceVersion(with: newInfo, cancel: cancel)
        }
    }

    nonisolated private func askOrigin(about known: ContentInfo) async -> ResourceStateMachine.Validation {
        let request = OriginRequest(
            url: url,
            range: (0, 0),
            ifNoneMatch: known.etag,
            ifModifiedSince: known.etag == nil ? known.lastModified : nil
        )
        do {
            let answer = try await origin.fetch(request, headers: headers) { head, _ in
                try OriginAnswer.judge(head, first: 0, last: 0)
            }
            switch answer {
            case .notModified:
                return .current
            case .partial(_, let newInfo), .full(let newInfo), .endOfResource(_, let newInfo):
                var newInfo = newInfo
                if case .endOfResource(let total, _) = answer { newInfo.length = total }
                return known.isDifferentVersion(from: newInfo) ? .changed(newInfo) : .current
            }
        } catch is CancellationError {
            return .abandoned
        } catch {
            logger.warning("cannot revalidate; serving cached bytes", metadata: ["key": "\(key)", "error": "\(error)"])
            return .unreachable
        }
    }

    /// Moves to a new version the machine has switched to: a new index row and data file; the
    /// stale fetches are cancelled.
    ///
    /// - Throws: ``StreamCacheError`` if the new row or file cannot be made; the session is then
    ///   broken and every read fails.
    func replaceVersion(with newInfo: ContentInfo, cancel: [Int]) async throws {
        logger.info("resource changed at origin; discarding cached bytes", metadata: ["key": "\(key)"])
        for id in cancel { fetchTasks[id]?.cancel() }
        recent.removeAll()
        let oldRecord = record
        do {
            let newRecord = try await index.replaceVersion(
                of: oldRecord.id,
                key: key,
                url: url.absoluteString,
                info: newInfo
            )
            let newFile = try await CacheFile.openLocked(path: directory.dataPath(id: newRecord.id))
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
            throw failure
        }
    }

    /// Adds the ranges other processes recorded for generation `generation` since the session opened.
    func refresh(generation: Int) async {
        let id = record.id
        guard let ranges = try? await index.ranges(of: id) else { return }
        machine.refreshed(ranges, generation: generation, now: .now)
        wakeAll()
    }
}
