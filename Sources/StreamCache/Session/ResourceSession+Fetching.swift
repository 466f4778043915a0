import Foundation

extension ResourceSession {
    typealias FetchRequest = ResourceStateMachine.FetchRequest

    /// Runs the fetch the machine asked for, owned by the session until it ends.
    func start(_ request: FetchRequest) {
        logger.debug(
            "fetch started",
            metadata: ["key": "\(key)", "range": "\(request.first)-\(request.last.map(String.init) ?? "")"]
        )
        // Owned by the session: it removes itself when done, `drain()` awaits it, a version
        // change cancels it.
        fetchTasks[request.fetch] = Task { await self.run(request) }
    }

    /// Sends request after request of one fetch until the machine says it is done; then makes its
    /// last bytes durable, records them and removes the fetch.
    nonisolated private func run(_ first: FetchRequest) async {
        let id = first.fetch
        let batches = DurableBatches { batch, generation, file in
            await self.makeDurable(batch, generation: generation, file: file, fetch: id)
        }
        var failure: StreamCacheError?
        do {
            var request: FetchRequest? = first
            while let current = request {
                request = try await transfer(current, batches: batches)
            }
        } catch is CancellationError {
            // Stale or abandoned: nobody waits for an error.
        } catch {
            failure =
                error as? StreamCacheError ?? StreamCacheError(.originUnreachable, "origin fetch failed: \(error)")
            logger.debug("fetch failed", metadata: ["key": "\(key)", "error": "\(failure?.message ?? "")"])
        }
        let last = await end(id, error: failure)
        await batches.finish()
        // Its last bytes are recorded with the end of its claim, in one transaction: other
        // processes may fetch what it did not.
        var released = false
        if let (batch, generation, file) = last {
            released = await makeDurable(batch, generation: generation, file: file, fetch: id, endingClaim: true)
        }
        await remove(id)
        if !released { await releaseClaim(of: id) }
    }

    /// Ends fetch `id`'s claim on the current version's row. (A version change deleted the row
    /// of the one before, and its claims with it.)
    private func releaseClaim(of id: Int) async {
        try? await index.releaseClaim(resource: record.id, owner: environment.mark.token, fetch: id)
    }

