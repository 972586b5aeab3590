import LaunchprofReport
import Testing

@testable import LaunchprofTracing

/// The runtime recorder's rules on scripted hits: no process, no clock. The probes are a plan's
/// (one probe per role, in files named after their library); hits name a role, a thread, a time.
@Suite("Runtime recorder")
struct RuntimeRecorderTests {
    static let pid: Int32 = 100

    private static func probe(_ role: RuntimeProbe.Role, source: String = "loader") -> RuntimeProbe {
        let returns = role.rawValue.hasSuffix("Return")
        return RuntimeProbe(
            path: "/lib/\(source)", offset: UInt64(RuntimeProbe.Role.allCases.firstIndex(of: role)!) * 16,
            isReturn: returns, role: role, source: source, emulated: true)
    }

    /// A plan with every role, GApplication's in `gtk3`, Qt's in `qt5`, Python's in `python`.
    private static let plan: RuntimeProbePlan = {
        var probes: [RuntimeProbe] = []
        for role in RuntimeProbe.Role.allCases {
            let name = role.rawValue
            let source =
                name.hasPrefix("application") || name.hasPrefix("gtk") ? "gtk3"
                : name.hasPrefix("qt") ? "qt5" : name.hasPrefix("sdl") ? "sdl2" : name.hasPrefix("tk") ? "tk"
                : name.hasPrefix("python") ? "python" : "loader"
            probes.append(probe(role, source: source))
        }
        return RuntimeProbePlan(probes: probes)
    }()

    private func hit(_ role: RuntimeProbe.Role, _ time: UInt64, thread: Int32 = pid, _ values: RuntimeProbeHit.Value?...) -> RuntimeProbeHit {
        let probe = Self.plan.probes.first { $0.role == role }!
        return RuntimeProbeHit(key: probe.key, thread: thread, timeNs: time, values: values)
    }

    private func spans(_ hits: [RuntimeProbeHit]) -> [ProbedSpan] {
        RuntimeRecorder(plan: Self.plan, pid: Self.pid).spans(hits)
    }

    private func span(
        _ name: String, _ start: UInt64, _ end: UInt64?, _ object: String? = nil, source: String = "loader",
        thread: Int32? = nil
    ) -> ProbedSpan {
        ProbedSpan(name: name, startNs: start, endNs: end, object: object, source: source, thread: thread)
    }

