import Foundation
import GRDB
import StreamCacheTesting
import Testing

@testable import StreamCache

/// Writes committed in groups (``IndexWrites``): each caller gets its own result or error, a
/// write that fails leaves nothing behind, and the others of its group are kept.
@Suite struct IndexWritesTests {
    private struct Refused: Error {}

    /// A database with an empty `item` table, in a new folder of its own.
    private func itemDatabase() async throws -> (folder: String, pool: DatabasePool) {
        let folder = TestData.temporaryDirectory("writes")
        let pool = try DatabasePool(path: folder + "/index.sqlite")
        try await pool.write { db in try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, value INTEGER)") }
        return (folder, pool)
    }

    @Test func aGroupKeepsEachWriteButTheOneThatFailed() async throws {
        let (folder, pool) = try await itemDatabase()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writes = IndexWrites(pool)

        // The first write holds the writer while 40 more are asked for: those go in one group.
        let holding = Task {
            try await writes.write { db in
                Thread.sleep(forTimeInterval: 0.2)
                try db.execute(sql: "INSERT INTO item (id, value) VALUES (0, 0)")
                return 0
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        let outcomes = await withTaskGroup(of: (Int, Int?).self) { group in
            for number in 1...40 {
                group.addTask {
                    let value = try? await writes.write { db -> Int in
                        try db.execute(
                            sql: "INSERT INTO item (id, value) VALUES (?, ?)",
                            arguments: [number, number * 10]
                        )
                        if number == 7 { throw Refused() }
                        return try Int.fetchOne(db, sql: "SELECT value FROM item WHERE id = ?", arguments: [number])
                            ?? -1
                    }
                    return (number, value)
                }
            }
            return await group.reduce(into: [Int: Int?]()) { $0[$1.0] = $1.1 }
        }
        #expect(try await holding.value == 0)
        for number in 1...40 {
            #expect(outcomes[number] == (number == 7 ? .some(nil) : .some(number * 10)))
        }
        let stored = try await pool.read { db in try Int.fetchAll(db, sql: "SELECT id FROM item ORDER BY id") }
        #expect(stored == [0] + Array(1...40).filter { $0 != 7 })

        // A write that fails alone is rolled back as well.
        await #expect(throws: Refused.self) {
            try await writes.write { db -> Int in
                try db.execute(sql: "INSERT INTO item (id, value) VALUES (100, 1)")
                throw Refused()
            }
        }
        #expect(
            try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE id = 100") } == 0
        )
    }

    /// A posted write (a resource's length, recorded while its body is read) is seen by every
    /// write asked for after it, which do not wait for it; one that fails tells its error and
    /// leaves nothing behind.
    @Test func aPostedWriteIsSeenByTheWritesAfterIt() async throws {
        let (folder, pool) = try await itemDatabase()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writes = IndexWrites(pool)

        let failures = Failures()
        for number in 1...20 {
            let insert: @Sendable (Database) throws -> Void = { db in
                // The first holds the writer while the others are asked for.
                if number == 1 { Thread.sleep(forTimeInterval: 0.1) }
                try db.execute(sql: "INSERT INTO item (id, value) VALUES (?, ?)", arguments: [number, number])
                if number == 13 { throw Refused() }
            }
            writes.post(insert) { _ in failures.add(number) }
        }
        let seen = try await writes.write { db in
            try Int.fetchAll(db, sql: "SELECT id FROM item ORDER BY id")
        }
        #expect(seen == Array(1...20).filter { $0 != 13 })
        #expect(failures.numbers == [13])
    }

    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Int] = []
        func add(_ number: Int) { lock.withLock { list.append(number) } }
        var numbers: [Int] { lock.withLock { list } }
    }
}
