import LaunchprofReport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The monitor's store: `DIR/launches.db`, a SQLite database in WAL mode (a reader queries while
/// the monitor records; a commit survives the monitor being killed), one row per launch with the
/// columns a query needs and the run itself as the report writes it, plus the events the monitor
/// lost. The directory is its owner's alone (mode 0700, owned by the monitor's user, no symbolic
/// link), and one monitor records into it at a time (`monitor.lock`, an flock the kernel drops
/// when its holder dies).
public final class LaunchStore {
    public static let databaseName = "launches.db"
    public static let lockName = "monitor.lock"
    /// `PRAGMA user_version`: what this launchprof writes; a newer store is not read.
    public static let schemaVersion: Int64 = 1

    public let directory: String
    let database: SQLiteDatabase
    private let lock: Int32?
    /// Host rows by their facts, as stored this session.
    private var hostIDs: [String: Int64] = [:]

    private init(directory: String, database: SQLiteDatabase, lock: Int32?) {
        self.directory = directory
        self.database = database
        self.lock = lock
    }

    deinit {
        if let lock { close(lock) }
    }

    /// The recorder's store: the directory made (0700) when missing and checked, the lock taken
    /// (else `storeBusy`), the database made or opened and its schema checked.
    public static func openForRecording(_ directory: String) throws(MonitorError) -> LaunchStore {
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw .storeUnusable(path: directory, reason: "it cannot be made (\(MonitorError.text(errno)))")
        }
        try checkPrivate(directory, tighten: true)
        let lockPath = directory + "/" + lockName
        let lock = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw .storeUnusable(path: lockPath, reason: MonitorError.text(errno)) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let holder = SmallText.read(lock).flatMap { Int($0.filter(\.isNumber)) }
            close(lock)
            throw .storeBusy(path: directory, holder: holder.map { "process \($0)" } ?? "a process")
        }
        // Who holds it, for the next one's message.
        _ = ftruncate(lock, 0)
        let text = "\(getpid())\n"
        _ = text.withCString { pwrite(lock, $0, strlen($0), 0) }
        let path = directory + "/" + databaseName
        let database: SQLiteDatabase
        do throws(SQLiteDatabase.Failure) {
            database = try SQLiteDatabase(path: path, readOnly: false, create: true)
        } catch {
            close(lock)
            throw .database(path: path, operation: error.operation, message: error.message)
        }
        _ = chmod(path, 0o600)
        let store = LaunchStore(directory: directory, database: database, lock: lock)
        do throws(SQLiteDatabase.Failure) {
            try store.prepareSchema()
        } catch {
            throw .database(path: path, operation: error.operation, message: error.message)
        }
        return store
    }

    /// A reader's store (`monitor report`): while the monitor records, or after.
    public static func openForReading(_ directory: String) throws(MonitorError) -> LaunchStore {
        var status = stat()
        guard lstat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .noStore(path: directory)
        }
        try checkPrivate(directory, tighten: false)
        let path = directory + "/" + databaseName
        guard access(path, R_OK) == 0 else { throw .noStore(path: directory) }
        let database: SQLiteDatabase
        let version: Int64
        do throws(SQLiteDatabase.Failure) {
            database = try SQLiteDatabase(path: path, readOnly: true, create: false)
            try database.execute("PRAGMA busy_timeout = 5000")
            version = try database.integer("PRAGMA user_version") ?? 0
        } catch {
            throw .database(path: path, operation: error.operation, message: error.message)
        }
        guard version <= schemaVersion else {
            throw .database(
                path: path, operation: "reading",
                message: "it was written by a newer launchprof (schema \(version); this one reads up to \(schemaVersion))")
        }
        return LaunchStore(directory: directory, database: database, lock: nil)
    }

    /// The directory must be a real directory owned by this user; the recorder takes away any
    /// group or other access it finds (it owns the directory), a reader only checks ownership.
    static func checkPrivate(_ directory: String, tighten: Bool) throws(MonitorError) {
        var status = stat()
        guard lstat(directory, &status) == 0 else { throw .storeUnusable(path: directory, reason: MonitorError.text(errno)) }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw .storeUnusable(path: directory, reason: "it is not a directory (a symbolic link or a file)")
        }
        guard status.st_uid == geteuid() else {
            throw .storeUnusable(path: directory, reason: "it belongs to uid \(status.st_uid), not to uid \(geteuid())")
        }
        if tighten, status.st_mode & 0o077 != 0, chmod(directory, 0o700) != 0 {
            throw .storeUnusable(path: directory, reason: "its mode cannot be made 0700 (\(MonitorError.text(errno)))")
        }
    }

    private func prepareSchema() throws(SQLiteDatabase.Failure) {
        try database.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = NORMAL;
            PRAGMA busy_timeout = 5000;
            """)
        let version = try database.integer("PRAGMA user_version") ?? 0
        guard version <= Self.schemaVersion else {
            throw SQLiteDatabase.Failure(
                operation: "opening", message: "it was written by a newer launchprof (schema \(version); this one writes \(Self.schemaVersion))")
        }
        try database.transaction { () throws(SQLiteDatabase.Failure) in
            try database.execute(
                """
                CREATE TABLE IF NOT EXISTS hosts(
                  id INTEGER PRIMARY KEY, kernel TEXT NOT NULL, cpu TEXT NOT NULL, cores INTEGER NOT NULL,
                  libc TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', UNIQUE(kernel, cpu, cores, libc, name));
                CREATE TABLE IF NOT EXISTS launches(
                  id INTEGER PRIMARY KEY,
                  program TEXT NOT NULL,
                  build_id TEXT,
                  started_at_unix_ns INTEGER NOT NULL,
                  start_type TEXT NOT NULL,
                  outcome TEXT NOT NULL,
                  time_to_main_ns INTEGER,
                  time_to_first_frame_ns INTEGER,
                  host INTEGER NOT NULL REFERENCES hosts(id),
                  run BLOB NOT NULL);
                CREATE INDEX IF NOT EXISTS launches_by_program ON launches(program, started_at_unix_ns);
                CREATE INDEX IF NOT EXISTS launches_by_time ON launches(started_at_unix_ns);
                CREATE TABLE IF NOT EXISTS losses(
                  id INTEGER PRIMARY KEY, at_unix_ns INTEGER NOT NULL, source TEXT NOT NULL, count INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS execs(
                  id INTEGER PRIMARY KEY,
                  program TEXT NOT NULL,
                  started_at_unix_ns INTEGER NOT NULL,
                  exec_ns INTEGER,
                  to_marker_ns INTEGER,
                  to_exit_ns INTEGER,
                  marker TEXT NOT NULL,
                  outcome TEXT NOT NULL,
                  status INTEGER);
                CREATE INDEX IF NOT EXISTS execs_by_time ON execs(started_at_unix_ns);
                CREATE TABLE IF NOT EXISTS payloads(
                  program TEXT NOT NULL, day TEXT NOT NULL, PRIMARY KEY(program, day));
                PRAGMA user_version = \(Self.schemaVersion);
                """)
        }
    }

    // MARK: Recording

    /// A launch to store.
    public struct Launch: Sendable {
        public var program: String
        public var buildID: String?
        public var run: LaunchRun
        public var host: LaunchReport.Host
        /// The spawn, ns since the Unix epoch (the column queries select by).
        public var startedAtUnixNs: Int64

        public init(program: String, buildID: String?, run: LaunchRun, host: LaunchReport.Host, startedAtUnixNs: Int64) {
            self.program = program
            self.buildID = buildID
            self.run = run
            self.host = host
            self.startedAtUnixNs = startedAtUnixNs
        }
    }

    /// Events the monitor could not turn into launches, by source (`kernel`: samples its rings
    /// had no room for; `exits`: times the exit messages overflowed; …).
    public struct Loss: Sendable, Equatable {
        public var source: String
        public var count: UInt64
        public var atUnixNs: Int64

        public init(source: String, count: UInt64, atUnixNs: Int64) {
            self.source = source
            self.count = count
            self.atUnixNs = atUnixNs
        }
    }

    /// An unwatched program's exec (`--all`): what `ExecCensus` measured of it. A column is NULL
    /// where that part was not seen (`exec_ns`: the fork; `to_marker_ns`: the marker, with the
    /// outcome saying why; `to_exit_ns`: an exit before the marker); `marker` names what the time
    /// runs to (`main`, `libc-start`, or `none` without `--all-main`).
    public struct Exec: Sendable, Equatable {
        public var record: ExecCensus.Record
        public var marker: ExecCensus.Marker
        public var startedAtUnixNs: Int64

        public init(record: ExecCensus.Record, marker: ExecCensus.Marker, startedAtUnixNs: Int64) {
            self.record = record
            self.marker = marker
            self.startedAtUnixNs = startedAtUnixNs
        }
    }

    /// Unwatched execs kept at most (the oldest go first, at retention): `--all` on a machine
    /// that execs hundreds of programs a second would otherwise fill the disk within the retention.
    public static let maximumExecs = 1_000_000

    /// Stores launches, unwatched execs and losses in one transaction: all of them or none.
    public func record(_ launches: [Launch], execs: [Exec] = [], losses: [Loss] = []) throws(MonitorError) {
        guard !launches.isEmpty || !execs.isEmpty || !losses.isEmpty else { return }
        do throws(SQLiteDatabase.Failure) {
            try database.transaction { () throws(SQLiteDatabase.Failure) in
                let insert = try database.prepare(
                    """
                    INSERT INTO launches(program, build_id, started_at_unix_ns, start_type, outcome, time_to_main_ns,
                      time_to_first_frame_ns, host, run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for launch in launches {
                    let run = launch.run
                    let encoded: [UInt8]
                    do throws(LaunchReportError) {
                        encoded = try LaunchReportWriter.encodeValue(run)
                    } catch {
                        throw SQLiteDatabase.Failure(operation: "encoding a run", message: error.description)
                    }
                    insert.bind(1, launch.program)
                    insert.bind(2, launch.buildID)
                    insert.bind(3, launch.startedAtUnixNs)
                    insert.bind(4, (run.field?.startType ?? .cold).rawValue)
                    insert.bind(5, run.resolvedOutcome.kind.rawValue)
                    insert.bind(6, run.metrics.timeToMainNs.map { Int64($0) })
                    insert.bind(7, run.metrics.timeToFirstFrameNs.map { Int64($0) })
                    insert.bind(8, try hostID(launch.host))
                    insert.bind(9, bytes: encoded)
                    try insert.run()
                }
                if !execs.isEmpty {
                    let insertExec = try database.prepare(
                        """
                        INSERT INTO execs(program, started_at_unix_ns, exec_ns, to_marker_ns, to_exit_ns, marker, outcome, status)
                          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                    for exec in execs {
                        insertExec.bind(1, exec.record.program)
                        insertExec.bind(2, exec.startedAtUnixNs)
                        insertExec.bind(3, exec.record.execNs.map { Int64(clamping: $0) })
                        insertExec.bind(4, exec.record.toMarkerNs.map { Int64(clamping: $0) })
                        insertExec.bind(5, exec.record.toExitNs.map { Int64(clamping: $0) })
                        insertExec.bind(6, exec.marker.rawValue)
                        insertExec.bind(7, exec.record.outcome.rawValue)
                        insertExec.bind(8, exec.record.status.map { Int64($0) })
                        try insertExec.run()
                    }
                }
                let loss = try database.prepare("INSERT INTO losses(at_unix_ns, source, count) VALUES (?, ?, ?)")
                for entry in losses where entry.count > 0 {
                    loss.bind(1, entry.atUnixNs)
                    loss.bind(2, entry.source)
                    loss.bind(3, Int64(clamping: entry.count))
                    try loss.run()
                }
            }
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    private func hostID(_ host: LaunchReport.Host) throws(SQLiteDatabase.Failure) -> Int64 {
        let key = [host.kernel, host.cpu, String(host.cores), host.libc, host.name ?? ""].joined(separator: "\u{0}")
        if let id = hostIDs[key] { return id }
        let insert = try database.prepare(
            "INSERT OR IGNORE INTO hosts(kernel, cpu, cores, libc, name) VALUES (?, ?, ?, ?, ?)")
        insert.bind(1, host.kernel)
        insert.bind(2, host.cpu)
        insert.bind(3, Int64(host.cores))
        insert.bind(4, host.libc)
        insert.bind(5, host.name ?? "")
        try insert.run()
        let select = try database.prepare(
            "SELECT id FROM hosts WHERE kernel = ? AND cpu = ? AND cores = ? AND libc = ? AND name = ?")
        select.bind(1, host.kernel)
        select.bind(2, host.cpu)
        select.bind(3, Int64(host.cores))
        select.bind(4, host.libc)
        select.bind(5, host.name ?? "")
        guard try select.step(), let id = select.integer(0) else {
            throw SQLiteDatabase.Failure(operation: "storing the host", message: "its row is missing")
        }
        hostIDs[key] = id
        return id
    }

    /// Deletes launches and losses from before `unixNs` (`--retain`); how many launches went.
    @discardableResult
    public func deleteOlder(than unixNs: Int64) throws(MonitorError) -> Int {
        do throws(SQLiteDatabase.Failure) {
            return try database.transaction { () throws(SQLiteDatabase.Failure) in
                let launches = try database.prepare("DELETE FROM launches WHERE started_at_unix_ns < ?")
                launches.bind(1, unixNs)
                try launches.run()
                let count = database.changes
                let execs = try database.prepare("DELETE FROM execs WHERE started_at_unix_ns < ?")
                execs.bind(1, unixNs)
                try execs.run()
                try database.execute("DELETE FROM execs WHERE id <= (SELECT max(id) FROM execs) - \(Self.maximumExecs)")
                let losses = try database.prepare("DELETE FROM losses WHERE at_unix_ns < ?")
                losses.bind(1, unixNs)
                try losses.run()
                return count
            }
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    /// Whether the payloads of `program` for `day` were written; marks them written.
    public func markPayloads(program: String, day: String) throws(MonitorError) -> Bool {
        do throws(SQLiteDatabase.Failure) {
            let insert = try database.prepare("INSERT OR IGNORE INTO payloads(program, day) VALUES (?, ?)")
            insert.bind(1, program)
            insert.bind(2, day)
            try insert.run()
            return database.changes == 1
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    // MARK: Reading

    /// Which launches a reader wants: one program's (nil: every program's), started in
    /// [since, until), of some start types.
    public struct Selection: Sendable, Equatable {
        public var program: String?
        public var sinceUnixNs: Int64
        public var untilUnixNs: Int64
        public var startTypes: Set<FieldLaunchFacts.StartType>

        public init(
            program: String?, sinceUnixNs: Int64 = .min, untilUnixNs: Int64 = .max,
            startTypes: Set<FieldLaunchFacts.StartType> = Set(FieldLaunchFacts.StartType.allCases)
        ) {
            self.program = program
            self.sinceUnixNs = sinceUnixNs
            self.untilUnixNs = untilUnixNs
            self.startTypes = startTypes
        }

        var condition: String {
            let types = startTypes.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
            return "(?1 IS NULL OR program = ?1) AND started_at_unix_ns >= ?2 AND started_at_unix_ns < ?3 AND start_type IN (\(types))"
        }

        func bind(_ statement: SQLiteDatabase.Statement) {
            statement.bind(1, program)
            statement.bind(2, sinceUnixNs)
            statement.bind(3, untilUnixNs)
        }
    }

    /// How many launches `selection` holds.
    public func count(_ selection: Selection) throws(MonitorError) -> Int {
        do throws(SQLiteDatabase.Failure) {
            let select = try database.prepare("SELECT COUNT(*) FROM launches WHERE \(selection.condition)")
            selection.bind(select)
            return try select.step() ? Int(select.integer(0) ?? 0) : 0
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    /// When the first and the last launch `selection` holds started (Unix ns).
    public func span(_ selection: Selection) throws(MonitorError) -> (first: Int64, last: Int64)? {
        do throws(SQLiteDatabase.Failure) {
            let select = try database.prepare(
                "SELECT MIN(started_at_unix_ns), MAX(started_at_unix_ns) FROM launches WHERE \(selection.condition)")
            selection.bind(select)
            guard try select.step(), let first = select.integer(0), let last = select.integer(1) else { return nil }
            return (first, last)
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    /// The host and build of the latest launch `selection` holds.
    public func latest(_ selection: Selection) throws(MonitorError) -> (host: LaunchReport.Host, buildID: String?)? {
        do throws(SQLiteDatabase.Failure) {
            let hosts = try self.hosts()
            let select = try database.prepare(
                "SELECT host, build_id FROM launches WHERE \(selection.condition) ORDER BY started_at_unix_ns DESC, id DESC LIMIT 1")
            selection.bind(select)
            guard try select.step(), let id = select.integer(0), let host = hosts[id] else { return nil }
            return (host, select.text(1))
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    /// The unwatched execs (`--all`) started since `sinceUnixNs`, oldest first.
    public func forEachExec(sinceUnixNs: Int64, _ body: (Exec) throws -> Void) throws {
        let select = try database.prepare(
            """
            SELECT program, started_at_unix_ns, exec_ns, to_marker_ns, marker, outcome, status, to_exit_ns FROM execs
              WHERE started_at_unix_ns >= ? ORDER BY started_at_unix_ns, id
            """)
        select.bind(1, sinceUnixNs)
        while try select.step() {
            guard let program = select.text(0), let started = select.integer(1),
                let marker = select.text(4).flatMap(ExecCensus.Marker.init(rawValue:)),
                let outcome = select.text(5).flatMap(ExecCensus.Record.Outcome.init(rawValue:))
            else { continue }
            var record = ExecCensus.Record(
                program: program, pid: 0, startNs: 0, execNs: select.integer(2).map { UInt64(max(0, $0)) },
                toMarkerNs: select.integer(3).map { UInt64(max(0, $0)) }, outcome: outcome, status: select.integer(6).map { Int32(truncatingIfNeeded: $0) })
            record.toExitNs = select.integer(7).map { UInt64(max(0, $0)) }
            try body(Exec(record: record, marker: marker, startedAtUnixNs: started))
        }
    }

    /// The launches `selection` holds, oldest first, each with the host it ran on and its build id.
    public func forEachLaunch(
        _ selection: Selection, _ body: (LaunchRun, LaunchReport.Host, String?) throws -> Void
    ) throws {
        let hosts = try self.hosts()
        let select = try database.prepare(
            "SELECT run, host, build_id FROM launches WHERE \(selection.condition) ORDER BY started_at_unix_ns, id")
        selection.bind(select)
        let decoder = JSONDecoder()
        while try select.step() {
            let run = try decoder.decode(LaunchRun.self, from: Data(select.bytes(0)))
            let host = select.integer(1).flatMap { hosts[$0] } ?? LaunchReport.Host(kernel: "unknown", cpu: "unknown", cores: 0, libc: "unknown")
            try body(run, host, select.text(2))
        }
    }

    /// The (program, UTC day number) pairs with launches before `beforeUnixNs` whose payloads
    /// are not written yet.
    public func daysWithoutPayloads(beforeUnixNs: Int64) throws(MonitorError) -> [(program: String, day: Int64)] {
        do throws(SQLiteDatabase.Failure) {
            let select = try database.prepare(
                """
                SELECT program, started_at_unix_ns / 86400000000000 AS day FROM launches
                WHERE started_at_unix_ns < ?1 AND started_at_unix_ns >= 0 GROUP BY program, day
                """)
            select.bind(1, beforeUnixNs)
            var days: [(String, Int64)] = []
            let written = try database.prepare("SELECT 1 FROM payloads WHERE program = ? AND day = ?")
            while try select.step() {
                guard let program = select.text(0), let day = select.integer(1) else { continue }
                written.bind(1, program)
                written.bind(2, MonitorTime.dayText(unixNs: day * 86_400_000_000_000))
                let done = try written.step()
                written.reset()
                if !done { days.append((program, day)) }
            }
            return days
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    /// The programs with launches stored, and how many each.
    public func programs() throws(MonitorError) -> [(path: String, launches: Int)] {
        do throws(SQLiteDatabase.Failure) {
            let select = try database.prepare("SELECT program, COUNT(*) FROM launches GROUP BY program ORDER BY program")
            var result: [(String, Int)] = []
            while try select.step() { result.append((select.text(0) ?? "", Int(select.integer(1) ?? 0))) }
            return result
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    /// Losses since `sinceUnixNs`, summed by source.
    public func losses(sinceUnixNs: Int64 = .min) throws(MonitorError) -> [String: UInt64] {
        do throws(SQLiteDatabase.Failure) {
            let select = try database.prepare("SELECT source, SUM(count) FROM losses WHERE at_unix_ns >= ? GROUP BY source")
            select.bind(1, sinceUnixNs)
            var result: [String: UInt64] = [:]
            while try select.step() { result[select.text(0) ?? ""] = UInt64(max(0, select.integer(1) ?? 0)) }
            return result
        } catch {
            throw .database(path: database.path, operation: error.operation, message: error.message)
        }
    }

    private func hosts() throws(SQLiteDatabase.Failure) -> [Int64: LaunchReport.Host] {
        let select = try database.prepare("SELECT id, kernel, cpu, cores, libc, name FROM hosts")
        var result: [Int64: LaunchReport.Host] = [:]
        while try select.step() {
            guard let id = select.integer(0) else { continue }
            let name = select.text(5) ?? ""
            result[id] = LaunchReport.Host(
                kernel: select.text(1) ?? "unknown", cpu: select.text(2) ?? "unknown", cores: Int(select.integer(3) ?? 0),
                libc: select.text(4) ?? "unknown", name: name.isEmpty ? nil : name)
        }
        return result
    }
}

extension SQLiteDatabase.Failure: CustomStringConvertible {
    var description: String { "\(operation): \(message)" }
}

/// Reads a small file through an open descriptor (the lock file's holder).
enum SmallText {
    static func read(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = pread(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