    /// Sends one request of fetch `id` and writes its body where the machine says.
    ///
    /// - Returns: the next request, or `nil` when the fetch is done.
    nonisolated private func transfer(_ proposed: FetchRequest, batches: DurableBatches) async throws -> FetchRequest? {
        let id = proposed.fetch
        // The bytes are claimed in the index first: another process may be fetching some of them.
        guard let (request, checked) = try await claim(proposed) else { return nil }
        let originRequest = OriginRequest(url: url, range: (request.askedFirst, request.last), ifRange: request.ifRange)
        let handle: @Sendable (OriginResponseHead, OriginBody) async throws -> FetchRequest? = { head, body in
            var answer = try await OriginAnswer.judge(
                head,
                body: body,
                first: request.askedFirst,
                last: request.last,
                keepsCoding: self.environment.configuration.keepsEncodedContent
            )
            if case .notModified = answer, request.ifRange != nil {
                // A 304 to If-Range (RFC 9110 allows only 206 or 200): ask once more without it,
                // as every later request will; the answer's validators are checked as always.
                await self.originRefusedIfRange()
                return proposed
            }
            if case .notModified = answer {
                // No conditional request was made for bytes (If-Range is not one): asking again
                // would get the same, so the fetch fails; readers retry a bounded number of times.
                throw StreamCacheError(
                    .originProtocolViolation,
                    "origin \(head.url.originName) answered 304 Not Modified to a range request"
                )
            }
            var rest: ArraySlice<UInt8> = []
            var proven = false
            if case .partial(_, let newInfo) = answer, request.proof == 0,
                await self.asksForProof(after: newInfo, at: request.first)
            {
                // Another tag that proves nothing, where cached bytes lie just before: asked once
                // more with them, the bytes tell whether the answer joins them.
                return proposed
            }
            if case .partial(let range, let newInfo) = answer, request.proof > 0 {
                // The cached bytes asked for again: the same, and the rest joins them.
                guard range.upperBound > request.first else {
                    throw StreamCacheError(
                        .originProtocolViolation,
                        "origin \(head.url.originName) sent bytes \(range), none of those asked for"
                    )
                }
                let check = try await self.checkRetag(body, from: request.askedFirst, upTo: request.first)
                guard case .same(let after) = check else {
                    _ = try await self.retag(id, as: newInfo, check)
                    return nil
                }
                answer = .partial(range: ByteRange(request.first, range.upperBound), info: newInfo)
                rest = after
                proven = true
            } else if case .full(let newInfo) = answer,
                await self.mayBeRetagged(id, as: newInfo, before: request.first)
            {
                // Another tag on the same length: the bytes before the start tell whether the
                // cached ones are still the resource's.
                let check = try await self.checkRetag(body, from: 0, upTo: request.first)
                guard let info = try await self.retag(id, as: newInfo, check), let length = info.length,
                    case .same(let after) = check
                else { return nil }
                answer = .partial(range: ByteRange(request.first, length), info: info)
                rest = after
            }
            guard
                let file = try await self.accept(answer, fetch: id, sentIfRange: request.ifRange != nil, proven: proven)
            else {
                // An answer the cache may not keep goes to its reader from here.
                if let relay = await self.takeRelay(of: id) { await relay.pump(rest, body) }
                return nil
            }
            /// Writes `chunk` where the machine says; `true` when the fetch ends here.
            func take(_ chunk: [UInt8]) async throws -> Bool {
                let step = try await self.write(chunk, fetch: id, file: file)
                if let (batch, generation) = step.batch {
                    batches.start(batch, generation: generation, file: file)
                }
                if step.endsFetch { return true }
                guard step.holds else { return false }
                return try await !self.readerCame(for: id)
            }
            if !rest.isEmpty, try await take(Array(rest)) { return nil }
            for try await chunk in body {
                if try await take(chunk) { return nil }
            }
            return try await self.bodyEnded(id)
        }
        // The check that found this version brought all of it: its answer, not another request.
        if let checked { return try await handle(checked.head, checked.body) }
        return try await fetchFromOrigin(originRequest, handle)
    }

    // MARK: Events of a fetch, on the actor

    /// Whether to ask again, with cached bytes before it, for a gap at `first` whose answer
    /// `newInfo` proves nothing (``ResourceStateMachine/asksForProof(after:at:)``).
    private func asksForProof(after newInfo: ContentInfo, at first: Int64) -> Bool {
        machine.asksForProof(after: newInfo, at: first)
    }

    private func originRefusedIfRange() {
        logger.notice("the origin answers If-Range with 304; asking without it", metadata: ["key": "\(key)"])
        machine.originRefusedIfRange()
    }

    /// Claims the bytes of `proposed` in the index and feeds the answer to the machine.
    ///
    /// - Returns: the request to send, perhaps shorter, and the answer the check of the version
    ///   brought where it answers that request (taken: a version's first fetch has it or nobody
    ///   does); `nil` if another process has the bytes.
    private func claim(_ proposed: FetchRequest) async throws -> (FetchRequest, CheckedBody?)? {
        let generation = machine.generation
        let (granted, state) = try await index.claim(
            resource: record.id,
            fetch: proposed.fetch,
            first: proposed.first,
            last: proposed.last,
            rules: environment.claimRules,
            withHead: machine.info.length == nil
        )
        let claim: ResourceStateMachine.Claim = granted.map { .granted(last: $0) } ?? .refused
        let request = machine.claimed(proposed.fetch, claim, shared: shared(state), generation: generation, now: .now)
        wakeAll()
        guard let request else {
            logger.debug(
                "another process fetches these bytes",
                metadata: ["key": "\(key)", "offset": "\(proposed.first)"]
            )
            return nil
        }
        return (request, takeCheckedBody(answering: request, generation: generation))
    }

