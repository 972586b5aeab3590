import Foundation
import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofCore
@testable import LaunchprofReport
@testable import LaunchprofRenderers

/// A baseline from another session: the suite's reference launch (a program that did not change)
/// measures how far the two sessions differ, and no change smaller than that drift is called.
@Suite("compare: the sessions' drift, from a reference launch")
struct DriftControlTests {
    /// Two folders of one suite: `reference` and `app`, the new session `drift` slower on
    /// everything, and the app's didFinishLaunching `change` slower on top.
    private static func folders(drift: Double, change: Double, seed: UInt64) -> (BenchFolder, BenchFolder, ComparisonSettings) {
        var generator = SeededGenerator(seed: seed)
        func report(_ workNs: Double) -> LaunchReport {
            BenchSamples.report(runs: 20, workNs: UInt64(workNs), noise: 0.02, generator: &generator)
        }
        var settings = ComparisonSettings()
        settings.reference = "reference"
        func folder(_ path: String, reference: LaunchReport, app: LaunchReport) -> BenchFolder {
            BenchFolder(
                path: path,
                entries: [
                    .init(name: "reference", report: reference, counts: nil, thresholds: [:], error: nil),
                    .init(name: "app", report: app, counts: nil, thresholds: [:], error: nil),
                ],
                settings: settings, isFolder: true)
        }
        let base = folder("base", reference: report(8_000_000), app: report(8_000_000))
        let new = folder(
            "new", reference: report(8_000_000 * (1 + drift)), app: report(8_000_000 * (1 + drift) * (1 + change)))
        return (base, new, settings)
    }

    @Test func aChangeWithinTheDriftIsNoVerdictAndTheReferenceIsNeverAChange() throws {
        let (base, new, settings) = Self.folders(drift: 0.08, change: 0, seed: 11)
        let comparison = BenchFolder.compare(base: base, new: new, settings: settings)
        let reference = try #require(comparison.entries.first { $0.name == "reference" })
        let app = try #require(comparison.entries.first { $0.name == "app" })
        let drift = try #require(app.settings.driftPercent)
        #expect(drift > 5 && drift < 9, "the reference's first frame moved ~7.4%: \(drift)")
        // Without the reference the 8% drift is a regression of both launches.
        #expect(ReportComparison(name: "app", base: base.entries[1].report, new: new.entries[1].report!).verdict == .regression)
        // With it, neither is: the reference says the sessions differ, the app is within that.
        #expect(reference.verdict == .noVerdict)
        let referenceFrame = try #require(reference.changes.first { $0.key == "timeToFirstFrameNs" })
        #expect(referenceFrame.reason?.contains("the two sessions differ") == true, "\(referenceFrame.reason ?? "")")
        #expect(app.verdict == .noVerdict)
        let phase = try #require(app.changes.first { $0.key == "phase:didFinishLaunching" })
        #expect(phase.verdict == .noVerdict)
        #expect(phase.reason?.contains("within the sessions' drift") == true, "\(phase.reason ?? "")")
        #expect(comparison.verdict == .noVerdict)
        let text = try ComparisonTextRenderer().render(comparison)
        #expect(text.contains("sessions' drift +"), "\(text)")
    }

    @Test func aChangeBeyondTheDriftIsStillARegression() throws {
        let (base, new, settings) = Self.folders(drift: 0.08, change: 0.20, seed: 12)
        let comparison = BenchFolder.compare(base: base, new: new, settings: settings)
        let app = try #require(comparison.entries.first { $0.name == "app" })
        let phase = try #require(app.changes.first { $0.key == "phase:didFinishLaunching" })
        #expect(phase.verdict == .regression, "\(phase.reason ?? "")")
        #expect(phase.reason?.contains("drift") == true, "\(phase.reason ?? "")")
        #expect(comparison.verdict == .regression)
    }

    /// Sessions that agree on the reference leave the minimum effect as it was: a 10% change
    /// is caught.
    @Test func sessionsThatAgreeLeaveTheMinimumEffectAlone() throws {
        let (base, new, settings) = Self.folders(drift: 0, change: 0.10, seed: 13)
        let comparison = BenchFolder.compare(base: base, new: new, settings: settings)
        let app = try #require(comparison.entries.first { $0.name == "app" })
        #expect(abs(app.settings.driftPercent ?? 99) < 2)
        #expect(app.changes.first { $0.key == "phase:didFinishLaunching" }?.verdict == .regression)
        #expect(comparison.entries.first { $0.name == "reference" }?.verdict == .unchanged)
    }

    @Test func theSuiteNamesAReferenceItHas() throws {
        func suite(_ reference: String) throws -> BenchSuite {
            let text = """
                {"version": 1, "reference": "\(reference)", "launches": [{"name": "ref", "program": "/bin/true"}, {"name": "app", "program": "/bin/true"}]}
                """
            return try BenchSuite.parse(Array(text.utf8), path: "/tmp/suite.json")
        }
        #expect(try suite("ref").settings.reference == "ref")
        #expect(throws: BenchError.self) { try suite("nosuch") }
    }
}
