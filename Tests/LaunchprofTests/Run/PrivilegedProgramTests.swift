import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A setuid program traced by a user without CAP_SYS_PTRACE runs without its privileges: the
/// kernel ignores the bit under ptrace. launchprof says so (issue 33), and not where it does not
/// apply (root keeps them).
@Suite("run: a privileged program is said to run unprivileged")
struct PrivilegedProgramTests {
    @Test("setuid root, run as uid 65534: said once; run as root: not said")
    func setuidProgramWarns() throws {
        var template = Array("/tmp/lp-setuid-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, 0o755) == 0)
        let program = directory + "/suid-true"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/bin/true").resolvingSymlinksInPath().path, toPath: program)
        #expect(chown(program, 0, 0) == 0 && chmod(program, 0o4755) == 0)
        let launchprof = try LaunchprofBinary.url().path
        let unprivileged = try LaunchprofCLI.run(
            executable: "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", launchprof, "run", "-r", "2", "--observer", "ptrace", program])
        #expect(unprivileged.status == 0, "\(unprivileged.stderr)")
        let said = unprivileged.stderr.components(separatedBy: "is setuid root: traced by a user without CAP_SYS_PTRACE").count - 1
        #expect(said == 1, "said once for two runs: \(unprivileged.stderr)")
        let asRoot = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "ptrace", program])
        #expect(asRoot.status == 0, "\(asRoot.stderr)")
        #expect(!asRoot.stderr.contains("setuid"), "\(asRoot.stderr)")
    }
}
