import Foundation
import GRDB

/// Claims: which bytes of a resource a fetch of which engine has asked its origin for.
///
/// Processes sharing a cache directory fetch each byte once because a fetch claims the bytes of
/// a request in the index before sending it, in one immediate transaction that sees every other
/// engine's claims: bytes another live engine claimed or that are recorded are not asked for
/// again, and readers wait for them instead. A claim ends with its fetch, when its engine is found
/// gone (``ProcessMark``), or when it has shown no progress for ``ClaimRules/staleAfter``.
///
/// A claim of no bytes, `start == end`, of fetch ``wantFetch`` is a want: a reader of its engine
/// waits for another engine's whole-body stream (an origin that ignores `Range`) to bring bytes
/// from `start` on. The engine that streams reads its body on while a want stands
/// (``ClaimRules/wantStandsFor``), rather than hold it for readers of its own only and end it:
/// the waiting engine would then ask the origin, which sends every byte from the first again.
extension CacheIndex {
    /// The fetch number of a want: none of a real fetch, which count from 1.
    static let wantFetch = -1

    /// Who claims, and how another engine's claims are judged alive.
    package struct ClaimRules: Sendable {
        /// The token of the claiming engine.
        package let owner: String
        /// Whether the engine with a token still runs.
        package let isAlive: @Sendable (String) -> Bool
        /// A claim without progress (a recorded batch) for this long is given up.
        package let staleAfter: TimeInterval
        /// How long another engine's want stands after it was last said (its engine says it
        /// again while its reader waits).
        package let wantStandsFor: TimeInterval

        package init(
            owner: String,
            isAlive: @escaping @Sendable (String) -> Bool,
            staleAfter: TimeInterval,
            wantStandsFor: TimeInterval = 2
        ) {
            self.owner = owner
            self.isAlive = isAlive
            self.staleAfter = staleAfter
            self.wantStandsFor = wantStandsFor
        }
    }

    /// What the index says about a resource's bytes: what is recorded, what other engines claimed.
    package struct SharedState: Sendable, Equatable {
        /// Whether the resource's row still exists (another process may have replaced or removed it).
        package var exists: Bool
        package var recorded: ByteRangeSet
        /// The bytes live bounded claims of other engines cover.
        package var foreign: ByteRangeSet
        /// Where the first live claim to the end of another engine starts (a fetch whose origin
        /// sends whole bodies), if there is one.
        package var foreignStream: Int64?
        /// Whether a reader of another engine waits for a whole-body stream of the resource (a
        /// want that stands).
        package var othersWantStream = false
        /// What the row says of the resource once an origin's answer head is stored in it (its
        /// length is known), when asked for (`withHead`); `nil` otherwise. A session that opened
        /// the row before another process stored the head learns the length here rather than
        /// asking the origin past the end.
        package var info: ContentInfo?
    }

    /// Claims `first...last` (`last == nil`: to the end) of resource `id` for fetch `fetch`, cut
    /// short before the first byte another engine claimed or the index recorded. The claim grows
    /// from the fetch's earlier one (whose bytes may not be recorded yet); its start moves on only
    /// as its bytes are recorded (``addRanges(_:to:advancing:to:owner:checksums:fileState:)``).
    ///
    /// With `withHead`, the state holds the row's answer head once one is stored (a caller that
    /// knows no length yet).
    ///
    /// - Returns: the last byte granted (`.some(nil)`: to the end), or `nil` if `first` itself is
    ///   claimed or recorded; and the state the decision saw.
    package func claim(
        resource id: Int64,
        fetch: Int,
        first: Int64,
        last: Int64?,
        rules: ClaimRules,
        withHead: Bool = true
    ) async throws -> (granted: Int64??, state: SharedState) {
        try await write { db in
            let state = try Self.sharedState(db, resource: id, rules: rules, pruning: true, withHead: withHead)
            // A removed or replaced row: nobody can claim or record its bytes any more, so the
            // fetch goes on as asked (it records nothing; its readers are served).
            guard state.exists else { return (.some(last), state) }
            var taken = state.recorded.union(state.foreign)
            if let stream = state.foreignStream { taken.insert(ByteRange(stream, Int64.max)) }
            // Refused, the fetch's claim stays as it is: it covers bytes of its earlier requests
            // that are written and not yet recorded, until the fetch ends.
            guard !taken.contains(first) else { return (nil, state) }
            var end = last.map { $0 + 1 }
            if let next = taken.firstOffset(atOrAfter: first) { end = min(end ?? Int64.max, next) }
            // From where the fetch's last claim starts: its bytes may not be recorded yet.
            let earlier = try Int64.fetchOne(
                db.cachedStatement(
                    sql: "SELECT start FROM fetchClaim WHERE resourceId = ? AND owner = ? AND fetch = ?"
                ),
                arguments: [id, rules.owner, fetch]
            )
            let start = min(earlier ?? first, first)
            try Self.storeClaim(db, resource: id, fetch: fetch, start: start, end: end, owner: rules.owner)
            return (.some(end.map { $0 - 1 }), state)
        }
    }

    /// Widens the claim of fetch `fetch` to every byte from `first` to the end: its origin sends
    /// the whole body, and it keeps what no other engine claimed.
    ///
    /// - Returns: the state the change saw.
    package func claimRest(
        resource id: Int64,
        fetch: Int,
        from first: Int64,
        rules: ClaimRules
    ) async throws
        -> SharedState
    {
        try await write { db in
            // Asked by a fetch that has its own answer's head.
            let state = try Self.sharedState(db, resource: id, rules: rules, pruning: true, withHead: false)
            if state.exists {
                try Self.storeClaim(db, resource: id, fetch: fetch, start: first, end: nil, owner: rules.owner)
            }
            return state
        }
    }

