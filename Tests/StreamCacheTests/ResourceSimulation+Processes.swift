import Foundation
import Testing

@testable import StreamCache

/// Other processes sharing the cache directory: each claims bytes of the current version in the
/// index (as ``CacheIndex/claim`` does, seeing every claim), writes and records them at its own
/// pace, streams whole bodies, stores a new version, ends, or dies with its claims left behind.
/// The rule they check: no byte is written by two processes (nor twice by one).
extension ResourceSimulation {
    /// A claim in the index: of this process's fetch `fetch`, or of another process.
    struct SimClaim {
        /// `0`: this process; others count from 1.
        let owner: Int
        let fetch: Int
        var start: Int64
        /// `nil`: to the end (a whole-body stream).
        var end: Int64?
        /// Where the other process writes next.
        var next: Int64
        var alive = true

        var range: ByteRange { ByteRange(start, end ?? Int64.max) }
    }

    /// What the index says of the current record now, as ``CacheIndex/sharedState(of:rules:)``
    /// says it to this process; nothing if the machine's record is not the current one.
    func sharedState(forGeneration generation: Int) -> ResourceStateMachine.Shared {
        guard recordOfGeneration[generation] == currentRecord else { return .init(recorded: ByteRangeSet()) }
        var shared = ResourceStateMachine.Shared(recorded: indexRanges)
        for claim in claims where claim.owner != 0 && claim.alive {
            if let end = claim.end {
                if claim.start < end { shared.foreign.insert(ByteRange(claim.start, end)) }
            } else {
                shared.foreignStream = min(shared.foreignStream ?? claim.start, claim.start)
            }
        }
        return shared
    }

    /// Every byte of the current record recorded or claimed by a live process other than `owner`
    /// (`nil`: by any), leaving out the claim of fetch `fetch` of `owner`.
    func taken(byOthersThan owner: Int?, except fetch: Int? = nil) -> ByteRangeSet {
        var taken = indexRanges
        for claim in claims where claim.owner != owner && claim.alive { taken.insert(claim.range) }
        if let owner, fetch != nil {
            for claim in claims where claim.owner == owner && claim.fetch != fetch && claim.alive {
                taken.insert(claim.range)
            }
        }
        return taken
    }

    /// This process's fetch claims the bytes of `request` before sending it.
    ///
    /// - Returns: the request to send, or `nil`: the fetch ends.
    mutating func claimForUs(_ request: ResourceStateMachine.FetchRequest) -> ResourceStateMachine.FetchRequest? {
        let generation = machine.generation
        let claim: ResourceStateMachine.Claim
        if recordOfGeneration[generation] != currentRecord {
            // The row is gone: nobody claims it any more.
            claim = .granted(last: request.last)
        } else {
            let taken = taken(byOthersThan: 0)
            if taken.contains(request.first) {
                claim = .refused
            } else {
                var end = request.last.map { $0 + 1 } ?? Int64.max
                if let next = taken.firstOffset(atOrAfter: request.first) { end = min(end, next) }
                claim = .granted(last: end == Int64.max ? nil : end - 1)
            }
        }
        let shared = sharedState(forGeneration: generation)
        guard let granted = machine.claimed(request.fetch, claim, shared: shared, generation: generation, now: now)
        else {
            note("fetch \(request.fetch): claim of \(request.first)... refused (\(claim))")
            return nil
        }
        let end = granted.last.map { $0 + 1 }
        // The claim grows from the fetch's earlier one, whose bytes may not be recorded yet.
        let earlier = claims.first { $0.owner == 0 && $0.fetch == request.fetch }?.start
        claims.removeAll { $0.owner == 0 && $0.fetch == request.fetch }
        let start = min(earlier ?? granted.first, granted.first)
        claims.append(SimClaim(owner: 0, fetch: request.fetch, start: start, end: end, next: granted.first))
        note("fetch \(request.fetch) claims \(granted.first)..<\(end.map(String.init) ?? "end")")
        return granted
    }

    /// This process's fetch `id` got a whole body: it claims the rest, unless another streams it.
    ///
    /// - Returns: whether it reads the body.
    mutating func claimRestForUs(_ id: Int) -> Bool {
        let generation = machine.generation
        claims.removeAll { $0.owner == 0 && $0.fetch == id }
        let shared = sharedState(forGeneration: generation)
        if recordOfGeneration[generation] == currentRecord {
            claims.append(SimClaim(owner: 0, fetch: id, start: 0, end: nil, next: 0))
        }
        let reads = machine.claimedRest(id, shared: shared, generation: generation, now: now)
        note("fetch \(id) claims everything; \(reads ? "streams" : "leaves it to another process")")
        return reads
    }

    /// This process's fetch `id` is gone: its claim ends.
    mutating func releaseOurClaim(_ id: Int) {
        claims.removeAll { $0.owner == 0 && $0.fetch == id }
    }

    /// Whether another process may work on the current version (it fetched the version the
    /// index holds, and the origin still serves it).
    var otherProcessMayFetch: Bool {
        guard let etag = indexInfo.etag, etag == originInfo(originVersion).etag, let length = indexInfo.length else {
            return false
        }
        return length > 0
    }