    @Test func aDlopenIsMappedRelocatedAndInitialisedPerObject() {
        let result = spans([
            // Before main the loader initialises the closure: names remembered, no spans.
            hit(.loaderInit, 5), hit(.loaderObjectInit, 6, .string("/lib/libc.so.6")),
            hit(.dlopenCall, 100, .string("libspin.so"), .integer(0x1234)),
            hit(.loaderRelocate, 140), hit(.loaderRelocate, 150),
            hit(.loaderInit, 170),
            hit(.loaderObjectInit, 171, .string("/opt/libdep.so")),
            hit(.loaderObjectInit, 180, .string("/lib/libc.so.6")),  // already initialised
            hit(.loaderObjectInit, 181, .string("/opt/libspin.so")),
            hit(.dlopenReturn, 300, .integer(0x5000)),
        ])
        #expect(result == [
            span("dlopen", 100, 300, "libspin.so"),
            span("dlopen.map", 100, 140, "libspin.so"),
            span("dlopen.relocate", 140, 170, "libspin.so"),
            span("dlopen.init", 171, 180, "/opt/libdep.so"),
            span("dlopen.init", 181, 300, "/opt/libspin.so"),
        ])
    }

    /// A dlopen's caller: among the objects initialised before the call (each `call_init` hit
    /// carries the name and the load address), the one loaded highest at or below the return
    /// address, if its file maps the address; the main program's unnamed link map is the plan's
    /// program. An address no such object maps, or an object initialised only later, names none.
    @Test func aDlopensCallerIsTheObjectWhoseFileMapsTheReturnAddress() {
        var plan = Self.plan
        plan.program = "/usr/bin/app"
        // Each file maps its first 0x1000 bytes.
        let maps: (String, UInt64) -> Bool = { _, address in address < 0x1000 }
        let hits = [
            hit(.loaderObjectInit, 1, .string(""), .integer(0x5555_0000)),
            hit(.loaderObjectInit, 2, .string("/lib/libc.so.6"), .integer(0x7f00_0000)),
            hit(.loaderObjectInit, 3, .string("/lib/libgmodule.so"), .integer(0x7f10_0000)),
            hit(.dlopenCall, 10, .string("a.so"), .integer(0x5555_0400)),  // the program
            hit(.dlopenReturn, 11, .integer(1)),
            hit(.dlopenCall, 20, .string("b.so"), .integer(0x7f10_0800)),  // libgmodule, not libc below it
            hit(.loaderInit, 21), hit(.loaderObjectInit, 22, .string("/opt/b.so"), .integer(0x7f20_0000)),
            hit(.dlopenCall, 23, .string("c.so"), .integer(0x7f20_0010)),  // b.so's constructor
            hit(.dlopenReturn, 24, .integer(1)),
            hit(.dlopenReturn, 30, .integer(1)),
            hit(.dlopenCall, 40, .string("d.so"), .integer(0x7f10_2000)),  // past libgmodule's file: anonymous code
            hit(.dlopenReturn, 41, .integer(0)),
            hit(.dlopenCall, 50, .string("e.so"), .integer(0x7f30_0000)),  // an object initialised later
            hit(.dlopenReturn, 51, .integer(0)),
            hit(.loaderObjectInit, 60, .string("/opt/late.so"), .integer(0x7f30_0000)),
        ]
        let loads = RuntimeRecorder(plan: plan, pid: Self.pid).spans(hits, objectMaps: maps).filter { $0.name == "dlopen" }
        #expect(loads.map(\.object) == ["a.so", "b.so", "c.so", "d.so", "e.so"])
        #expect(loads.map(\.caller) == ["/usr/bin/app", "/lib/libgmodule.so", "/opt/b.so", nil, nil])
        // Without a file to check against (unreadable), no caller is named.
        let unchecked = RuntimeRecorder(plan: plan, pid: Self.pid).spans(hits).filter { $0.name == "dlopen" }
        #expect(unchecked.allSatisfy { $0.caller == nil })
    }

    @Test func aFailedOrRepeatedDlopenOnlyMaps() {
        let result = spans([
            hit(.loaderObjectInit, 5, .string("/lib/libc.so.6")),
            hit(.dlopenCall, 10, .string("libmissing.so"), .integer(1)), hit(.dlopenReturn, 40, .integer(0)),
            hit(.dlopenCall, 50, .string("libc.so.6"), .integer(1)), hit(.loaderInit, 55),
            hit(.loaderObjectInit, 56, .string("/lib/libc.so.6")), hit(.dlopenReturn, 60, .integer(7)),
        ])
        #expect(result == [
            span("dlopen", 10, 40, "libmissing.so"), span("dlopen.map", 10, 40, "libmissing.so"),
            span("dlopen", 50, 60, "libc.so.6"), span("dlopen.map", 50, 55, "libc.so.6"),
        ])
    }

    @Test func aConstructorsDlopenNestsInsideItsInit() {
        let result = spans([
            hit(.dlopenCall, 100, .string("libouter.so")), hit(.loaderRelocate, 110), hit(.loaderInit, 120),
            hit(.loaderObjectInit, 121, .string("/x/libouter.so")),
            hit(.dlopenCall, 130, .string("libinner.so")), hit(.loaderRelocate, 135), hit(.loaderInit, 140),
            hit(.loaderObjectInit, 141, .string("/x/libinner.so")), hit(.dlopenReturn, 160),
            hit(.dlopenReturn, 200),
        ])
        #expect(result == [
            span("dlopen", 100, 200, "libouter.so"), span("dlopen.map", 100, 110, "libouter.so"),
            span("dlopen.relocate", 110, 120, "libouter.so"), span("dlopen.init", 121, 200, "/x/libouter.so"),
            span("dlopen", 130, 160, "libinner.so"), span("dlopen.map", 130, 135, "libinner.so"),
            span("dlopen.relocate", 135, 140, "libinner.so"), span("dlopen.init", 141, 160, "/x/libinner.so"),
        ])
    }

    @Test func dlopensOnOtherThreadsAreTheirs() {
        let result = spans([
            hit(.dlopenCall, 100, thread: 101, .string("libgl.so")),
            hit(.dlopenCall, 105, .string("libime.so")),
            hit(.loaderRelocate, 110, thread: 101), hit(.loaderInit, 120, thread: 101),
            hit(.loaderObjectInit, 121, thread: 101, .string("/x/libgl.so")),
            hit(.dlopenReturn, 130, thread: 101),
            hit(.dlopenReturn, 140),
        ])
        #expect(result == [
            span("dlopen", 100, 130, "libgl.so", thread: 101), span("dlopen.map", 100, 110, "libgl.so", thread: 101),
            span("dlopen", 105, 140, "libime.so"), span("dlopen.map", 105, 140, "libime.so"),
            span("dlopen.relocate", 110, 120, "libgl.so", thread: 101),
            span("dlopen.init", 121, 130, "/x/libgl.so", thread: 101),
        ])
    }

    @Test func aDlopenTheProcessEndedInsideHasNoEnd() {
        let result = spans([hit(.dlopenCall, 10, .string("libslow.so")), hit(.loaderRelocate, 20)])
        #expect(result == [
            span("dlopen", 10, nil, "libslow.so"), span("dlopen.map", 10, 20, "libslow.so"),
            span("dlopen.relocate", 20, nil, "libslow.so"),
        ])
    }

    @Test func gApplicationsPhasesAreRegisterAndActivate() {
        let result = spans([
            hit(.applicationRegister, 100), hit(.gtkInit, 110), hit(.gtkInitReturn, 150),
            hit(.applicationRegisterReturn, 200),
            // g_application_run registers again: a later call is not the launch's.
            hit(.applicationRegister, 210), hit(.applicationRegisterReturn, 211),
            hit(.applicationActivate, 220), hit(.applicationActivateReturn, 300),
            hit(.applicationActivate, 400), hit(.applicationActivateReturn, 410),
        ])
        #expect(result == [
            span("willFinishLaunching", 100, 200, source: "gtk3"), span("gtk_init", 110, 150, source: "gtk3"),
            span("didFinishLaunching", 220, 300, source: "gtk3"),
        ])
    }

    @Test func gtkWithoutGApplicationIsInitThenMain() {
        let result = spans([hit(.gtkInit, 100), hit(.gtkInitReturn, 150), hit(.gtkMain, 190)])
        #expect(result == [
            span("willFinishLaunching", 100, 150, source: "gtk3"), span("gtk_init", 100, 150, source: "gtk3"),
            span("didFinishLaunching", 150, 190, source: "gtk3"),
        ])
    }

    @Test func qtIsTheOutermostConstructorThenExec() {
        // QApplication's constructor; a QCoreApplication made later (a helper) does not count.
        let result = spans([
            hit(.qtConstructor, 100), hit(.qtConstructor, 101), hit(.qtConstructorReturn, 140),
            hit(.qtConstructorReturn, 150), hit(.qtConstructor, 160), hit(.qtConstructorReturn, 161),
            hit(.qtExec, 200), hit(.qtExec, 300),
        ])
        #expect(result == [
            span("willFinishLaunching", 100, 150, source: "qt5"), span("didFinishLaunching", 150, 200, source: "qt5"),
        ])
    }

    @Test func sdlAndTkAreInitThenTheirFirstWindowOrLoop() {
        #expect(spans([hit(.sdlInit, 10), hit(.sdlInitReturn, 20), hit(.sdlCreateWindowReturn, 35), hit(.sdlCreateWindowReturn, 50)]) == [
            span("willFinishLaunching", 10, 20, source: "sdl2"), span("didFinishLaunching", 20, 35, source: "sdl2"),
        ])
        #expect(spans([hit(.tkInit, 10), hit(.tkInitReturn, 25)]) == [span("willFinishLaunching", 10, 25, source: "tk")])
    }

    @Test func pythonsImportsNestAndItsStartupEndsWhereTheCommandRuns() {
        let result = spans([
            hit(.pythonMain, 10), hit(.pythonImportStart, 12, .string("site")), hit(.pythonImportDone, 30, .string("site")),
            hit(.pythonRun, 40),
            hit(.pythonImportStart, 50, .string("json")), hit(.pythonImportStart, 52, .string("json.decoder")),
            hit(.pythonImportDone, 70, .string("json.decoder")), hit(.pythonImportDone, 90, .string("json")),
            hit(.pythonImportStart, 95, .string("http.client")),
        ])
        #expect(result == [
            span("python.startup", 10, 40, source: "python"), span("import", 12, 30, "site", source: "python"),
            span("import", 50, 90, "json", source: "python"), span("import", 52, 70, "json.decoder", source: "python"),
            span("import", 95, nil, "http.client", source: "python"),
        ])
    }

    @Test func anImportThatRaisedIsEndedByItsImportersDone() {
        // `a` imports `b`, which raises before its own done; `a` catches it and finishes.
        let result = spans([
            hit(.pythonImportStart, 10, .string("a")), hit(.pythonImportStart, 12, .string("b")),
            hit(.pythonImportDone, 30, .string("a")),
        ])
        #expect(result == [span("import", 10, 30, "a", source: "python"), span("import", 12, 30, "b", source: "python")])
    }
}
