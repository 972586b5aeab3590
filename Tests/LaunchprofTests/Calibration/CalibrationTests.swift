import Foundation
import LaunchprofCore
import LaunchprofELF
import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// The loader-work counts against glibc's own (LD_DEBUG=statistics) and the closure's load
/// order; the fitted model against measurements of closures it was not fitted on; `inspect`
/// with and without a calibration.
@Suite("Calibration: counts, model and store", .serialized)
struct CalibrationTests {
    /// Synthetic programs for this test process (under $TMPDIR, built once).
    static let generator: Result<ProgramGenerator, CalibrationError> = {
        let directory = FixtureBuilder.outputRoot.appendingPathComponent("calibration-programs").path
        return Result { () throws(CalibrationError) in try ProgramGenerator(directory: directory) }
    }()

    static var environment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LD_") && $0.key != "LAUNCHPROF_HOOK_FD" }
    }

    static func work(_ program: String) throws -> (report: InspectReport, total: LoaderWork) {
        let report = try InspectSession(configuration: .init(program: program, environment: environment)).run()
        return (report, report.totals.loaderWork)
    }

    /// glibc's count of symbol lookups at start-up (`_dl_lookup_symbol_x` calls).
    static func lookupStatistic(_ program: String, _ arguments: [String]) throws -> Int {
        let output = try InspectTruth.run(program, arguments, environment: ["LD_DEBUG": "statistics"])
        for line in output.stderr.split(separator: "\n") where line.contains(" number of relocations:") && !line.contains("final") {
            if let value = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                return value
            }
        }
        throw InspectTruth.Failure(description: "no relocation statistic in: \(output.stderr.prefix(500))")
    }

    @Test("symbol lookups match glibc's own count (LD_DEBUG=statistics) within 0.5%", arguments: [
        ("/usr/bin/gdb", ["--version"]), ("/usr/bin/git", ["--version"]), ("/usr/bin/true", []),
    ])
    func lookupsMatchGlibc(program: String, arguments: [String]) throws {
        let counted = try Self.work(program).total.lookups
        let statistic = try Self.lookupStatistic(program, arguments)
        // ld.so's own lookups (its jump slots, malloc's four, the vDSO's five, libc's
        // `__tunable_get_val`) are counted: `true` and git come out exact.
        #expect(abs(statistic - counted) <= max(1, statistic / 200), "counted \(counted), glibc \(statistic)")
    }

    /// The synthetic programs `calibrate` adds to span what real closures do: each is counted
    /// as it was built to be, and runs (each exits 0 only if its code really ran).
    @Test("calibration probes span real closures: 1M relative relocations, large symbol tables, 400 versions")
    func probesSpanRealClosures() throws {
        let generator = try Self.generator.get()
        let packed = try generator.packedRelocations(1_000_000)
        let dense = try generator.largeSymbolTable(symbols: 40_000, lookups: 2_000)
        let sparse = try generator.largeSymbolTable(symbols: 200_000, lookups: 300)
        let versions = try generator.versionRequirements(400)
        for program in [packed, dense, sparse, versions] {
            #expect(try InspectTruth.run(program, [], environment: [:]).status == 0, "\(program)")
        }
        let relative = try Self.work(packed).total
        #expect(relative.relative >= 1_000_000 && relative.pagesTouched >= 1_950, "\(relative)")
        // Dense: 2k names spread over one 40k-symbol table read most of its pages, ~14 to a
        // fault-around window; sparse: 300 names in a 200k-symbol table, fewer pages to a window.
        let denseWork = try Self.work(dense).total
        let sparseWork = try Self.work(sparse).total
        #expect(denseWork.lookups >= 2_000 && denseWork.symbolTablePages >= 8 * denseWork.symbolTableFaults, "\(denseWork)")
        #expect(sparseWork.symbolTableFaults >= 100, "\(sparseWork)")
        #expect(sparseWork.symbolTablePages < 8 * sparseWork.symbolTableFaults, "\(sparseWork)")
        let versioned = try Self.work(versions).total
        #expect(versioned.versionChecks >= 400 && versioned.mappedObjects == 2, "\(versioned)")
    }

    /// The linker sorts symbolic relocations by symbol: 3,000 against 1,024 symbols are 1,024
    /// lookups and 1,976 answers from glibc's one-entry cache, each still an entry read and a
    /// value stored: an address adjustment. Every relocation of the table is one or the other.
    @Test("symbolic relocations the lookup cache answers count as address adjustments")
    func cacheAnswersAreAdjustments() throws {
        let generator = try Self.generator.get()
        let program = try generator.scopeWalk(lookups: 3_000, fillers: 0)
        let report = try Self.work(program).report
        let table = try #require(report.objects.first { $0.path.hasSuffix("/liblptable.so") }).loaderWork
        #expect(table.lookups >= ProgramGenerator.symbolCount && table.lookups <= ProgramGenerator.symbolCount + 20, "\(table)")
        #expect(table.relative >= 3_000 - ProgramGenerator.symbolCount, "\(table)")
        #expect(table.relative <= 3_000 - ProgramGenerator.symbolCount + 40, "\(table)")
    }

    /// ld.so hashes every byte of a name it looks up: by construction, 300 lookups of 96-byte
    /// names count 300 × 80 bytes more than the same 300 of 16-byte names, the lookups the same.
    @Test("lookup name bytes: 300 lookups of 96-byte names count 24,000 bytes more than of 16-byte names")
    func lookupNameBytes() throws {
        let generator = try Self.generator.get()
        #expect(ProgramGenerator.symbolName(7, bytes: 96).utf8.count == 96)
        #expect(ProgramGenerator.symbolName(7, bytes: 16) == "lp_xxxxxxx000007")
        func user(_ bytes: Int) throws -> LoaderWork {
            let program = try generator.longNames(lookups: 300, nameBytes: bytes)
            #expect(try InspectTruth.run(program, [], environment: [:]).status == 0, "\(program)")
            let report = try Self.work(program).report
            return try #require(report.objects.first { $0.path.hasSuffix("/liblpuse.so") }).loaderWork
        }
        let long = try user(96)
        let short = try user(16)
        #expect(long.lookups == short.lookups && long.lookups >= 300, "\(long.lookups) vs \(short.lookups)")
        #expect(long.lookupNameBytes - short.lookupNameBytes == 300 * 80, "\(long.lookupNameBytes) vs \(short.lookupNameBytes)")
        #expect(short.lookupNameBytes >= 300 * 16)
    }

    /// A lookup answered by an object whose symbol and string tables pass 256 KiB counts as a
    /// large-table lookup. Truth is ld.so's own: the bindings it reports (LD_DEBUG=bindings) from
    /// the user library to the table library, beside the table's size read from its sections.
    @Test("large-table lookups: every binding ld.so makes into a 12k-symbol table, none into a 4k one", arguments: [
        (12_000, true), (4_000, false),
    ])
    func largeTableLookups(symbols: Int, large: Bool) throws {
        let generator = try Self.generator.get()
        let program = try generator.largeSymbolTable(symbols: symbols, lookups: 300)
        let folder = (program as NSString).deletingLastPathComponent
        let output = try InspectTruth.run(program, [], environment: ["LD_DEBUG": "bindings"])
        #expect(output.status == 0, "\(program)")
        let bindings = output.stderr.split(separator: "\n").filter {
            $0.contains("binding file \(folder)/liblpuse.so ") && $0.contains(" to \(folder)/liblpbig.so ")
        }.count
        #expect(bindings == 300, "ld.so bound \(bindings) symbols into liblpbig.so")
        // The table's size as binutils reads it: .dynsym and .dynstr from the section headers.
        let sections = try InspectTruth.run("/usr/bin/readelf", ["-SW", "\(folder)/liblpbig.so"], environment: [:]).stdout
        let tableBytes = sections.split(separator: "\n").reduce(0) { total, line in
            let fields = line.split(separator: "]").last.map { $0.split(separator: " ") } ?? []
            guard fields.count > 4, fields[0] == ".dynsym" || fields[0] == ".dynstr" else { return total }
            return total + (Int(fields[4], radix: 16) ?? 0)
        }
        #expect((tableBytes > 256 << 10) == large, "liblpbig.so's .dynsym and .dynstr: \(tableBytes) bytes")
        let report = try Self.work(program).report
        let user = try #require(report.objects.first { $0.path.hasSuffix("/liblpuse.so") }).loaderWork
        #expect(user.lookups >= bindings, "\(user)")
        #expect(user.largeTableLookups == (large ? bindings : 0), "\(user)")
        #expect(report.totals.loaderWork.largeTableLookups == user.largeTableLookups, "only liblpuse.so looks up in it")
    }

    /// node's regime, each lookup alone in its windows of a 200k-symbol table: by construction
    /// its 64 symbols lie 75 KB apart in .dynsym, a 64 KiB window each; and once dropped from the
    /// page cache, the table is read back as installed files are, a read fault a 64 KiB window
    /// (the kernel's own count: minor faults of this thread over one byte of every page).
    @Test("a table read a page or two per fault: 64 lookups fault 64+ windows, and the file faults per 64 KiB once dropped")
    func faultPerWindow() throws {
        let generator = try Self.generator.get()
        let program = try generator.largeSymbolTable(symbols: 200_000, lookups: 64)
        #expect(try InspectTruth.run(program, [], environment: [:]).status == 0)
        let report = try Self.work(program).report
        let table = try #require(report.objects.first { $0.path.hasSuffix("/liblpbig.so") }).loaderWork
        #expect(table.symbolTableFaults >= 64 && table.symbolTablePages <= 3 * table.symbolTableFaults, "\(table)")
        let library = (program as NSString).deletingLastPathComponent + "/liblpbig.so"
        #expect(generator.dropFromPageCache() >= 4)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: library)[.size] as? Int)
        _ = try Self.readFaults(library, size: size)  // read back from disk, as a launch would
        let faults = try Self.readFaults(library, size: size)
        let windows = (size + 65_535) / 65_536
        #expect(faults >= windows - windows / 10 && faults <= windows + windows / 10 + 2,
                "\(faults) faults over \(windows) windows of 64 KiB")
    }

    /// RUSAGE_THREAD (a macro Swift does not import): the calling thread's usage only, so other
    /// tests running meanwhile do not add faults.
    static let rusageThread = __rusage_who_t(1)

    /// Minor faults this thread takes reading one byte of every 4 KiB page of a fresh private
    /// mapping of `path`.
    static func readFaults(_ path: String, size: Int) throws -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0, "open \(path)")
        defer { close(fd) }
        let mapping = try #require(mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0))
        try #require(mapping != MAP_FAILED, "mmap \(path)")
        defer { munmap(mapping, size) }
        var before = rusage()
        getrusage(Self.rusageThread, &before)
        var sum: UInt8 = 0
        for offset in stride(from: 0, to: size, by: 4_096) {
            sum &+= mapping.load(fromByteOffset: offset, as: UInt8.self)
        }
        var after = rusage()
        getrusage(Self.rusageThread, &after)
        withExtendedLifetime(sum) {}
        return after.ru_minflt - before.ru_minflt
    }

    /// glibc 2.36 looks up a symbol an object defines as STV_PROTECTED (its GLOB_DAT relocations,
    /// as gold and the Swift toolchain emit them) and keeps the object's own definition: 300 such
    /// relocations are 300 lookups in glibc's count, and in inspect's.
    @Test("GLOB_DAT relocations against protected symbols an object defines are lookups, as in glibc")
    func protectedSymbolsAreLookedUp() throws {
        let count = 300
        var library = (0..<count).map { "__attribute__((visibility(\"protected\"))) int lp_protected_\($0) = \($0);" }
        library.append("int lp_protected_sum(void) { int sum = 0; int *p;")
        // Through the GOT, unrelaxed: a GLOB_DAT per variable (gold keeps them symbolic).
        library += (0..<count).map { "  __asm__(\"movq lp_protected_\($0)@GOTPCREL(%%rip), %0\" : \"=r\"(p)); sum += *p;" }
        library.append("  return sum; }")
        let shared = try FixtureBuilder.build(
            [], output: "protected/liblpprotected.so",
            flags: ["-shared", "-fPIC", "-Wa,-mrelax-relocations=no", "-fuse-ld=gold"],
            sourcesText: library.joined(separator: "\n"))
        let directory = (shared as NSString).deletingLastPathComponent
        let program = try FixtureBuilder.build(
            [], output: "protected/protected-main",
            flags: ["-L", directory, "-llpprotected", "-Wl,-rpath,\(directory)"],
            sourcesText: "int lp_protected_sum(void);\nint main(void) { return lp_protected_sum() == \(count * (count - 1) / 2) ? 0 : 1; }\n")
        let (report, total) = try Self.work(program)
        let object = try #require(report.objects.first { $0.path.hasSuffix("/liblpprotected.so") })
        #expect(object.loaderWork.lookups >= count, "\(object.loaderWork.lookups) lookups in the library")
        let statistic = try Self.lookupStatistic(program, [])
        #expect(total.lookups <= statistic && statistic - total.lookups <= 40, "counted \(total.lookups), glibc \(statistic)")
    }

    @Test("each lookup walks the scope to its definer: 12 libraries in front add 12 steps to each")
    func scopeDepth() throws {
        let generator = try Self.generator.get()
        let shallow = try Self.work(try generator.scopeWalk(lookups: 300, fillers: 0))
        let program = try generator.scopeWalk(lookups: 300, fillers: 12)
        let deep = try Self.work(program)
        func table(_ report: InspectReport) throws -> LoaderWork {
            try #require(report.objects.first { $0.path.hasSuffix("/liblptable.so") }).loaderWork
        }
        let definer = try #require(deep.report.objects.firstIndex { $0.path.hasSuffix("/liblpsyms.so") })
        #expect(definer >= 13, "the 12 fillers come before the definer in load order")
        // 300 relocations against distinct symbols (the table's own few imports from libc too).
        let lookups = try table(deep.report).lookups
        #expect(lookups >= 300 && lookups <= 320)
        #expect(try table(shallow.report).lookups == lookups)
        // Every definer (liblpsyms, libc) comes after the fillers: each lookup walks 12 more.
        #expect(try table(deep.report).scopeSteps - table(shallow.report).scopeSteps == lookups * 12)
        #expect(deep.total.mappedObjects == deep.report.objects.count - 2, "all but the program and ld.so")
        let statistic = try Self.lookupStatistic(program, [])
        #expect(deep.total.lookups <= statistic && statistic - deep.total.lookups <= 40)
    }

    @Test("a model fitted on synthetic closures predicts held-out ones")
    func heldOut() throws {
        let generator = try Self.generator.get()
        var calibrator = Calibrator(environment: Self.environment)
        calibrator.runs = 7
        let training = try calibrator.points(try Calibrator.syntheticProbes(generator))
        let fit = try #require(CostModelFit().fit(training))
        let model = LaunchCostModel.standard.with(coefficientsPs: fit.coefficientsPs, source: "test", calibration: nil)
        let heldOut = [
            Calibrator.Probe(name: "8 libraries", path: try generator.libraries(8)),
            Calibrator.Probe(name: "3k lookups, 20 deep", path: try generator.scopeWalk(lookups: 3_000, fillers: 20)),
            Calibrator.Probe(name: "800 pages", path: try generator.spreadPages(800)),
            Calibrator.Probe(name: "25k relative", path: try generator.relocations(25_000, symbolic: false)),
        ]
        // Measured as the training points are (interleaved rounds, lower quartile), so a busy
        // spell of the shared machine falls on all of them alike.
        for point in try calibrator.points(heldOut) {
            let estimate = model.estimateNs(point.work)
            // On a shared 2-core machine: within a factor of 2 either way (the uncalibrated
            // model is off by 3-8x on real programs).
            #expect(
                estimate * 2 >= point.measuredNs && estimate <= point.measuredNs * 2,
                "\(point.name): estimate \(estimate) ns, measured \(point.measuredNs) ns, coefficients \(fit.coefficientsPs)")
        }
    }

    @Test("inspect says which cost model it used: none stored, then this host's calibration")
    func inspectNamesItsModel() throws {
        let cache = FixtureBuilder.outputRoot.appendingPathComponent("calibration-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let environment = ["XDG_CACHE_HOME": cache]
        let bare = try InspectCommandTests.inspect(["/usr/bin/true"], environment: environment)
        #expect(bare.status == 0)
        #expect(bare.stdout.contains("cost model   uncalibrated: built-in defaults from Reports/"))
        #expect(bare.stdout.contains("estimated (uncalibrated)"))
        let bareJSON = try InspectCommandTests.inspect(["--json", "/usr/bin/true"], environment: environment)
        try SchemaValidator.expectValid(Array(bareJSON.stdout.utf8), against: .inspectReport, "uncalibrated inspect --json")
        let bareModel = try #require(
            (try JSONSerialization.jsonObject(with: Data(bareJSON.stdout.utf8)) as? [String: Any])?["costModel"] as? [String: Any])
        #expect(bareModel["calibration"] == nil)
        #expect((bareModel["source"] as? String)?.contains("uncalibrated") == true)

        // A calibration for this host, fitted on made-up points, stored where inspect looks.
        let points = CostModelFitTests.points(20, coefficients: CostModelFitTests.truth)
        let host = HostInfo.current()
        let calibration = try #require(
            HostCalibration.fitted(points, host: host, measuredAt: "2026-01-02T03:04:05Z", runsPerPoint: 1, durationNs: 1))
        let stored = try CalibrationStore(directory: cache + "/launchprof").save(calibration)
        try SchemaValidator.expectValid(file: stored, against: .calibration)
        let text = try InspectCommandTests.inspect(["/usr/bin/true"], environment: environment)
        #expect(text.stdout.contains("calibrated on this host (\(host.cpu), kernel \(host.kernel)) at 2026-01-02T03:04:05Z"))
        #expect(!text.stdout.contains("uncalibrated"))
        let json = try InspectCommandTests.inspect(["--json", "/usr/bin/true"], environment: environment)
        try SchemaValidator.expectValid(Array(json.stdout.utf8), against: .inspectReport, "calibrated inspect --json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let model = try #require(root["costModel"] as? [String: Any])
        let stamp = try #require(model["calibration"] as? [String: Any])
        #expect(stamp["measuredAt"] as? String == "2026-01-02T03:04:05Z")
        #expect(stamp["cpu"] as? String == host.cpu)
        // The estimate is the stored model's price of the counted work.
        let totals = try #require(root["totals"] as? [String: Any])
        let work = try JSONDecoder().decode(
            LoaderWork.self, from: JSONSerialization.data(withJSONObject: try #require(totals["loaderWork"])))
        #expect(totals["estimatedLoaderNs"] as? Int == calibration.model.estimateNs(work))
    }

    /// The command end to end: what `--json` prints is the file it stored, byte for byte, and
    /// both validate against calibration.schema.json. The synthetic programs are this suite's
    /// (a link in the cache directory), so they are built once.
    @Test("calibrate --json prints the stored calibration, and both validate")
    func calibrateJSON() throws {
        let synthetic = try Calibrator.syntheticProbes(try Self.generator.get()).map(\.name)
        let cache = try Self.cacheWithPrograms("calibration-cli")
        defer { try? FileManager.default.removeItem(atPath: cache) }
        var environment = Self.environment
        environment["XDG_CACHE_HOME"] = cache
        let outcome = try Self.calibrate(["--runs", "4", "--json"], environment: environment, outputs: cache)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        try SchemaValidator.expectValid(Array(outcome.stdout.utf8), against: .calibration, "calibrate --json")
        let host = HostInfo.current()
        let stored = CalibrationStore(directory: cache + "/launchprof").path(for: host)
        try SchemaValidator.expectValid(file: stored, against: .calibration)
        #expect(try String(contentsOfFile: stored, encoding: .utf8) == outcome.stdout, "--json prints the stored file")
        let calibration = try JSONDecoder().decode(HostCalibration.self, from: Data(outcome.stdout.utf8))
        #expect(calibration.host.cpu == host.cpu && calibration.host.kernel == host.kernel)
        // 4 launches per program per pass; a fit that disagrees with its own points on a busy
        // host is measured again (up to 3 passes), each pass adding 4.
        #expect(calibration.runsPerPoint % 4 == 0 && (1...3).contains(calibration.runsPerPoint / 4), "\(calibration.runsPerPoint)")
        // Every synthetic program first, then the system programs present; 4 launches each.
        #expect(Array(calibration.points.map(\.name).prefix(synthetic.count)) == synthetic)
        #expect(calibration.points.allSatisfy { $0.runs >= 4 }, "\(calibration.points.map(\.runs))")
    }

    /// As root, calibrate measures in a session of its own at nice -20 in both the process and
    /// its scheduler autogroup (a build beside it must not become part of the fit): the check
    /// program, a shell that records its own nice value and autogroup, ran there, and the
    /// autogroup of the session that started it is left as it was.
    @Test("calibrate measures at high priority in a scheduling group of its own")
    func calibrateRunsAtHighPriority() throws {
        let cache = try Self.cacheWithPrograms("calibration-priority")
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let records = cache + "/priorities"
        let script = cache + "/record-priority.sh"
        try #"""
            read -r stat </proc/$$/stat
            set -- ${stat##*) }
            shift 16
            echo "$1 $(cat /proc/$$/autogroup)" >>"$RECORDS"
            """#.write(toFile: script, atomically: true, encoding: .utf8)
        var environment = Self.environment
        environment["XDG_CACHE_HOME"] = cache
        environment["RECORDS"] = records
        let ownAutogroup = try String(contentsOfFile: "/proc/self/autogroup", encoding: .utf8)
        let outcome = try Self.calibrate(
            ["--runs", "4", "--check", "/bin/sh \(script)", "--check-runs", "3"], environment: environment, outputs: cache)
        // What is checked here is where the launches ran, not the fit: on a busy host the fit may
        // still disagree with its own programs after its passes, and is then not stored.
        let fitRefused = outcome.stderr.contains("the calibration was not stored: after")
        #expect(outcome.status == 0 || fitRefused, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("measuring at nice -20 in a scheduling group of its own"), "\(outcome.stderr)")
        let lines = try String(contentsOfFile: records, encoding: .utf8).split(separator: "\n")
        // The warm-up launch and the three measured ones, each at nice -20 in an autogroup at -20.
        #expect(lines.count >= 3, "\(lines)")
        for line in lines {
            #expect(line.hasPrefix("-20 ") && line.hasSuffix("nice -20"), "\(line)")
        }
        #expect(try String(contentsOfFile: "/proc/self/autogroup", encoding: .utf8) == ownAutogroup)
    }

    /// A busy spell must slow the fit's programs and the checked ones alike: the check program
    /// is launched in each of the fit's rounds (4 here: no program needs more), between them (it records its own
    /// CLOCK_MONOTONIC; a round of the fit's programs takes far longer than the gap between two
    /// launches of one program).
    @Test("calibrate launches the --check programs in the fit's interleaved rounds")
    func checksInterleaved() throws {
        let cache = try Self.cacheWithPrograms("calibration-rounds")
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let records = cache + "/launches"
        let script = cache + "/record-launch.sh"
        try "read -r up _ </proc/uptime; echo \"$up\" >>\"$RECORDS\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        var environment = Self.environment
        environment["XDG_CACHE_HOME"] = cache
        environment["RECORDS"] = records
        let outcome = try Self.calibrate(
            ["--runs", "4", "--check", "/bin/sh \(script)", "--check-runs", "4"], environment: environment, outputs: cache)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("sh \(script)"), "\(outcome.stdout)")
        let times = try String(contentsOfFile: records, encoding: .utf8).split(separator: "\n").compactMap { Double($0) }
        // Per round a warm-up and one measured launch (4 runs over 4 rounds: no more rounds than
        // the most runs any program needs), in as many passes
        // as the fit took (1 to 3).
        #expect(times.count % 8 == 0 && times.count >= 8, "\(times)")
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        // Consecutive launches within a round are close; between rounds the fit's 30-odd
        // programs ran (hundreds of launches): at least 3 gaps of 0.2 s or more.
        #expect(gaps.filter { $0 >= 0.2 }.count >= 3, "gaps \(gaps)")
    }

    /// Ctrl-C while the launches are measured: exit 130 naming the signal, no calibration
    /// stored, the launched program killed. The check program announces its launch through a
    /// FIFO, so the interrupt lands mid-measurement without a timed sleep.
    @Test("calibrate interrupted mid-measurement exits 130 and stores nothing")
    func calibrateInterrupted() throws {
        let cache = try Self.cacheWithPrograms("calibration-interrupt")
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let fifo = cache + "/launched", pids = cache + "/pids", script = cache + "/announce.sh"
        #expect(mkfifo(fifo, 0o600) == 0)
        try "echo $$ >>\"$PIDS\"; echo launched >\"$FIFO\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        var environment = Self.environment
        environment["XDG_CACHE_HOME"] = cache
        environment["FIFO"] = fifo
        environment["PIDS"] = pids
        let outcome = try Self.calibrate(
            ["--runs", "4", "--check", "/bin/sh \(script)", "--check-runs", "3"], environment: environment, outputs: cache
        ) { process in
            var ready = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            #expect(poll(&ready, 1, 300_000) == 1, "the check program was never launched")
            kill(process.processIdentifier, SIGINT)
        }
        #expect(outcome.status == 130, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("interrupted by signal 2"), "\(outcome.stderr)")
        let stored = CalibrationStore(directory: cache + "/launchprof").path(for: HostInfo.current())
        #expect(!FileManager.default.fileExists(atPath: stored))
        let launched = try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap { pid_t($0) }
        #expect(!launched.isEmpty)
        for pid in launched {
            #expect(kill(pid, 0) != 0 && errno == ESRCH, "check program \(pid) left behind")
        }
    }

    /// A fresh cache directory (`XDG_CACHE_HOME`) whose synthetic programs are the suite's, built
    /// once: a calibrate run there measures without building them again.
    static func cacheWithPrograms(_ name: String) throws -> String {
        let generator = try Self.generator.get()
        let cache = FixtureBuilder.outputRoot.appendingPathComponent("\(name)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: cache + "/launchprof", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: cache + "/launchprof/programs", withDestinationPath: generator.directory)
        return cache
    }

    /// Runs `launchprof calibrate` with stdout and stderr in files under `outputs`, read once it
    /// has exited: the process that releases its uprobes in the background (a grandchild) keeps
    /// inherited pipes open for as long as that takes, which is not what this suite tests.
    /// `whileRunning` is called once it has started (to signal it, say).
    static func calibrate(
        _ arguments: [String], environment: [String: String], outputs: String,
        whileRunning: (Process) -> Void = { _ in }
    ) throws -> LaunchprofCLI.Outcome {
        let out = outputs + "/stdout", err = outputs + "/stderr"
        for file in [out, err] {
            #expect(FileManager.default.createFile(atPath: file, contents: nil), "\(file)")
        }
        let process = Process()
        process.executableURL = try LaunchprofBinary.url()
        process.arguments = ["calibrate"] + arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        whileRunning(process)
        process.waitUntilExit()
        return LaunchprofCLI.Outcome(
            status: process.terminationStatus, stdout: try String(contentsOfFile: out, encoding: .utf8),
            stderr: try String(contentsOfFile: err, encoding: .utf8))
    }
}
