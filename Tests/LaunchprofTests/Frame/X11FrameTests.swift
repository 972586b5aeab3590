import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// Time to first frame on a real X server (Xvfb, started and stopped by each test): launchprof's
/// own client sees the child's window mapped and its first damage.
@Suite(.serialized)
struct X11FrameTests {
    static func fixture() throws -> String {
        try FixtureBuilder.build(["frame-x11.c"], output: "frame/frame-x11", flags: ["-lxcb"])
    }

    static func instant(_ run: LaunchRun, _ name: String) -> UInt64? {
        run.phases.first { $0.name == name }?.startNs
    }

    /// The plain xcb fixture: firstFrame within max(2 ms, 2%) of the fixture's own clock at its
    /// first drawing (after 20 ms of work past the map, so the server's painting of the border
    /// and background at the map, also damage, must not count) — between its clock just before
    /// the drawing request and after the server's answer to its round trip; windowMapped before
    /// it, both after main.
    @Test(arguments: [ReadinessPolicy.frame, .automatic])
    func fixtureFirstFrameMatchesItsClock(readiness: ReadinessPolicy) throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let program = try Self.fixture()
        var matched = 0
        for index in 0..<3 {
            let truth = FixtureTruth.temporaryPath()
            defer { try? FileManager.default.removeItem(atPath: truth) }
            let outcome = try RunHarness.run(
                program, environment: ["DISPLAY": server.display, "LP_FIXTURE_TRUTH": truth]
            ) { configuration in
                configuration.readiness = readiness
                // Lets the fixture write its truth line after its round trip.
                configuration.lingerNs = 300_000_000
            }
            let run = try #require(outcome.runs.first)
            let facts = try FixtureTruth(contentsOf: truth)
            let main = try #require(Self.instant(run, LaunchPhase.main), "run \(index): no main")
            let mapped = try #require(Self.instant(run, LaunchPhase.windowMapped), "run \(index): no windowMapped")
            let frame = try #require(Self.instant(run, LaunchPhase.firstFrame), "run \(index): no firstFrame")
            #expect(main < mapped && mapped < frame, "run \(index): main \(main), windowMapped \(mapped), firstFrame \(frame)")
            let fixtureMain = try #require(facts.first("main"))
            let shown = try #require(facts.first("first-frame", "x11"), "run \(index): the fixture wrote no first-frame")
            // Both as spans from main, so launchprof's clock and the fixture's compare directly.
            let sent = Int64(shown.beginNs - fixtureMain.beginNs), answered = Int64(shown.endNs - fixtureMain.beginNs)
            let measured = Int64(frame) - Int64(main)
            let bound = max(2_000_000, answered / 50)
            let within = measured >= sent - bound && measured <= answered + bound
            if within { matched += 1 }
            #expect(within, "run \(index): firstFrame \(measured) ns after main, fixture sent it at \(sent) ns, answered at \(answered) ns")
            #expect(run.metrics.timeToFirstFrameNs == frame)
        }
        #expect(matched == 3)
    }

    /// Under a reparenting window manager (openbox) the root sees only the frame's map, which the
    /// window manager owns: the child's own window must still give windowMapped and a firstFrame
    /// matching the fixture's clock, for the fixture and for xeyes.
    @Test func reparentingWindowManagerKeepsTheAppsWindow() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        try server.startWindowManager()
        let truth = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truth) }
        let outcome = try RunHarness.run(
            try Self.fixture(), environment: ["DISPLAY": server.display, "LP_FIXTURE_TRUTH": truth]
        ) { configuration in
            configuration.readiness = .frame
            configuration.lingerNs = 300_000_000
            configuration.timeoutNs = 20_000_000_000
        }
        let run = try #require(outcome.runs.first)
        #expect(run.outcome?.kind == .completed, "\(String(describing: run.outcome))")
        let facts = try FixtureTruth(contentsOf: truth)
        let main = try #require(Self.instant(run, LaunchPhase.main))
        let mapped = try #require(Self.instant(run, LaunchPhase.windowMapped), "no windowMapped under openbox")
        let frame = try #require(Self.instant(run, LaunchPhase.firstFrame), "no firstFrame under openbox")
        #expect(main < mapped && mapped < frame)
        let fixtureMain = try #require(facts.first("main"))
        let shown = try #require(facts.first("first-frame", "x11"))
        let sent = Int64(shown.beginNs - fixtureMain.beginNs), answered = Int64(shown.endNs - fixtureMain.beginNs)
        let measured = Int64(frame) - Int64(main)
        let bound = max(2_000_000, answered / 50)
        #expect(measured >= sent - bound && measured <= answered + bound,
                "firstFrame \(measured) ns after main, fixture sent it at \(sent) ns, answered at \(answered) ns")

        let eyes = try RunHarness.run("xeyes", runs: 2, environment: ["DISPLAY": server.display]) { configuration in
            configuration.readiness = .frame
            configuration.timeoutNs = 20_000_000_000
        }
        for run in eyes.runs {
            #expect(Self.instant(run, LaunchPhase.windowMapped) != nil && Self.instant(run, LaunchPhase.firstFrame) != nil,
                    "xeyes run \(run.index) under openbox: \(run.phases.map(\.name))")
        }
    }

    /// Real programs nobody here wrote: firstFrame in every run, after main, windowMapped before.
    @Test(arguments: [
        ("xeyes", [String]()), ("xterm", []), ("glxgears", []), ("gtk3-demo", []),
        // A window of a descendant counts: the shell forks xeyes (a command list is not exec'd).
        ("/bin/sh", ["-c", "xeyes; true"]),
    ])
    func realProgramsShowAFirstFrame(program: String, arguments: [String]) throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let outcome = try RunHarness.run(
            program, arguments, runs: 3,
            environment: ["DISPLAY": server.display, "LIBGL_ALWAYS_SOFTWARE": "1", "NO_AT_BRIDGE": "1"]
        ) { configuration in
            configuration.readiness = .frame
            configuration.timeoutNs = 20_000_000_000
        }
        Self.expectEveryRunFramed(outcome, runs: 3, program)
    }

    /// A first frame the program showed without a drawing request after the map, and one drawn
    /// before launchprof could watch the window: each within max(2 ms, 2%) of the fixture's clock
    /// around it (from main, as above), with and without a reparenting window manager.
    /// - FRAME_BACKGROUND_PIXMAP: the window's background is a picture (as feh's), painted by the
    ///   server at the map; nothing is drawn after it.
    /// - FRAME_GRAB: the window is created, mapped and drawn into inside a server grab, so
    ///   launchprof's watch of the window runs only after the drawing (the screens' damage saw it).
    /// (A grab under a window manager is no case: the map waits for the window manager, which
    /// the grab holds, so the drawing lands on an unmapped window and is lost.)
    @Test(arguments: [("FRAME_BACKGROUND_PIXMAP", false), ("FRAME_GRAB", false), ("FRAME_BACKGROUND_PIXMAP", true)])
    func contentWithoutALaterDrawingIsAFirstFrame(setting: String, windowManager: Bool) throws {
        let server = try XvfbServer()
        defer { server.stop() }
        if windowManager { try server.startWindowManager() }
        let program = try Self.fixture()
        for index in 0..<3 {
            let truth = FixtureTruth.temporaryPath()
            defer { try? FileManager.default.removeItem(atPath: truth) }
            let outcome = try RunHarness.run(
                program, environment: ["DISPLAY": server.display, "LP_FIXTURE_TRUTH": truth, setting: "1"]
            ) { configuration in
                configuration.readiness = .frame
                configuration.lingerNs = 300_000_000
                configuration.timeoutNs = 20_000_000_000
            }
            let run = try #require(outcome.runs.first)
            #expect(!run.timedOut, "\(setting) run \(index): timed out")
            let facts = try FixtureTruth(contentsOf: truth)
            let main = try #require(Self.instant(run, LaunchPhase.main))
            let mapped = try #require(Self.instant(run, LaunchPhase.windowMapped), "\(setting) run \(index): no windowMapped")
            let frame = try #require(Self.instant(run, LaunchPhase.firstFrame), "\(setting) run \(index): no firstFrame")
            #expect(main < mapped && mapped <= frame, "\(setting) run \(index): main \(main), windowMapped \(mapped), firstFrame \(frame)")
            let fixtureMain = try #require(facts.first("main"))
            let shown = try #require(facts.first("first-frame", "x11"), "\(setting) run \(index): the fixture wrote no first-frame")
            let sent = Int64(shown.beginNs - fixtureMain.beginNs), answered = Int64(shown.endNs - fixtureMain.beginNs)
            let measured = Int64(frame) - Int64(main)
            let bound = max(2_000_000, answered / 50)
            #expect(measured >= sent - bound && measured <= answered + bound,
                    "\(setting) run \(index): firstFrame \(measured) ns after main, the fixture showed it between \(sent) and \(answered) ns")
        }
    }

    /// Real programs whose first frames were missed: xcalc and xmessage draw their text into
    /// subwindows (and under load before launchprof watches the window), feh's picture is its
    /// window's background pixmap (no drawing after the map). Every run shows a first frame, at or
    /// after windowMapped, without and with a reparenting window manager.
    @Test(
        .enabled(if: ["xcalc", "xmessage", "feh"].allSatisfy(Self.installed),
                 "xcalc, xmessage and feh must be installed: run Scripts/setup.sh (Debian packages x11-apps, feh)"),
        arguments: [false, true])
    func programsWithoutADrawingAfterTheMapShowAFirstFrame(windowManager: Bool) throws {
        let server = try XvfbServer()
        defer { server.stop() }
        if windowManager { try server.startWindowManager() }
        let picture = try Self.picture()
        defer { try? FileManager.default.removeItem(atPath: picture) }
        for (program, arguments) in [("xcalc", [String]()), ("xmessage", ["hello from launchprof"]), ("feh", [picture])] {
            let outcome = try RunHarness.run(program, arguments, runs: 5, environment: ["DISPLAY": server.display]) { configuration in
                configuration.readiness = .frame
                configuration.timeoutNs = 20_000_000_000
            }
            Self.expectEveryRunFramed(outcome, runs: 5, "\(program) (window manager: \(windowManager))")
        }
    }

    /// No metric after launchprof ended the run: the fixture draws only when SIGTERM (the
    /// timeout's) arrives and then waits for SIGKILL, so launchprof sees that first frame while it
    /// still watches the run. The run is timed out, firstFrame absent and in no metric, and a
    /// warning says the late frame was left out.
    @Test func aFirstFrameAfterTheTimeoutIsNoMetric() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let truth = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truth) }
        let outcome = try RunHarness.run(
            try Self.fixture(), runs: 2,
            environment: ["DISPLAY": server.display, "LP_FIXTURE_TRUTH": truth, "FRAME_DRAW_ON_TERM": "1"]
        ) { configuration in
            configuration.readiness = .frame
            configuration.timeoutNs = 1_000_000_000
            configuration.terminationGraceNs = 500_000_000
        }
        let facts = try FixtureTruth(contentsOf: truth)
        #expect(facts.all("late-frame").count == 2, "\(facts.entries)")
        #expect(outcome.runs.count == 2)
        for run in outcome.runs {
            #expect(run.timedOut)
            #expect(Self.instant(run, LaunchPhase.windowMapped) != nil, "run \(run.index): \(run.phases.map(\.name))")
            #expect(Self.instant(run, LaunchPhase.firstFrame) == nil, "run \(run.index): \(run.phases.map(\.name))")
            #expect(run.metrics.timeToFirstFrameNs == nil)
            #expect(run.absent.contains { $0.phase == LaunchPhase.firstFrame }, "run \(run.index): \(run.absent)")
            let late = run.warnings.first { $0.code == .eventsAfterEnd }
            #expect(late?.message.contains("a first frame on the display") == true, "run \(run.index): \(run.warnings.map(\.message))")
        }
        #expect(outcome.summary.timeToFirstFrameNs == nil)
    }

    /// Every one of the `runs` runs reached main, then windowMapped, then firstFrame, in time.
    static func expectEveryRunFramed(_ outcome: RunHarness.Outcome, runs: Int, _ label: String) {
        #expect(outcome.runs.count == runs, "\(label): \(outcome.runs.count) runs")
        for run in outcome.runs {
            let main = instant(run, LaunchPhase.main)
            let mapped = instant(run, LaunchPhase.windowMapped)
            let frame = instant(run, LaunchPhase.firstFrame)
            #expect(!run.timedOut && main != nil && mapped != nil && frame != nil,
                    "\(label) run \(run.index): \(run.phases.map(\.name)), \(String(describing: run.outcome))")
            if let main, let mapped, let frame {
                #expect(main < mapped && mapped <= frame, "\(label) run \(run.index): main \(main), windowMapped \(mapped), firstFrame \(frame)")
            }
        }
    }

    static func installed(_ program: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(program)")
        }
    }

    /// A 240×160 picture (binary PPM, which feh reads) that is not one colour: a gradient.
    static func picture() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lp-picture-\(UUID().uuidString).ppm").path
        let (width, height) = (240, 160)
        var bytes = Array("P6\n\(width) \(height)\n255\n".utf8)
        for y in 0..<height {
            for x in 0..<width { bytes += [UInt8(x * 255 / width), UInt8(y * 255 / height), 128] }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A display client that never shows a window: `--ready frame` times out and says what it
    /// waited for; automatic readiness falls back to the exit (here: the timeout, no frame).
    @Test func aProgramWithoutAWindowTimesOutNamingTheDisplay() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let outcome = try RunHarness.run(
            try Self.fixture(), environment: ["DISPLAY": server.display, "FRAME_WINDOWS": "0"]
        ) { configuration in
            configuration.readiness = .frame
            configuration.timeoutNs = 1_000_000_000
        }
        let run = try #require(outcome.runs.first)
        #expect(run.timedOut)
        #expect(Self.instant(run, LaunchPhase.firstFrame) == nil)
        #expect(Self.instant(run, LaunchPhase.windowMapped) == nil)
        let reason = run.exitStatus?.killedBy ?? ""
        #expect(reason.contains("waiting for a first frame on display \(server.display)"), "\(reason)")
        #expect(run.absent.contains { $0.phase == LaunchPhase.firstFrame })
    }

    /// A server without DAMAGE cannot show launchprof a first frame: an error naming it. Without
    /// X-Resource, owners come from `_NET_WM_PID` (GTK sets it), and every run says so.
    @Test func missingExtensionsAreNamed() throws {
        let noDamage = try XvfbServer(disabling: ["DAMAGE"])
        defer { noDamage.stop() }
        var configuration = RunConfiguration(program: "/bin/true", arguments: [])
        configuration.inheritedEnvironment = ProcessInfo.processInfo.environment
        configuration.environment = ["DISPLAY": noDamage.display]
        configuration.readiness = .frame
        #expect {
            _ = try RunSession(configuration: configuration)
        } throws: { error in
            "\(error)".contains("the X server on \(noDamage.display) lacks the DAMAGE extension")
        }

        let noXRes = try XvfbServer(disabling: ["X-Resource"])
        defer { noXRes.stop() }
        let outcome = try RunHarness.run(
            "gtk3-demo", environment: ["DISPLAY": noXRes.display, "NO_AT_BRIDGE": "1"]
        ) { configuration in
            configuration.readiness = .frame
            configuration.timeoutNs = 20_000_000_000
        }
        let run = try #require(outcome.runs.first)
        #expect(Self.instant(run, LaunchPhase.firstFrame) != nil, "\(run.phases.map(\.name))")
        #expect(run.warnings.contains { $0.code == .displayOwnerFromWindowProperty })
    }

    /// The CLI: `--ready frame` without a display is a usage of the environment it names, exit 69.
    @Test func cliNamesTheMissingDisplay() throws {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DISPLAY")
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        let outcome = try LaunchprofCLI.run(["run", "-r", "1", "--ready", "frame", "/bin/true"], environment: environment)
        #expect(outcome.status == 69)
        #expect(outcome.stderr.contains("neither DISPLAY nor WAYLAND_DISPLAY is set"), "\(outcome.stderr)")
    }

    /// The observer's libxcb bindings are linked into launchprof, not loaded from the host: with
    /// the host's DAMAGE and X-Resource libraries hidden (bind mounts of /dev/null over them in a
    /// mount namespace of launchprof's own; the plain xcb fixture uses neither), its first frame
    /// is seen.
    @Test func needsNoXcbLibrariesOnTheHost() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let cache = try LaunchprofCLI.capture("/sbin/ldconfig", ["-p"])
        let libraries = try ["libxcb-damage.so.0", "libxcb-res.so.0"].map { soname in
            let line = try #require(cache.split(separator: "\n").first { $0.contains("\(soname) ") }, "ldconfig -p knows no \(soname)")
            let linked = try #require(line.components(separatedBy: "=> ").last).trimmingCharacters(in: .whitespaces)
            return try #require(realpath(linked, nil).map { path in defer { free(path) }; return String(cString: path) })
        }
        let binary = try LaunchprofBinary.url().path
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = server.display
        let hide = #"mount --bind /dev/null "$1" && mount --bind /dev/null "$2" && exec "$3" run -r 1 --ready frame "$4""#
        let outcome = try LaunchprofCLI.run(
            executable: "/usr/bin/unshare", ["-m", "/bin/sh", "-c", hide, "sh"] + libraries + [binary, try Self.fixture()],
            environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("firstFrame"), "\(outcome.stdout)")
    }

    /// No display reachable: an error before any run, naming what is missing.
    @Test func noDisplayIsAClearError() throws {
        var configuration = RunConfiguration(program: "/bin/true", arguments: [])
        configuration.inheritedEnvironment = ProcessInfo.processInfo.environment.filter {
            $0.key != "DISPLAY" && $0.key != "WAYLAND_DISPLAY"
        }
        configuration.readiness = .frame
        #expect {
            _ = try RunSession(configuration: configuration)
        } throws: { error in
            "\(error)".contains("neither DISPLAY nor WAYLAND_DISPLAY is set")
        }
        // A display number nothing serves (Xvfb's own pick is free until it binds it; :4095 is
        // far above what any test here starts).
        configuration.environment = ["DISPLAY": ":4095"]
        #expect {
            _ = try RunSession(configuration: configuration)
        } throws: { error in
            "\(error)".contains("cannot connect to the X display :4095")
        }
    }
}