    /// The answer that brought version `generation` whole, if it answers `request`; the session
    /// keeps it no longer either way.
    private func takeCheckedBody(answering request: FetchRequest, generation: Int) -> CheckedBody? {
        guard let (bodyGeneration, body) = checkedBody else { return nil }
        checkedBody = nil
        guard bodyGeneration == generation, generation == machine.generation,
            body.answers(first: request.askedFirst, last: request.last, now: .now)
        else { return nil }
        return body
    }

    /// Feeds an answer head to the machine and carries out what it says.
    ///
    /// - Returns: the file to write the body into, or `nil` if the body is not wanted.
    private func accept(
        _ answer: OriginAnswer,
        fetch id: Int,
        sentIfRange: Bool,
        proven: Bool
    ) async throws -> CacheFile? {
        // The request fields the response varies on are kept with it (RFC 9111 §4.1).
        let answer = answer.recordingVariant(of: headers.fields(for: url, firstURL: url))
        let action = machine.answered(id, answer, sentIfRange: sentIfRange, proven: proven, now: .now)
        wakeAll()
        if let ignored = action.ignoresRange { environment.originRanges.note(url, ignored: ignored) }
        if let newInfo = action.replaceVersion {
            try await replaceVersion(with: newInfo, cancel: action.cancel)
        } else if let info = action.store {
            // Not waited for: the body is read meanwhile, and the bytes' record, asked for after
            // it, sees it. Other processes learn the length as soon as it commits.
            index.updateSoon(id: record.id, info: info) { [logger, key] error in
                logger.warning(
                    "cannot record the content information",
                    metadata: ["key": "\(key)", "error": "\(error)"]
                )
            }
        }
        if let (reader, start, info) = action.relay {
            let relay = RelayedBody(start: start, info: info)
            relays[reader] = relay
            relayOfFetch[id] = relay
            wakeAll()
        }
        guard action.readBody else { return nil }
        if case .full = answer {
            // A whole body: every byte of it is claimed, unless another process streams it already.
            let generation = machine.generation
            let state = try await index.claimRest(
                resource: record.id,
                fetch: id,
                from: 0,
                rules: environment.claimRules
            )
            guard machine.claimedRest(id, shared: shared(state), generation: generation, now: .now) else {
                wakeAll()
                return nil
            }
        }
        return file
    }

    /// What the machine said of a chunk of a fetch's body: the pieces of it to write to the file,
    /// whether the fetch ends after them, and whether it holds its body for a reader to come
    /// (``readerCame(for:)``).
    struct ChunkStep: Sendable {
        var pieces: [ResourceStateMachine.Piece] = []
        var endsFetch: Bool
        var holds = false
        /// The version the pieces belong to.
        var generation = 0
        /// Whether the pieces are kept in memory too, for readers waiting on them.
        var keep = false
        /// Once written: a batch to make durable, and its version, if one is due.
        var batch: (ByteRangeSet, Int)?
    }

    /// Feeds a chunk of fetch `id`'s body to the machine and carries out what it says: the pieces
    /// it wants are written to `file`, off the actor and off the cooperative pool (a write a slow
    /// disk holds for seconds holds neither this session's readers nor the engine), then
    /// reported written. One hop to the actor and back a chunk, as the write is awaited on it.
    private func write(_ chunk: [UInt8], fetch id: Int, file: CacheFile) async throws -> ChunkStep {
        var step = try receive(chunk, fetch: id, file: file)
        guard !step.pieces.isEmpty else { return step }
        // Summed beside the write, while the bytes are in that processor's cache.
        let summing = file === self.file ? fetchedSums.progress(of: id, generation: step.generation) : nil
        let sums = try await file.writeOffPool(chunk, step.pieces, summing: summing)
        step.batch = wrote(chunk, step, sums: sums, fetch: id, file: file)
        return step
    }

