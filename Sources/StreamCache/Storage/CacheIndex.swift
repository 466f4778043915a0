import Foundation
import GRDB

#if canImport(GRDBSQLite)
import GRDBSQLite
#elseif canImport(SQLite3)
import SQLite3
#endif

/// The `index.sqlite` of a cache directory: resources, their present byte ranges, their state.
///
/// The index may know less than the data files, never more: ranges are recorded only after their
/// bytes are durable (see ``ResourceSession``). Several processes may share one index; every
/// write is atomic, in an immediate transaction it may share with other writes asked for at the
/// same time (``IndexWrites``), and a busy database is waited for, not failed.
package final class CacheIndex: Sendable {
    private let pool: any DatabaseWriter
    /// Every write, committed in groups.
    private let writes: IndexWrites
    /// ``resourceNow(forKey:)``'s reads, on connections of their own.
    private let lookups: IndexLookups
    /// The stored responses' cookies, which are never written here.
    private let cookieMemory = CookieMemory()

    /// Opens (creating and migrating if needed) the index at `path`.
    ///
    /// - Throws: ``StreamCacheError/Kind/index`` if the database cannot be opened.
    package init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.foreignKeysEnabled = true
        configuration.label = "StreamCache.index"
        configuration.prepareDatabase { db in
            // The WAL files stay when the last process closes the index, so the next one opens
            // it even on a disk too full for new files.
            var persist: Int32 = 1
            sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, &persist)
            #if canImport(Darwin)
            // A commit reaches the drive, not only its cache (see FileSync).
            try db.execute(sql: "PRAGMA fullfsync = ON; PRAGMA checkpoint_fullfsync = ON")
            #endif
        }
        do {
            let pool = try Self.openPool(path: path, configuration: configuration)
            try Self.checkIntegrity(pool)
            try Self.createSchema(pool)
            self.pool = pool
            writes = IndexWrites(pool)
            lookups = IndexLookups(path: path, sql: Self.resourceAndRangesByKey)
            // The index holds the URLs a user fetched: the user's alone, with its WAL files.
            for file in [path, path + "-wal", path + "-shm"] { chmod(file, 0o600) }
        } catch {
            let kind: StreamCacheError.Kind = Self.isDamage(error) ? .damagedIndex : .index
            throw StreamCacheError(kind, "cannot open cache index \(path): \(Self.describe(error))")
        }
    }

    /// Opens the index at `path` for reading only (`ls` on a cache the user may not write).
    ///
    /// - Throws: ``StreamCacheError/Kind/index`` if the database cannot be read.
    package init(readingAt path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        configuration.label = "StreamCache.index"
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try Self.checkIntegrity(queue)
            pool = queue
            writes = IndexWrites(queue)
            lookups = IndexLookups(path: path, sql: Self.resourceAndRangesByKey)
        } catch {
            let kind: StreamCacheError.Kind = Self.isDamage(error) ? .damagedIndex : .index
            throw StreamCacheError(kind, "cannot read cache index \(path): \(Self.describe(error))")
        }
    }

    /// Whether the index has its tables (a process that is creating a new cache directory may
    /// not have made them yet).
    package func hasTables() async throws -> Bool {
        try await read { db in try db.tableExists("resource") }
    }

    /// Opens the pool, waiting out another process that holds the database while it switches a
    /// new index to WAL mode (SQLite reports that as busy without calling the busy handler).
    private static func openPool(path: String, configuration: Configuration) throws -> DatabasePool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError
                where (error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED)
                && ContinuousClock.now < deadline
            {
                usleep(useconds_t.random(in: 5_000...50_000))
            }
        }
    }

    /// Whether `error` says the file is not a database, or a damaged one.
    static func isDamage(_ error: Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode)
    }

    /// Reads every page of the index once (`PRAGMA quick_check`): a truncated or overwritten
    /// index fails here, not at some later query.
    ///
    /// - Throws: `SQLITE_CORRUPT` if the check finds damage.
    private static func checkIntegrity(_ pool: some DatabaseReader) throws {
        let verdict = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check(1)") }
        guard verdict == "ok" else {
            let finding = (verdict ?? "no answer").split(whereSeparator: \.isNewline).joined(separator: " ")
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "damaged (\(finding.prefix(200)))")
        }
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? DatabaseError, [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) {
            // The busy timeout ran out: a process is stopped or hung inside a write.
            return "another process has held it for 30 s (is a streamcache process stopped?)"
        }
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }

    /// The schema version this code writes (`PRAGMA user_version`).
    static let schemaVersion = 8

    /// Brings the schema up to ``schemaVersion`` in one immediate transaction, so processes
    /// opening a new cache directory at the same moment create it once, not race to.
    private static func createSchema(_ pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                guard version < schemaVersion else { return .commit }
                // Version 7: a claim is its resource's, its engine's and its fetch's. Before, it
                // was keyed by engine and fetch alone, and fetch numbers count per resource, so
                // an engine's claim on one resource replaced or ended its claim on another (an
                // HLS download fetching four segments at once let another process fetch them
                // too). Claims only describe fetches in flight: the old table goes.
                let claimKey = try Row.fetchAll(db, sql: "PRAGMA table_info(fetchClaim)")
                    .filter { ($0["pk"] as Int) > 0 }.map { $0["name"] as String }
                if !claimKey.isEmpty, !claimKey.contains("resourceId") {
                    try db.execute(sql: "DROP TABLE fetchClaim")
                }
                // `IF NOT EXISTS`: indexes made before the version was recorded have the tables.
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS resource (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            key TEXT NOT NULL UNIQUE,
                            url TEXT NOT NULL,
                            length INTEGER,
                            contentType TEXT,
                            etag TEXT,
                            lastModified TEXT,
                            byteRangeAccess INTEGER NOT NULL DEFAULT 1,
                            createdAt REAL NOT NULL,
                            lastAccess REAL NOT NULL,
                            pinned INTEGER NOT NULL DEFAULT 0,
                            cachedBytes INTEGER NOT NULL DEFAULT 0
                        );
                        CREATE INDEX IF NOT EXISTS resource_lastAccess ON resource(lastAccess);
                        CREATE TABLE IF NOT EXISTS cachedRange (
                            resourceId INTEGER NOT NULL REFERENCES resource(id) ON DELETE CASCADE,
                            start INTEGER NOT NULL,
                            "end" INTEGER NOT NULL,
                            PRIMARY KEY (resourceId, start)
                        ) WITHOUT ROWID;
                        CREATE TABLE IF NOT EXISTS fetchClaim (
                            resourceId INTEGER NOT NULL REFERENCES resource(id) ON DELETE CASCADE,
                            owner TEXT NOT NULL,
                            fetch INTEGER NOT NULL,
                            start INTEGER NOT NULL,
                            "end" INTEGER,
                            heartbeat REAL NOT NULL,
                            PRIMARY KEY (resourceId, owner, fetch)
                        );
                        CREATE TABLE IF NOT EXISTS blockChecksum (
                            resourceId INTEGER NOT NULL REFERENCES resource(id) ON DELETE CASCADE,
                            block INTEGER NOT NULL,
                            checksum INTEGER NOT NULL,
                            algorithm INTEGER NOT NULL DEFAULT 1,
                            PRIMARY KEY (resourceId, block)
                        ) WITHOUT ROWID;
                        """
                )
                try createTotals(db)
                // Columns later versions added to the resource table of an older index.
                let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(resource)").map { $0["name"] as String })
                let added = [
                    ("storedFields", "TEXT"), ("receivedAt", "REAL"), ("fileSize", "INTEGER"),
                    ("fileModified", "INTEGER"),
                    // Version 8: which values of the parameters a key rule leaves out the bytes
                    // came with, as a digest (``CacheKeyRules/ignoredValuesDigest(of:)``).
                    ("tokenDigest", "TEXT"),
                    // When a prefetch cached the resource's bytes, none of them played since
                    // (``CacheIndex/markPrefetched(key:at:)``); `NULL`: played, or never prefetched.
                    ("prefetched", "REAL"),
                ]
                for (column, type) in added
                where !columns.contains(column) {
                    try db.execute(sql: "ALTER TABLE resource ADD COLUMN \(column) \(type)")
                }
                // Version 8: a variant is recorded as digests of the request fields' values; one
                // recorded before held them in clear (a `Cookie`, an `Authorization`): it goes,
                // and its response is fetched again for the next request.
                if version < 8 {
                    let rows = try Row.fetchAll(
                        db,
                        sql: "SELECT id, storedFields FROM resource WHERE storedFields LIKE '%StreamCache-Variant%'"
                    )
                    for row in rows {
                        let fields = decode(row["storedFields"]).filter { !$0.hasName("StreamCache-Variant") }
                        try db.execute(
                            sql: "UPDATE resource SET storedFields = ? WHERE id = ?",
                            arguments: [encode(fields), row["id"] as Int64]
                        )
                    }
                }
                // Version 6: each checksum names its algorithm; those stored before are serial.
                let sumColumns = try Row.fetchAll(db, sql: "PRAGMA table_info(blockChecksum)").map {
                    $0["name"] as String
                }
                if !sumColumns.contains("algorithm") {
                    try db.execute(sql: "ALTER TABLE blockChecksum ADD COLUMN algorithm INTEGER NOT NULL DEFAULT 1")
                }
                try db.execute(sql: "PRAGMA user_version = \(schemaVersion)")
                return .commit
            }
        }
    }

    /// The cache's total of cached bytes, kept by triggers as rows change (version 5): eviction
    /// asks for it after every session closes, and summing every row each time would cost a
    /// large cache more than serving a segment. Triggers run in SQLite, so every process that writes the index
    /// keeps it, an older `streamcache` too.
    private static func createTotals(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS cacheTotals (
                    id INTEGER PRIMARY KEY CHECK (id = 0),
                    cachedBytes INTEGER NOT NULL
                );
                INSERT OR IGNORE INTO cacheTotals (id, cachedBytes)
                    SELECT 0, COALESCE(SUM(cachedBytes), 0) FROM resource;
                CREATE TRIGGER IF NOT EXISTS resource_added AFTER INSERT ON resource BEGIN
                    UPDATE cacheTotals SET cachedBytes = cachedBytes + NEW.cachedBytes WHERE id = 0;
                END;
                CREATE TRIGGER IF NOT EXISTS resource_removed AFTER DELETE ON resource BEGIN
                    UPDATE cacheTotals SET cachedBytes = cachedBytes - OLD.cachedBytes WHERE id = 0;
                END;
                CREATE TRIGGER IF NOT EXISTS resource_resized AFTER UPDATE OF cachedBytes ON resource BEGIN
                    UPDATE cacheTotals SET cachedBytes = cachedBytes + NEW.cachedBytes - OLD.cachedBytes WHERE id = 0;
                END;
                """
        )
    }

    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await writes.write(body)
        } catch {
            throw Self.writeError(error)
        }
    }

    /// What a failed write says to the engine.
    private static func writeError(_ error: any Error) -> StreamCacheError {
        switch error {
        case let error as StreamCacheError:
            error
        case let error as DatabaseError where error.resultCode == .SQLITE_FULL:
            StreamCacheError(.diskFull, "cache index write failed: \(describe(error))")
        default:
            StreamCacheError(.index, "cache index write failed: \(describe(error))")
        }
    }

    /// Runs `body` in a read transaction on the calling thread.
    ///
    /// Reads of a WAL database never wait for a writer, and those of the index take
    /// microseconds: run where they are asked for, they spare each open two thread switches
    /// (the asynchronous read hops to a reader's queue and back), which cost more than the
    /// read. Writes, which may wait for another process, stay asynchronous.
    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try readOnThisThread(body)
        } catch {
            throw StreamCacheError(.index, "cache index read failed: \(Self.describe(error))")
        }
    }

    /// GRDB's synchronous `read`: from this synchronous function the compiler picks it, where
    /// an `async` caller would get the asynchronous one.
    private func readOnThisThread<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }

    // MARK: Resources

    /// The resource stored under `key`, created (empty, with `url` and the digest of the values
    /// of its parameters the key leaves out) if there is none.
    package func resource(
        forKey key: String,
        creatingWithURL url: String,
        tokenDigest: String? = nil
    ) async throws -> ResourceRecord {
        if let (existing, _) = resourceNow(forKey: key) { return existing }
        do {
            let record = try await write { db in
                if let existing = try Self.fetchResource(db, key: key) { return existing }
                let now = Date().timeIntervalSince1970
                try Self.run(
                    db,
                    "INSERT INTO resource (key, url, createdAt, lastAccess, tokenDigest) VALUES (?, ?, ?, ?, ?)",
                    [key, url, now, now, tokenDigest]
                )
                return try Self.fetchResource(db, id: db.lastInsertedRowID)!
            }
            return cookieMemory.attach(to: record)
        } catch {
            // A cached resource opens even when the disk is too full for a write (and the quick
            // read above failed).
            guard let existing = try await resource(forKey: key) else { throw error }
            return existing
        }
    }

    /// The resource stored under `key`, if any.
    package func resource(forKey key: String) async throws -> ResourceRecord? {
        try await read { db in try Self.fetchResource(db, key: key) }.map(cookieMemory.attach)
    }

    /// The resource stored under `key` and its ranges, read on the calling thread without
    /// waiting (an event loop's read); `nil` if there is none or the read fails.
    ///
    /// One statement, a row per range, so the record and its ranges are of one snapshot without
    /// a transaction around them (the `BEGIN` and `COMMIT` of a read cost as much as the query).
    package func resourceNow(forKey key: String) -> (ResourceRecord, ByteRangeSet)? {
        let found = lookups.rows(forKey: key, into: (record: ResourceRecord?.none, ranges: [ByteRange]())) {
            found,
            row in
            if found.record == nil { found.record = Self.record(row) }
            if let range = Self.storedRange(row.integer(Self.rangeColumn), row.integer(Self.rangeColumn + 1)) {
                found.ranges.append(range)
            }
        }
        guard let found, let record = found.record else { return nil }
        return Self.checked(cookieMemory.attach(to: record), ByteRangeSet(found.ranges))
    }

    /// Resource `id`, stored under `key`, and its ranges, if it still exists: read as
    /// ``resourceNow(forKey:)`` reads, and by the pool if that finds no such row (a quick read
    /// that failed must not pass for a removed row).
    package func resource(id: Int64, key: String) async throws -> (ResourceRecord, ByteRangeSet)? {
        if let (record, ranges) = resourceNow(forKey: key), record.id == id { return (record, ranges) }
        let found = try await read { db -> (ResourceRecord, ByteRangeSet)? in
            guard let record = try Self.fetchResource(db, id: id) else { return nil }
            return Self.checked(record, try Self.fetchRanges(db, id: id))
        }
        return found.map { (cookieMemory.attach(to: $0.0), $0.1) }
    }

    /// The resource with row id `id`, if it still exists.
    package func resource(id: Int64) async throws -> ResourceRecord? {
        try await read { db in try Self.fetchResource(db, id: id) }.map(cookieMemory.attach)
    }

    /// Every resource with its present ranges, most recently used first.
    package func allResources() async throws -> [(ResourceRecord, ByteRangeSet)] {
        try await read { db in
            // Every range in one query, not one per resource: `ls` of 100,000 resources.
            var ranges: [Int64: [ByteRange]] = [:]
            let rangeRows = try Row.fetchCursor(
                db,
                sql: "SELECT resourceId, start, \"end\" FROM cachedRange ORDER BY resourceId, start"
            )
            while let row = try rangeRows.next() {
                if let id = row.integer(0), let range = Self.storedRange(row.integer(1), row.integer(2)) {
                    ranges[id, default: []].append(range)
                }
            }
            // Decoded as the statement steps, not copied into rows first.
            var resources: [(ResourceRecord, ByteRangeSet)] = []
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT \(Self.resourceColumns) FROM resource ORDER BY lastAccess DESC, id DESC"
            )
            while let row = try rows.next() {
                let record = Self.record(row)
                resources.append(Self.checked(record, ByteRangeSet(ranges[record.id] ?? [])))
            }
            return resources
        }
    }

    /// Stores what the origin said about resource `id`.
    package func update(id: Int64, info: ContentInfo) async throws {
        cookieMemory.remember(info.stored.cookies, for: id)
        try await write { db in try Self.storeInfo(db, id: id, info) }
    }

    /// Marks the stored response of the resource under `key` stale (``StoredFields/invalidated()``).
    ///
    /// - Returns: whether the index holds one.
    package func invalidate(key: String) async throws -> Bool {
        try await write { db in
            try Self.run(db, "UPDATE resource SET receivedAt = 0 WHERE key = ?", [key])
            return db.changesCount > 0
        }
    }

    /// Stores what the origin said about resource `id` with the next group of writes, without
    /// waiting for it: every write asked for later sees it. `onFailure` gets its error.
    package func updateSoon(id: Int64, info: ContentInfo, onFailure: @escaping @Sendable (StreamCacheError) -> Void) {
        cookieMemory.remember(info.stored.cookies, for: id)
        writes.post({ db in try Self.storeInfo(db, id: id, info) }) { error in
            onFailure(Self.writeError(error))
        }
    }

    private static func storeInfo(_ db: Database, id: Int64, _ info: ContentInfo) throws {
        try run(
            db,
            """
            UPDATE resource SET length = ?, contentType = ?, etag = ?, lastModified = ?, byteRangeAccess = ?,
                                storedFields = ?, receivedAt = ?
            WHERE id = ?
            """,
            [
                info.length, info.contentType, info.etag, info.lastModified, info.byteRangeAccess,
                encode(info.stored.fields), info.stored.receivedAt, id,
            ]
        )
    }

    /// Replaces resource `oldID` (a version the origin no longer serves) by a new, empty one under
    /// the same key, in one transaction. The old row and its ranges are gone afterwards.
    ///
    /// - Returns: the new record; its id is new, so writers of the old version can record nothing in it.
    package func replaceVersion(
        of oldID: Int64,
        key: String,
        url: String,
        info: ContentInfo,
        tokenDigest: String? = nil
    ) async throws -> ResourceRecord {
        let record = try await write { db in
            let pinned =
                try Bool.fetchOne(db, sql: "SELECT pinned FROM resource WHERE key = ?", arguments: [key]) ?? false
            try db.execute(sql: "DELETE FROM resource WHERE id = ? OR key = ?", arguments: [oldID, key])
            let now = Date().timeIntervalSince1970
            try db.execute(
                sql: """
                    INSERT INTO resource (key, url, length, contentType, etag, lastModified, byteRangeAccess,
                                          createdAt, lastAccess, pinned, storedFields, receivedAt, tokenDigest)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    key, url, info.length, info.contentType, info.etag, info.lastModified, info.byteRangeAccess,
                    now, now, pinned, Self.encode(info.stored.fields), info.stored.receivedAt, tokenDigest,
                ]
            )
            return try Self.fetchResource(db, id: db.lastInsertedRowID)!
        }
        cookieMemory.remember(info.stored.cookies, for: record.id)
        return cookieMemory.attach(to: record)
    }

    /// Sets the access time of each resource (seconds since 1970), in one transaction; a resource
    /// removed meanwhile is skipped.
    package func touch(_ times: [Int64: Double]) async throws {
        guard !times.isEmpty else { return }
        try await write { db in
            // An open after a prefetch's mark is a player's: its bytes are no longer prefetched only.
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE resource SET lastAccess = ?1,
                        prefetched = CASE WHEN prefetched < ?1 THEN NULL ELSE prefetched END
                    WHERE id = ?2
                    """
            )
            for (id, time) in times { try statement.execute(arguments: [time, id]) }
        }
    }

    /// Records `url` as the URL resource `id` was last opened with (one key can have many URLs:
    /// ``CacheKeyRules``).
    package func setURL(_ url: String, id: Int64) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE resource SET url = ? WHERE id = ?", arguments: [url, id])
        }
    }

    /// Moves resources to other keys (and the digests of their left-out parameter values), in one
    /// transaction: keys may be swapped among them, never shared (each key is unique).
    package func setKeys(_ changes: [(id: Int64, key: String, tokenDigest: String?)]) async throws {
        guard !changes.isEmpty else { return }
        try await write { db in
            // Out of every key first, so no move meets a key another has yet to leave.
            let free = try db.makeStatement(sql: "UPDATE resource SET key = ? WHERE id = ?")
            for change in changes { try free.execute(arguments: ["\u{0}moving \(change.id)", change.id]) }
            let move = try db.makeStatement(sql: "UPDATE resource SET key = ?, tokenDigest = ? WHERE id = ?")
            for change in changes { try move.execute(arguments: [change.key, change.tokenDigest, change.id]) }
        }
    }

    /// Records that resource `id`'s bytes are proven to be those of URLs whose left-out parameter
    /// values have `digest` (``CacheKeyRules/ignoredValuesDigest(of:)``).
    package func setTokenDigest(_ digest: String?, id: Int64) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE resource SET tokenDigest = ? WHERE id = ?", arguments: [digest, id])
        }
    }

    /// Pins or unpins resource `id`; pinned resources are never evicted.
    package func setPinned(_ pinned: Bool, id: Int64) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE resource SET pinned = ? WHERE id = ?", arguments: [pinned, id])
        }
    }

    /// Deletes resource `id` and its ranges. The caller removes the data file afterwards.
    package func delete(id: Int64) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM resource WHERE id = ?", arguments: [id])
        }
    }

    // MARK: Ranges

    /// The byte ranges of resource `id` the index holds.
    package func ranges(of id: Int64) async throws -> ByteRangeSet {
        try await read { db in try Self.fetchRanges(db, id: id) }
    }

    /// Replaces all ranges of resource `id` by `ranges` (used when the data file holds less).
    package func setRanges(_ ranges: ByteRangeSet, of id: Int64) async throws {
        try await write { db in
            guard try Self.exists(db, id: id) else { return }
            try Self.storeRanges(db, id: id, ranges: ranges)
        }
    }

    /// The bytes all resources hold together.
    package func totalCachedBytes() async throws -> Int64 {
        try await read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT cachedBytes FROM cacheTotals WHERE id = 0")) ?? 0
        }
    }

    /// Every resource's id with the end of its last recorded range (0 with none).
    package func recordedEnds() async throws -> [Int64: Int64] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT resource.id AS id, COALESCE(MAX(cachedRange."end"), 0) AS recordedEnd
                    FROM resource LEFT JOIN cachedRange ON cachedRange.resourceId = resource.id
                    GROUP BY resource.id
                    """
            )
            return Dictionary(
                rows.compactMap { row in row.integer(0).map { ($0, Self.storedLength(row.integer(1)) ?? 0) } },
                uniquingKeysWith: { first, _ in first }
            )
        }
    }

    /// Whether the resource of `key` holds bytes only a prefetch brought: it holds none, or
    /// none played since a prefetch cached them (``markPrefetched(key:at:)``).
    package func holdsPrefetchedOnly(key: String) async throws -> Bool {
        try await read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT cachedBytes, prefetched FROM resource WHERE key = ?",
                    arguments: [key]
                )
            else { return true }
            return (row["cachedBytes"] as Int64? ?? 0) == 0 || (row["prefetched"] as Double?) != nil
        }
    }

    /// Marks the resource of `key` as holding bytes only a prefetch brought, at `time` (seconds
    /// since 1970): evicted before any played resource, and no longer so once an open after
    /// `time` is recorded (``touch(_:)``).
    package func markPrefetched(key: String, at time: Double) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE resource SET prefetched = ? WHERE key = ?", arguments: [time, key])
        }
    }

    /// The resources holding bytes only a prefetch brought, the earliest marked first, and the
    /// bytes they hold.
    package func prefetchedResources() async throws -> [ResourceRecord] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.resourceColumns) FROM resource
                    WHERE prefetched IS NOT NULL AND pinned = 0 AND cachedBytes > 0
                    ORDER BY prefetched ASC, id ASC
                    """
            ).map { Self.record($0) }
        }
    }

    /// Resources that may be evicted: those holding bytes only a prefetch brought first, then
    /// the least recently used.
    package func evictionCandidates() async throws -> [ResourceRecord] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.resourceColumns) FROM resource WHERE pinned = 0 AND cachedBytes > 0
                    ORDER BY prefetched IS NULL, lastAccess ASC, id ASC
                    """
            ).map { Self.record($0) }
        }
    }

    // MARK: Rows

    /// Runs `sql` with `arguments` as a statement of the connection's cache: the statements of
    /// every fetch run thousands of times, and preparing one costs more than running it.
    static func run(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws {
        try db.cachedStatement(sql: sql).execute(arguments: arguments)
    }

    static func storeRanges(_ db: Database, id: Int64, ranges: ByteRangeSet) throws {
        try run(db, "DELETE FROM cachedRange WHERE resourceId = ?", [id])
        for range in ranges.ranges {
            try run(
                db,
                "INSERT INTO cachedRange (resourceId, start, \"end\") VALUES (?, ?, ?)",
                [id, range.lowerBound, range.upperBound]
            )
        }
        try run(db, "UPDATE resource SET cachedBytes = ? WHERE id = ?", [ranges.count, id])
    }

    static func fetchRanges(_ db: Database, id: Int64) throws -> ByteRangeSet {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT start, \"end\" FROM cachedRange WHERE resourceId = ? ORDER BY start"),
            arguments: [id]
        )
        return ByteRangeSet(
            rows.compactMap { row in Self.storedRange(row.integer(0), row.integer(1)) }
        )
    }

    private static func fetchResource(_ db: Database, key: String) throws -> ResourceRecord? {
        // Cached statements: every open runs these, and preparing one costs more than running it.
        try Row.fetchOne(
            db.cachedStatement(sql: resourceByKey),
            arguments: [key]
        ).map { record($0) }
    }

    /// Whether resource `id` still exists (without reading its row).
    static func exists(_ db: Database, id: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM resource WHERE id = ?"), arguments: [id]) ?? false
    }

    /// Resource `id`'s length, as far as its row knows it (`.some(nil)`: not yet), or `nil` if
    /// the row does not exist (without decoding the row).
    static func length(_ db: Database, id: Int64) throws -> Int64?? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT length FROM resource WHERE id = ?"), arguments: [id])
            .map { storedLength($0.integer(0)) }
    }

    static func fetchResource(_ db: Database, id: Int64) throws -> ResourceRecord? {
        try Row.fetchOne(
            db.cachedStatement(sql: resourceByID),
            arguments: [id]
        ).map { record($0) }
    }

    /// The columns ``record(_:)`` reads, in its order (by position: `ls` decodes 100,000 rows).
    private static let resourceColumns = """
        id, key, url, length, contentType, etag, lastModified, byteRangeAccess, storedFields, receivedAt, \
        createdAt, lastAccess, pinned, cachedBytes, fileSize, fileModified, tokenDigest
        """

    private static let resourceByKey = "SELECT \(resourceColumns) FROM resource WHERE key = ?"
    /// The resource's columns and one of its ranges (`NULL`s for a resource with none), a row
    /// per range in order.
    private static let resourceAndRangesByKey = """
        SELECT \(resourceColumns), cachedRange.start, cachedRange."end" FROM resource \
        LEFT JOIN cachedRange ON cachedRange.resourceId = resource.id \
        WHERE resource.key = ? ORDER BY cachedRange.start
        """
    /// Where ``resourceAndRangesByKey``'s range columns start.
    private static let rangeColumn: Int32 = 17
    private static let resourceByID = "SELECT \(resourceColumns) FROM resource WHERE id = ?"

    /// A row of ``resourceColumns``.
    private static func record(_ row: some ResourceColumns) -> ResourceRecord {
        ResourceRecord(
            id: row.integer(0) ?? 0,
            key: row.text(1) ?? "",
            url: row.text(2) ?? "",
            info: ContentInfo(
                length: storedLength(row.integer(3)),
                contentType: storedFieldValue(row.text(4)),
                etag: storedFieldValue(row.text(5)),
                lastModified: storedFieldValue(row.text(6)),
                byteRangeAccess: (row.integer(7) ?? 1) != 0,
                stored: StoredFields(fields: decode(row.text(8)), receivedAt: row.real(9) ?? 0)
            ),
            createdAt: Date(timeIntervalSince1970: row.real(10) ?? 0),
            lastAccess: Date(timeIntervalSince1970: row.real(11) ?? 0),
            pinned: (row.integer(12) ?? 0) != 0,
            cachedBytes: storedLength(row.integer(13)) ?? 0,
            fileState: storedLength(row.integer(14)).flatMap { size in
                row.integer(15).map { DataFileState(size: size, modified: $0) }
            },
            tokenDigest: row.text(16)
        )
    }

    /// Header fields as stored: one `name: value` a line (values never hold a line break).
    static func encode(_ fields: [HeaderField]) -> String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    static func decode(_ text: String?) -> [HeaderField] {
        guard let text, !text.isEmpty else { return [] }
        // On UTF-8 bytes: every resource `ls` lists, and every one opened, is decoded.
        let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        return text.utf8.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            var value = line[line.index(after: colon)...]
            while let first = value.first, blank(first) { value = value.dropFirst() }
            while let last = value.last, blank(last) { value = value.dropLast() }
            let field = HeaderField(String(Substring(line[..<colon])), String(Substring(value)))
            guard isFieldName(field.name), storedFieldValue(field.value) != nil else { return nil }
            return field
        }
    }
}

/// GRDB's rows as ``CacheIndex/record(_:)`` reads them: a value of another type than the
/// column's is none (GRDB's own conversion stops the process on it).
extension Row: ResourceColumns {
    func integer(_ column: Int32) -> Int64? {
        guard case .int64(let value) = (self[Int(column)] as DatabaseValue).storage else { return nil }
        return value
    }

    func real(_ column: Int32) -> Double? {
        switch (self[Int(column)] as DatabaseValue).storage {
        case .int64(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    func text(_ column: Int32) -> String? {
        guard case .string(let value) = (self[Int(column)] as DatabaseValue).storage else { return nil }
        return value
    }
}
