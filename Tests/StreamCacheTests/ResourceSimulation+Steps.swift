import Foundation
import Testing

@testable import StreamCache

/// The events of a ``ResourceSimulation``: each a random thing that happens to a resource, fed
/// to the machine, its actions carried out on the model, and the rules checked.
extension ResourceSimulation {
    /// Runs one random life: `events` random steps, then a calm origin until every reader is done.
    ///
    /// - Returns: `false` after the first broken rule (already recorded as an issue).
    mutating func run(events: Int) -> Bool {
        for _ in 0..<events {
            guard step() else { return false }
        }
        draining = true
        for _ in 0..<20_000 {
            if readers.allSatisfy(\.done) && fetches.isEmpty && syncs.isEmpty && pendingValidation == nil { break }
            guard step() else { return false }
        }
        if let stuck = readers.first(where: { !$0.done }) {
            return fail("reader \(stuck.id) at \(stuck.position) never finished")
        }
        return checkCachedBytes()
    }

    /// One random event, then the checks.
    mutating func step() -> Bool {
        steps += 1
        now = now.advanced(by: .milliseconds(Int64(random.chance(0.3) ? 0 : Int.random(in: 0...400, using: &random))))
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<8 where !draining && readers.filter({ !$0.done }).count < 6: addReader()
        case 0..<30: readerStep()
        case 30..<33 where !draining: readerLeaves()
        case 33..<45: answerFetch()
        case 45..<72: bodyChunk()
        case 72..<84: completeSync()
        case 84..<88: answerValidation()
        case 88..<89 where !draining: originChanges()
        case 89..<90 where !draining: crash()
        case 90..<92 where !draining: anotherProcessClaims()
        case 92..<96: anotherProcessProgresses()
        case 96..<97 where !draining: anotherProcessDies()
        case 97..<98 where !draining: anotherProcessStoresNewVersion()
        default: readerStep()
        }
        return !broken && check()
    }

    // MARK: Readers

    mutating func addReader() {
        let length = originBytes.count
        let start = Int64.random(in: 0...Int64(length), using: &random)
        let end: Int64? = random.chance(0.4) ? nil : start + Int64.random(in: 1...1500, using: &random)
        // Some read ahead, as a download's second connection on a file does.
        let readsAhead = random.chance(0.2)
        let id = machine.addReader(offset: start, end: end, readsAhead: readsAhead)
        readers.append(SimReader(id: id, position: start, end: end))
        note("reader \(id) comes for \(start)..<\(end.map(String.init) ?? "end")\(readsAhead ? ", reading ahead" : "")")
    }

    mutating func readerLeaves() {
        let active = readers.indices.filter { !readers[$0].done }
        guard let index = active.randomElement(using: &random) else { return }
        readers[index].done = true
        let reader = readers[index]
        removeReader(reader.id)
        note("reader \(reader.id) leaves at \(reader.position)")
    }

    mutating func readerStep() {
        let active = readers.indices.filter { !readers[$0].done }
        guard let index = active.randomElement(using: &random) else { return }
        adoptVersionIfReplaced()
        var reader = readers[index]
        defer { readers[index] = reader }
        let action = machine.read(reader.id, at: reader.position, now: now)
        switch action {
        case .deliver(let range, _):
            originBytesCharged += machine.takeCharge(reader.id)
            guard range.lowerBound == reader.position, !range.isEmpty else {
                fail("reader \(reader.id) at \(reader.position) was handed \(range)")
                return
            }
            let take = Int64.random(in: 1...range.count, using: &random)
            let file = files[recordOfGeneration[machine.generation]!]!
            for offset in reader.position..<reader.position + take {
                let version = Int(offset) < file.version.count ? file.version[Int(offset)] : -1
                guard version >= 0, file.bytes[Int(offset)] == versions[version][Int(offset)] else {
                    fail("reader \(reader.id) got a wrong byte at \(offset) (version \(version))")
                    return
                }
                if let seen = reader.version, seen != version {
                    fail("reader \(reader.id) got version \(version) at \(offset) after version \(seen)")
                    return
                }
                reader.version = version
            }
            note(
                "reader \(reader.id) reads \(reader.position)..<\(reader.position + take) of version \(reader.version ?? -1)"
            )
            reader.position += take
        case .end:
            originBytesCharged += machine.takeCharge(reader.id)
            let length = machine.info.length ?? Int64.max
            // Past the end of a version that turned out shorter, or exactly at the end.
            if reader.position < min(reader.end ?? Int64.max, length) {
                fail(
                    "reader \(reader.id) ended at \(reader.position), its end \(String(describing: reader.end)), length \(length)"
                )
            }
            reader.done = true
            removeReader(reader.id)
        case .fail(let error):
            note("reader \(reader.id) fails: \(error.message)")
            reader.done = true
            reader.failed = true
            removeReader(reader.id)
        case .passThrough:
            fail("reader \(reader.id) was told to read past the cache, of a response that may be stored")
        case .cancelled:
            fail("reader \(reader.id) was forgotten while it reads")
        case .wait, .waitForStream:
            break
        case .startFetch(let request):
            note(
                "reader \(reader.id) at \(reader.position) starts fetch \(request.fetch) of \(request.first)...\(request.last.map(String.init) ?? "")"
            )
            checkNewRequest(request, wantedBy: reader.position)
            fetches[request.fetch] = SimFetch(
                id: request.fetch,
                request: nil,
                record: recordOfGeneration[machine.generation]!
            )
            if let claimed = claimForUs(request) {
                fetches[request.fetch]?.request = claimed
            } else {
                endFetch(request.fetch, error: nil)
            }
        case .validate(let info, _):
            note("reader \(reader.id) validates \(info.etag ?? "")")
            pendingValidation = info
        case .checkInBackground:
            fail("reader \(reader.id) read on past the freshness of a response without stale-while-revalidate")
        case .refresh(let generation), .awaitOtherProcess(let generation):
            machine.refreshed(sharedState(forGeneration: generation), generation: generation, now: now)
        }
    }

    /// A new request asks for no byte that is written or being written.
    mutating func checkNewRequest(_ request: ResourceStateMachine.FetchRequest, wantedBy position: Int64?) {
        let asked = ByteRange(request.first, request.last.map { $0 + 1 } ?? request.first + 1)
        if machine.written.intersects(ByteRangeSet([asked])) || machine.writing.intersects(ByteRangeSet([asked])) {
            fail("fetch \(request.fetch) asks for \(asked), some of which is written or being written")
        }
        if let last = request.last, last < request.first {
            fail("fetch \(request.fetch) asks for an empty range \(request.first)...\(last)")
        }
    }

    // MARK: The origin

    mutating func answerFetch() {
        let waiting = fetches.values.filter { $0.request != nil && $0.body == nil && !$0.ending }.map(\.id).sorted()
        guard let id = waiting.randomElement(using: &random), let request = fetches[id]?.request else { return }
        let version = originVersion
        let length = Int64(versions[version].count)
        let info = originInfo(version)
        if !draining && random.chance(0.08) {
            note("fetch \(id): connection refused")
            endFetch(id, error: StreamCacheError(.originUnreachable, "connection refused"))
            return
        }
        let answer: OriginAnswer
        var body: (version: Int, position: Int64, end: Int64)?
        let ignoresRange = !draining && random.chance(0.1)
        if request.first >= length && !ignoresRange {
            answer = .endOfResource(total: length, info: info)
        } else if ignoresRange || (request.ifRange != nil && request.ifRange != info.etag) {
            var whole = info
            whole.byteRangeAccess = false
            answer = .full(info: whole)
            body = (version, 0, length)
        } else {
            let last = min(request.last ?? (length - 1), length - 1)
            answer = .partial(range: ByteRange(request.first, last + 1), info: info)
            body = (version, request.first, last + 1)
        }
        note("fetch \(id) answered \(answer)")
        let action = machine.answered(id, answer, sentIfRange: request.ifRange != nil, now: now)
        if let newInfo = action.replaceVersion {
            replaceVersion(newInfo, cancel: action.cancel)
        } else if let store = action.store {
            indexInfo = store
        }
        fetches[id]?.request = nil
        fetches[id]?.record = recordOfGeneration[machine.generation]!
        var isWhole = false
        if case .full = answer { isWhole = true }
        if action.readBody, let body, !isWhole || claimRestForUs(id) {
            fetches[id]?.body = body
        } else {
            endFetch(id, error: nil)
        }
    }

    mutating func bodyChunk() {
        let receiving = fetches.values.filter { $0.body != nil && !$0.ending }.map(\.id).sorted()
        guard let id = receiving.randomElement(using: &random), var fetch = fetches[id], let body = fetch.body else {
            return
        }
        if !draining && random.chance(0.03) {
            note("fetch \(id): connection reset at \(body.position)")
            endFetch(id, error: StreamCacheError(.originUnreachable, "connection reset"))
            return
        }
        if body.position >= body.end || (!draining && random.chance(0.02)) {
            note("fetch \(id): body ends at \(body.position) of \(body.end)")
            switch machine.bodyEnded(id) {
            case .request(let next):
                checkNewRequest(next, wantedBy: nil)
                let wanted = readers.contains { !$0.done && ($0.end ?? Int64.max) > next.first }
                if !wanted { fail("fetch \(id) asks for \(next.first)... with no reader wanting it") }
                fetch.body = nil
                fetches[id] = fetch
                if let claimed = claimForUs(next) {
                    fetches[id]?.request = claimed
                } else {
                    endFetch(id, error: nil)
                }
            case .finish(let store):
                if let store { indexInfo = store }
                endFetch(id, error: nil)
            case .fail(let error):
                endFetch(id, error: error)
            }
            return
        }
        let count = Int(min(Int64.random(in: 1...300, using: &random), body.end - body.position))
        originBytesSent += Int64(count)
        switch machine.received(id, count: count, now: now) {
        case .stop:
            endFetch(id, error: nil)
        case .fail(let error):
            endFetch(id, error: error)
        case .write(let pieces, let endsFetch):
            for piece in pieces {
                let source = body.position + Int64(piece.skip)
                if source != piece.offset {
                    fail("fetch \(id) writes body byte \(source) at offset \(piece.offset)")
                    return
                }
                var file = files[fetch.record]!
                file.grow(to: versions[body.version].count)
                let range = ByteRange(piece.offset, piece.offset + Int64(piece.count))
                if file.fetched.intersects(ByteRangeSet([range]))
                    || file.foreignWritten.intersects(ByteRangeSet([range]))
                {
                    fail("fetch \(id) writes \(range), some of which a fetch wrote already")
                    return
                }
                file.fetched.insert(range)
                for index in 0..<piece.count {
                    file.version[Int(piece.offset) + index] = body.version
                    file.bytes[Int(piece.offset) + index] = versions[body.version][Int(source) + index]
                }
                files[fetch.record] = file
            }
            if !pieces.isEmpty, let batch = machine.wrote(id, now: now) {
                syncs.append(
                    PendingSync(fetch: nil, of: id, batch: batch, generation: machine.generation, record: fetch.record)
                )
            }
            fetch.body!.position += Int64(count)
            fetches[id] = fetch
            if endsFetch { endFetch(id, error: nil) }
        }
    }

    /// Forgets a reader; fetches the machine gives up with it are cancelled before any answer.
    mutating func removeReader(_ id: Int) {
        for fetch in machine.removeReader(id) {
            note("fetch \(fetch) cancelled before its answer")
            fetches[fetch]?.request = nil
            endFetch(fetch, error: nil)
        }
    }

    /// Ends a fetch; its last batch is synced (a later step), then the fetch is removed.
    mutating func endFetch(_ id: Int, error: StreamCacheError?) {
        guard var fetch = fetches[id] else { return }
        fetch.ending = true
        fetches[id] = fetch
        let generation = machine.fetches[id]?.generation ?? -1
        if let batch = machine.endFetch(id, error: error) {
            syncs.append(PendingSync(fetch: id, of: id, batch: batch, generation: generation, record: fetch.record))
        } else {
            machine.removeFetch(id)
            fetches[id] = nil
            if !syncs.contains(where: { $0.of == id }) { releaseOurClaim(id) }
        }
    }

    mutating func completeSync() {
        guard !syncs.isEmpty else { return }
        let index = Int.random(in: 0..<syncs.count, using: &random)
        var sync = syncs[index]
        if let toRecord = sync.toRecord {
            if sync.record == currentRecord {
                indexRanges = indexRanges.union(toRecord)
                machine.recorded(toRecord, generation: sync.generation)
            }
        } else {
            durable[sync.record, default: ByteRangeSet()] = durable[sync.record, default: ByteRangeSet()].union(
                sync.batch
            )
            sync.toRecord = machine.synced(sync.batch, generation: sync.generation)
            if sync.toRecord != nil {
                syncs[index] = sync
                return
            }
        }
        syncs.remove(at: index)
        if let fetch = sync.fetch {
            machine.removeFetch(fetch)
            fetches[fetch] = nil
        }
        // A claim ends once every batch of its fetch is recorded (the session awaits them all).
        if let fetch = sync.of, fetches[fetch] == nil, !syncs.contains(where: { $0.of == fetch }) {
            releaseOurClaim(fetch)
        }
    }

    mutating func answerValidation() {
        guard let known = pendingValidation else { return }
        pendingValidation = nil
        let current = originInfo(originVersion)
        let result: ResourceStateMachine.Validation =
            !draining && random.chance(0.1)
            ? .unreachable(StreamCacheError(.originUnreachable, "offline"))
            : (known.match(current) == .same ? .current(nil, proven: true) : .changed(current))
        note("validation of \(known.etag ?? ""): \(result)")
        if let (newInfo, cancel) = machine.validated(result, now: now) {
            replaceVersion(newInfo, cancel: cancel)
        }
    }

    /// The origin's content changes: new bytes, a new ETag, sometimes a new length.
    mutating func originChanges() {
        let length = random.chance(0.5) ? originBytes.count : Int.random(in: 1...3000, using: &random)
        versions.append(Self.content(length: length, random: &random))
        let version = versions.count - 1
        originVersion = version
        note("origin now serves version \(version), \(length) bytes")
    }

    /// The session carries out a version change: a new index row and data file.
    mutating func replaceVersion(_ newInfo: ContentInfo, cancel: [Int]) {
        let record = (files.keys.max() ?? 0) + 1
        files[record] = DataFile(length: Int(newInfo.length ?? 0))
        currentRecord = record
        recordOfGeneration[machine.generation] = record
        indexInfo = newInfo
        indexRanges = ByteRangeSet()
        // The old row goes with its claims; fetches of the old version record nothing more.
        let ours = claims.filter { $0.owner == 0 && !cancel.contains($0.fetch) && fetches[$0.fetch] != nil }
        claims = ours
        note("version replaced by \(newInfo.etag ?? ""), record \(record); cancelling \(cancel)")
        machine.versionReplaced(now: now)
        for id in cancel where fetches[id] != nil { endFetch(id, error: nil) }
    }

    /// The process dies: readers, fetches and syncs are gone, bytes that were not durable may be
    /// anything; a new process opens the resource from the index.
    mutating func crash() {
        note("crash")
        var file = files[currentRecord]!
        let kept = durable[currentRecord] ?? ByteRangeSet()
        for offset in 0..<file.version.count where file.version[offset] != -1 && !kept.contains(Int64(offset)) {
            file.version[offset] = -2
            file.bytes[offset] = UInt8.random(in: 0...255, using: &random)
        }
        file.fetched = ByteRangeSet()
        files[currentRecord] = file
        // Its claims stay in the index; its owner is found gone.
        claims.removeAll { $0.owner == 0 }
        readers = []
        fetches = [:]
        syncs = []
        originBytesSent = 0
        originBytesCharged = 0
        pendingValidation = nil
        recordOfGeneration = [0: currentRecord]
        machine = ResourceStateMachine(
            info: indexInfo,
            recorded: indexRanges,
            freshUntil: random.chance(0.5) ? now.advanced(by: settings.revalidationInterval) : nil,
            now: now,
            settings: settings
        )
    }

    // MARK: Rules

    /// The rules after every event.
    mutating func check() -> Bool {
        let broken = machine.invariantViolations()
        if !broken.isEmpty { return fail("invariant: " + broken.joined(separator: "; ")) }
        if !indexRanges.isSubset(of: durable[currentRecord] ?? ByteRangeSet()) {
            return fail("the index holds \(indexRanges), more than is durable")
        }
        // Every body byte the origin sent is charged once: to a reader, or to nobody when none was left.
        let pending = machine.readers.values.reduce(0) { $0 + $1.charged }
        if originBytesSent != originBytesCharged + pending + machine.unattributed {
            return fail(
                "the origin sent \(originBytesSent) body bytes; charged \(originBytesCharged), pending \(pending), to nobody \(machine.unattributed)"
            )
        }
        // Each write is checked as it happens; the whole cache now and then and at the end.
        return steps % 50 == 0 ? checkCachedBytes() : true
    }

    /// The cache never holds a wrong byte: what is written or recorded is all one version's.
    mutating func checkCachedBytes() -> Bool {
        guard let record = recordOfGeneration[machine.generation], let file = files[record] else { return true }
        let cached = machine.written.union(record == currentRecord ? indexRanges : ByteRangeSet())
        var version: Int?
        for range in cached.ranges {
            var index = Int(range.lowerBound)
            while index < Int(range.upperBound) {
                let byteVersion = index < file.version.count ? file.version[index] : -1
                guard byteVersion >= 0, file.bytes[index] == versions[byteVersion][index] else {
                    return fail("the cache holds a wrong byte at \(index)")
                }
                if let version, version != byteVersion {
                    return fail("the cache mixes versions \(version) and \(byteVersion)")
                }
                version = byteVersion
                index += 1
            }
        }
        return true
    }
}