    /// Another process claims a range (or, its origin ignoring `Range`, everything from a byte on).
    mutating func anotherProcessClaims() {
        guard otherProcessMayFetch, let length = indexInfo.length else { return }
        let start = Int64.random(in: 0..<length, using: &random)
        let owner = Int.random(in: 1...3, using: &random)
        // A process's own fetches never ask for the same bytes either.
        let taken = taken(byOthersThan: nil)
        guard !taken.contains(start) else { return }
        lastForeignFetch += 1
        if random.chance(0.15) {
            // A whole body: its claim to the end is made only where no claim to the end is live.
            guard !claims.contains(where: { $0.alive && $0.end == nil }) else { return }
            claims.append(SimClaim(owner: owner, fetch: lastForeignFetch, start: start, end: nil, next: start))
            note("process \(owner) streams from \(start)")
            return
        }
        var end = min(length, start + Int64.random(in: 1...600, using: &random))
        if let next = taken.firstOffset(atOrAfter: start) { end = min(end, next) }
        claims.append(SimClaim(owner: owner, fetch: lastForeignFetch, start: start, end: end, next: start))
        note("process \(owner) claims \(start)..<\(end)")
    }

    /// Another process writes, syncs and records the next bytes of one of its claims, and moves
    /// the claim on; a stream skips what others claimed or recorded.
    mutating func anotherProcessProgresses() {
        let live = claims.indices.filter { claims[$0].owner != 0 && claims[$0].alive }
        guard let index = live.randomElement(using: &random) else { return }
        guard otherProcessMayFetch, let length = indexInfo.length else {
            // It saw the version change: its fetch ends.
            let ended = claims[index]
            note("process \(ended.owner) ends fetch \(ended.fetch): the version changed")
            claims.remove(at: index)
            return
        }
        var claim = claims[index]
        let end = min(claim.end ?? length, length)
        guard claim.next < end else {
            note("process \(claim.owner) ends fetch \(claim.fetch)")
            claims.remove(at: index)
            return
        }
        let chunk = ByteRange(claim.next, min(end, claim.next + Int64.random(in: 1...200, using: &random)))
        var pieces = [chunk]
        if claim.end == nil {
            let others = taken(byOthersThan: claim.owner, except: claim.fetch)
            pieces = others.gaps(in: chunk)
        }
        var file = files[currentRecord]!
        file.grow(to: Int(length))
        for piece in pieces {
            if file.fetched.intersects(ByteRangeSet([piece])) || file.foreignWritten.intersects(ByteRangeSet([piece])) {
                fail("process \(claim.owner) writes \(piece), some of which a process wrote already")
                return
            }
            file.foreignWritten.insert(piece)
            for offset in piece.lowerBound..<piece.upperBound {
                file.version[Int(offset)] = originVersion
                file.bytes[Int(offset)] = originBytes[Int(offset)]
            }
            durable[currentRecord, default: ByteRangeSet()].insert(piece)
            indexRanges.insert(piece)
        }
        files[currentRecord] = file
        claim.next = chunk.upperBound
        claim.start = chunk.upperBound
        claims[index] = claim
        note("process \(claim.owner) records \(pieces) of fetch \(claim.fetch)")
    }

    /// Another process dies: its claims stay in the index, and are found dead.
    mutating func anotherProcessDies() {
        let owners = Set(claims.filter { $0.owner != 0 && $0.alive }.map(\.owner))
        guard let owner = owners.sorted().randomElement(using: &random) else { return }
        for index in claims.indices where claims[index].owner == owner { claims[index].alive = false }
        note("process \(owner) dies")
    }

    /// Another process found the origin changed and stored the new version: a new record with
    /// nothing recorded; this process's file of the old one is unlinked.
    mutating func anotherProcessStoresNewVersion() {
        guard let known = indexInfo.etag, known != originInfo(originVersion).etag else { return }
        let record = (files.keys.max() ?? 0) + 1
        files[record] = DataFile(length: originBytes.count)
        currentRecord = record
        indexInfo = originInfo(originVersion)
        indexRanges = ByteRangeSet()
        claims.removeAll()
        let version = originVersion
        note("another process stores version \(version) as record \(record)")
    }

    /// The session sees its file unlinked and moves to the version the index holds.
    mutating func adoptVersionIfReplaced() {
        guard machine.phase == .ready, recordOfGeneration[machine.generation] != currentRecord,
            !recordOfGeneration.values.contains(currentRecord)
        else { return }
        let record = currentRecord
        note("adopting record \(record)")
        let cancel = machine.replaceVersion(with: indexInfo, survivor: nil)
        recordOfGeneration[machine.generation] = currentRecord
        machine.versionReplaced(now: now)
        machine.refreshed(sharedState(forGeneration: machine.generation), generation: machine.generation, now: now)
        for id in cancel where fetches[id] != nil { endFetch(id, error: nil) }
    }
}
