import CSQLite

/// A thin Swift face on SQLite's C API, only what the monitor's store uses: open, run SQL,
/// prepared statements with bound values, rows. One connection, one thread at a time.
///
/// Not GRDB (on the offline list): the store is a handful of statements, and GRDB would bring
/// Foundation-heavy code and minutes of build time on a 2-core machine for them.
final class SQLiteDatabase {
    let path: String
    private let handle: OpaquePointer

    struct Failure: Error {
        var operation: String
        var message: String
    }

    /// Opens (and with `create`, makes) the database at `path`; `readOnly` for readers.
    init(path: String, readOnly: Bool, create: Bool) throws(Failure) {
        self.path = path
        var db: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(db)
            throw Failure(operation: "open", message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs SQL that returns no rows (several statements may be given).
    func execute(_ sql: String) throws(Failure) {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw Failure(operation: String(sql.prefix(60)), message: message)
        }
    }

    func prepare(_ sql: String) throws(Failure) -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw Failure(operation: String(sql.prefix(60)), message: lastMessage) }
        return Statement(statement, database: self)
    }

    /// Runs `body` in one transaction: all of it is stored or none.
    func transaction<Result>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The first column of the first row of `sql` as an integer.
    func integer(_ sql: String) throws(Failure) -> Int64? {
        let statement = try prepare(sql)
        return try statement.step() ? statement.integer(0) : nil
    }

    var changes: Int { Int(sqlite3_changes(handle)) }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// A prepared statement: bind (1-based), step through rows, read columns (0-based), reset.
    final class Statement {
        private let statement: OpaquePointer
        private let database: SQLiteDatabase

        /// SQLite copies a bound text or blob (`SQLITE_TRANSIENT`).
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
            self.statement = statement
            self.database = database
        }

        deinit { sqlite3_finalize(statement) }

        func bind(_ index: Int32, _ value: Int64?) {
            if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
        }

        func bind(_ index: Int32, _ value: String?) {
            guard let value else {
                sqlite3_bind_null(statement, index)
                return
            }
            sqlite3_bind_text(statement, index, value, -1, Self.transient)
        }

        func bind(_ index: Int32, bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
        }

        /// Steps once: true while a row is ready.
        func step() throws(Failure) -> Bool {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            default: throw Failure(operation: "step", message: database.lastMessage)
            }
        }

        /// Runs a statement that returns no rows, then resets it for the next values.
        func run() throws(Failure) {
            defer { reset() }
            while try step() {}
        }

        func reset() {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }

        func integer(_ column: Int32) -> Int64? {
            sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
        }

        func text(_ column: Int32) -> String? {
            guard let text = sqlite3_column_text(statement, column) else { return nil }
            return String(cString: text)
        }

        func bytes(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let blob = sqlite3_column_blob(statement, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: blob, count: count))
        }
    }
}