    /// Feeds a chunk of fetch `id`'s body to the machine: the pieces it wants written to `file`,
    /// once the budget and the disk have room for them.
    private func receive(_ chunk: [UInt8], fetch id: Int, file: CacheFile) throws -> ChunkStep {
        let now = ContinuousClock.now
        switch machine.received(id, count: chunk.count, now: now) {
        case .stop:
            return ChunkStep(endsFetch: true)
        case .fail(let error):
            throw error
        case .write(let pieces, let endsFetch):
            let holds = !endsFetch && machine.waitsForReader(id, now: now) == true
            guard !pieces.isEmpty else { return ChunkStep(endsFetch: endsFetch, holds: holds) }
            let count = pieces.reduce(0) { $0 + $1.count }
            let budget = environment.budget.value
            if machine.written.count + Int64(count) > budget {
                // One resource never takes more than the whole budget (an endless stream): its
                // readers go on uncached, as on a full disk.
                throw StreamCacheError(
                    .diskFull,
                    "\(Credentials.redacted(url.absoluteString)) is larger than the cache's budget of \(budget) bytes"
                )
            }
            guard environment.reserve.mayWrite(count) else {
                // The index needs room to record what is written: stop short of a full disk.
                throw StreamCacheError(
                    .diskFull,
                    "the cache's disk has less than \(environment.reserve.reserve) bytes free"
                )
            }
            let last = pieces[pieces.count - 1]
            let span = ByteRange(pieces[0].offset, last.offset + Int64(last.count))
            let keep = file === self.file && machine.isAwaited(span)
            // Readers behind the fetch (players at their own pace) read the file: a thousand such
            // sessions hold no memory for them.
            if !keep { recent.removeAll() }
            return ChunkStep(
                pieces: pieces,
                endsFetch: endsFetch,
                holds: holds,
                generation: machine.generation,
                keep: keep
            )
        }
    }

    /// Fetch `id` wrote the pieces of `chunk` that `step` gave it, and summed them into `sums`:
    /// the sums are kept, the pieces kept for the readers waiting on them, and reported to the
    /// machine. Nothing but the report if the version changed meanwhile.
    ///
    /// - Returns: a batch to make durable, and its version, if one is due.
    private func wrote(
        _ chunk: [UInt8],
        _ step: ChunkStep,
        sums: FetchSums?,
        fetch id: Int,
        file: CacheFile
    ) -> (ByteRangeSet, Int)? {
        if file === self.file, step.generation == machine.generation {
            if let sums { fetchedSums.wrote(sums, fetch: id, generation: step.generation) }
            for piece in step.pieces {
                let bytes = chunk[piece.skip..<piece.skip + piece.count]
                if step.keep {
                    let kept = piece.count == chunk.count ? chunk : Array(bytes)
                    recent.add(kept, at: piece.offset, generation: step.generation)
                }
            }
        }
        let batch = machine.wrote(id, now: .now)
        wakeAll()
        return batch.map { ($0, machine.generation) }
    }

    /// Waits while whole-body fetch `id` holds its body for a reader: `true` when one wants what
    /// it brings, `false` when the grace is over (``ResourceStateMachine/waitsForReader(_:now:)``).
    /// Its body is not read meanwhile, so the origin's connection waits too. A reader that waits
    /// for bytes wakes it (``heldFetches``), and a shutdown ends the wait at once; a reader of
    /// another process is looked for in the index every other poll interval (its want).
    private func readerCame(for id: Int) async throws -> Bool {
        while !draining {
            try Task.checkCancellation()
            let epoch = heldFetches.epoch
            switch machine.waitsForReader(id, now: .now) {
            case nil: return true
            case false?:
                // The grace is over; a last look for a reader of another process.
                await refresh(generation: machine.generation)
                return machine.waitsForReader(id, now: .now) == nil
            case true?:
                // A hold without an end is none: the fetch is wanted again, or ending.
                guard let deadline = machine.holdEnds(id) else { return true }
                // A reader of another process may wait for the body: its want is in the index.
                await refresh(generation: machine.generation)
                guard machine.waitsForReader(id, now: .now) == true else { continue }
                let look = ContinuousClock.now.advanced(by: environment.configuration.sharedPollInterval * 2)
                await heldFetches.wait(id, unlessChangedSince: epoch, until: min(deadline, look))
            }
        }
        return false
    }