    /// Says that a reader of engine `owner` waits for another engine's whole-body stream of
    /// resource `id` to bring byte `position`: a want, which stands for
    /// ``ClaimRules/wantStandsFor`` unless said again.
    package func want(resource id: Int64, from position: Int64, owner: String) async throws {
        try await write { db in
            guard try Self.exists(db, id: id) else { return }
            try Self.storeClaim(db, resource: id, fetch: Self.wantFetch, start: position, end: position, owner: owner)
        }
    }

    /// Ends the claim of fetch `fetch` of engine `owner` on resource `id`.
    package func releaseClaim(resource id: Int64, owner: String, fetch: Int) async throws {
        try await write { db in try Self.releaseClaim(db, resource: id, owner: owner, fetch: fetch) }
    }

    /// Ends every claim of engine `owner`.
    package func releaseClaims(owner: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM fetchClaim WHERE owner = ?", arguments: [owner])
        }
    }

    /// What resource `id` holds and what other engines claim of it now; with `withHead`, the
    /// row's answer head once one is stored.
    package func sharedState(of id: Int64, rules: ClaimRules, withHead: Bool) async throws -> SharedState {
        try await read { db in
            try Self.sharedState(db, resource: id, rules: rules, pruning: false, withHead: withHead)
        }
    }

    /// Adds `ranges` (already durable) to resource `id`, with the checksums of the blocks they
    /// complete and the data file's state after them, and moves the claim of fetch `fetch` on to
    /// `next` (`nil`: ends it, the fetch's last bytes), in one transaction.
    ///
    /// - Returns: `false` if the resource no longer exists; then nothing is recorded.
    @discardableResult
    package func addRanges(
        _ ranges: ByteRangeSet,
        to id: Int64,
        advancing fetch: Int,
        to next: Int64?,
        owner: String,
        checksums: [Int64: UInt64] = [:],
        fileState: DataFileState? = nil
    )
        async throws -> Bool
    {
        try await write { db in
            guard try Self.exists(db, id: id) else { return false }
            if !ranges.isEmpty {
                try Self.storeRanges(db, id: id, ranges: try Self.fetchRanges(db, id: id).union(ranges))
            }
            try Self.storeChecksums(db, id: id, checksums)
            if let fileState { try Self.storeFileState(db, id: id, fileState) }
            if let next {
                try Self.run(
                    db,
                    """
                    UPDATE fetchClaim SET start = MAX(start, ?), heartbeat = ?
                    WHERE resourceId = ? AND owner = ? AND fetch = ?
                    """,
                    [next, Date().timeIntervalSince1970, id, owner, fetch]
                )
            } else {
                try Self.releaseClaim(db, resource: id, owner: owner, fetch: fetch)
            }
            return true
        }
    }

    private static func releaseClaim(_ db: Database, resource id: Int64, owner: String, fetch: Int) throws {
        try run(db, "DELETE FROM fetchClaim WHERE resourceId = ? AND owner = ? AND fetch = ?", [id, owner, fetch])
    }

    private static func storeClaim(
        _ db: Database,
        resource id: Int64,
        fetch: Int,
        start: Int64,
        end: Int64?,
        owner: String
    ) throws {
        try run(
            db,
            """
            INSERT OR REPLACE INTO fetchClaim (resourceId, owner, fetch, start, "end", heartbeat)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [id, owner, fetch, start, end, Date().timeIntervalSince1970]
        )
    }

    /// The recorded ranges and other engines' live claims of resource `id`, and with `withHead`
    /// its stored answer head; with `pruning`, the claims of engines that are gone, or that made
    /// no progress for too long, are deleted.
    private static func sharedState(
        _ db: Database,
        resource id: Int64,
        rules: ClaimRules,
        pruning: Bool,
        withHead: Bool
    ) throws
        -> SharedState
    {
        guard let length = try length(db, id: id) else {
            return SharedState(exists: false, recorded: ByteRangeSet(), foreign: ByteRangeSet(), foreignStream: nil)
        }
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT owner, fetch, start, \"end\", heartbeat FROM fetchClaim WHERE resourceId = ? AND owner != ?"
            ),
            arguments: [id, rules.owner]
        )
        let now = Date().timeIntervalSince1970
        let oldest = now - rules.staleAfter
        var alive: [String: Bool] = [:]
        var foreign = ByteRangeSet()
        var stream: Int64?
        var othersWantStream = false
        for row in rows {
            guard let owner = row.text(0), let fetch = row.integer(1).map(Int.init) else { continue }
            let heartbeat = row.real(4) ?? 0
            let isAlive = alive[owner] ?? rules.isAlive(owner)
            alive[owner] = isAlive
            guard isAlive, heartbeat >= oldest else {
                if pruning {
                    try releaseClaim(db, resource: id, owner: owner, fetch: fetch)
                }
                continue
            }
            if fetch == Self.wantFetch {
                othersWantStream = othersWantStream || heartbeat >= now - rules.wantStandsFor
                continue
            }
            guard let start = storedLength(row.integer(2)) else { continue }
            if let end = row.integer(3) {
                if let range = storedRange(start, end) { foreign.insert(range) }
            } else {
                stream = min(stream ?? start, start)
            }
        }
        return SharedState(
            exists: true,
            recorded: try fetchRanges(db, id: id),
            foreign: foreign,
            foreignStream: stream,
            othersWantStream: othersWantStream,
            info: withHead && length != nil ? try fetchResource(db, id: id)?.info : nil
        )
    }
}
