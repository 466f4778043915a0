import Foundation

#if canImport(GRDBSQLite)
import GRDBSQLite
#elseif canImport(SQLite3)
import SQLite3
#endif

/// The index read a server's event loop makes on the first touch of each cached resource
/// (``CacheIndex/resourceNow(forKey:)``), on read-only SQLite connections of its own, each with
/// the statement prepared once.
///
/// Through GRDB's pool, the read cost twice the query: a semaphore, a lock and a dispatch queue
/// around it, and a copy of every row. Here it is a lock around a list of idle connections, and
/// the columns read straight from the statement. A read-only connection of a WAL database reads
/// one snapshot per statement and never checkpoints or removes the WAL files, so it leaves the
/// pool's connections, and other processes', as they were.
final class IndexLookups: Sendable {
    private let path: String
    private let sql: String
    private let idle = Locked<[Connection]>([])
    /// Idle connections kept: one per thread that may read at once (a server's event loops, one
    /// per core by default), so none is opened and closed again for a single read.
    private static let kept = max(4, ProcessInfo.processInfo.activeProcessorCount)

    /// Lookups of `sql` (one `?`, bound to the key) in the database at `path`.
    init(path: String, sql: String) {
        self.path = path
        self.sql = sql
    }

    /// Runs the statement for `key`, handing `body` what it found so far and each row in turn;
    /// `nil` if the database cannot be read now (busy for longer than a read should wait on an
    /// event loop, or damaged).
    func rows<Found>(forKey key: String, into initial: Found, _ body: (inout Found, Columns) -> Void) -> Found? {
        guard let connection = idle.withLock({ $0.popLast() }) ?? Connection(path: path, sql: sql) else { return nil }
        defer { idle.withLock { if $0.count < Self.kept { $0.append(connection) } } }
        return connection.rows(forKey: key, into: initial, body)
    }

    /// The columns of the statement's current row, read by position.
    struct Columns: ResourceColumns {
        let statement: OpaquePointer

        // A value of another type than the column's is none, as ``Row``'s reading has it.
        func integer(_ column: Int32) -> Int64? {
            sqlite3_column_type(statement, column) == SQLITE_INTEGER ? sqlite3_column_int64(statement, column) : nil
        }

        func real(_ column: Int32) -> Double? {
            let type = sqlite3_column_type(statement, column)
            return type == SQLITE_INTEGER || type == SQLITE_FLOAT ? sqlite3_column_double(statement, column) : nil
        }

        func text(_ column: Int32) -> String? {
            guard sqlite3_column_type(statement, column) == SQLITE_TEXT,
                let text = sqlite3_column_text(statement, column)
            else { return nil }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }
    }

    /// One read-only connection and its prepared statement; used by one thread at a time.
    private final class Connection {
        private let database: OpaquePointer
        private let statement: OpaquePointer

        init?(path: String, sql: String) {
            var database: OpaquePointer?
            guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
                let database
            else {
                sqlite3_close(database)
                return nil
            }
            // A writer's commit holds readers up for a moment at most; longer, the caller's
            // slower path answers.
            sqlite3_busy_timeout(database, 100)
            var statement: OpaquePointer?
            guard
                sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
                let statement
            else {
                sqlite3_close(database)
                return nil
            }
            self.database = database
            self.statement = statement
        }

        deinit {
            sqlite3_finalize(statement)
            sqlite3_close(database)
        }

        func rows<Found>(forKey key: String, into initial: Found, _ body: (inout Found, Columns) -> Void) -> Found? {
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            guard sqlite3_bind_text(statement, 1, key, -1, Self.transient) == SQLITE_OK else { return nil }
            var found = initial
            while true {
                switch sqlite3_step(statement) {
                case SQLITE_ROW: body(&found, Columns(statement: statement))
                case SQLITE_DONE: return found
                default: return nil
                }
            }
        }

        /// SQLite copies the bound text (`SQLITE_TRANSIENT`).
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }
}

/// The columns of a resource row (``CacheIndex``'s `resourceColumns`), read by position: from a
/// GRDB row, or straight from a statement of ``IndexLookups``.
protocol ResourceColumns {
    func integer(_ column: Int32) -> Int64?
    func real(_ column: Int32) -> Double?
    func text(_ column: Int32) -> String?
}