    private func bodyEnded(_ id: Int) async throws -> FetchRequest? {
        switch machine.bodyEnded(id) {
        case .request(let next):
            return next
        case .finish(let store):
            wakeAll()
            if let store { try await index.update(id: record.id, info: store) }
            return nil
        case .fail(let error):
            throw error
        }
    }

    /// The relay fetch `id` is to send its body into, if its answer was handed to a reader.
    private func takeRelay(of id: Int) -> RelayedBody? {
        relayOfFetch.removeValue(forKey: id)
    }

    /// Ends fetch `id`; its waiting readers get `error`.
    ///
    /// - Returns: its last bytes to make durable, with their version and file.
    private func end(_ id: Int, error: StreamCacheError?) -> (ByteRangeSet, Int, CacheFile)? {
        let batch = machine.endFetch(id, error: error)
        wakeAll()
        return batch.map { ($0, machine.generation, file) }
    }

    private func remove(_ id: Int) {
        // A relay the fetch never started sending: its reader ends rather than wait.
        relayOfFetch.removeValue(forKey: id)?.close()
        machine.removeFetch(id)
        fetchTasks[id] = nil
        fetchedSums.fetchEnded(id)
        // Kept only while fetches run: later readers read the file.
        if fetchTasks.isEmpty {
            recent.removeAll()
            fetchedSums.forget()
        }
        wakeAll()
        notifyIfIdle()
    }

    /// Cancels every running fetch; what they wrote is still made durable and recorded.
    func cancelFetches() {
        for task in fetchTasks.values { task.cancel() }
        backgroundCheck?.cancel()
    }

    /// Syncs `file`, then records `batch` if it still belongs to the current version, and moves
    /// the claim of fetch `fetch` past it, or with `endingClaim` ends it.
    ///
    /// - Returns: whether the claim ended with the batch.
    @discardableResult
    func makeDurable(
        _ batch: ByteRangeSet,
        generation: Int,
        file: CacheFile,
        fetch: Int,
        endingClaim: Bool = false
    ) async -> Bool {
        do {
            try await file.synchronizeOffPool()
        } catch {
            logger.warning("cannot sync the cache file", metadata: ["key": "\(key)", "error": "\(error)"])
            return false
        }
        guard let toRecord = machine.synced(batch, generation: generation) else { return false }
        let id = record.id
        let length = machine.info.length
        let blocks = BlockChecksums.completed(by: toRecord, recorded: machine.recorded.union(toRecord), length: length)
        // Blocks the fetches wrote whole were summed as they wrote them; the rest are read back.
        var checksums = fetchedSums.take(blocks, generation: generation)
        let unsummed = blocks.filter { checksums[$0] == nil }
        checksums.merge(await BlockChecksums.compute(unsummed, in: file, length: length)) { summed, _ in summed }
        do {
            let recorded = try await index.addRanges(
                toRecord,
                to: id,
                advancing: fetch,
                to: endingClaim ? nil : toRecord.ranges.last?.upperBound ?? 0,
                owner: environment.mark.token,
                checksums: checksums,
                fileState: file.state()
            )
            machine.recorded(toRecord, generation: generation)
            return recorded && endingClaim
        } catch {
            logger.warning("cannot record fetched ranges", metadata: ["key": "\(key)", "error": "\(error)"])
            return false
        }
    }
}
