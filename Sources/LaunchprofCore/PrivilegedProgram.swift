import LaunchprofSystem
import CLaunchprof
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program that gains privileges when executed — setuid, setgid, file capabilities — does not
/// gain them under a tracer without CAP_SYS_PTRACE: the kernel runs it as the user who started
/// it (`execve` under ptrace ignores the bits), so what needs them fails or takes another path,
/// and the launch measured is not the one its users get. launchprof says so once per program.
enum PrivilegedProgram {
    /// What `path` would gain when executed, as words ("setuid root", "setgid 5", "file
    /// capabilities"); empty when nothing, or when launchprof may trace it with them (root).
    static func gains(_ path: String) -> [String] {
        var status = stat()
        guard stat(path, &status) == 0, !tracerKeepsPrivileges() else { return [] }
        var gains: [String] = []
        if status.st_mode & S_ISUID != 0, status.st_uid != geteuid() {
            gains.append("setuid " + (status.st_uid == 0 ? "root" : "uid \(status.st_uid)"))
        }
        // Setgid applies only with group execute permission (without it the bit means locking).
        if status.st_mode & S_ISGID != 0, status.st_mode & S_IXGRP != 0, status.st_gid != getegid() {
            gains.append("setgid gid \(status.st_gid)")
        }
        if lp_has_file_capabilities(path) != 0 { gains.append("file capabilities") }
        return gains
    }

    /// Root, or CAP_SYS_PTRACE in the effective set: the kernel then applies the program's
    /// privileges under ptrace too.
    private static func tracerKeepsPrivileges() -> Bool {
        if geteuid() == 0 { return true }
        guard let status = SmallFile.read("/proc/self/status") else { return false }
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = line.dropFirst("CapEff:".count).filter { !$0.isWhitespace }
            return (UInt64(hex, radix: 16) ?? 0) & (1 << 19) != 0
        }
        return false
    }

    private static let warned = Mutex<Set<String>>([])

    /// Says once per program, on stderr, that it runs without the privileges it would gain.
    static func warn(_ path: String) {
        let gains = gains(path)
        guard !gains.isEmpty, warned.withLock({ $0.insert(path).inserted }) else { return }
        StatusLine.say(
            "\(path) is \(gains.joined(separator: ", ")): traced by a user without CAP_SYS_PTRACE, the kernel runs it "
                + "without those privileges (as uid \(getuid())), so what needs them fails or takes another path; "
                + "the launch measured is not the one its users get (run launchprof as root to keep them)")
    }
}
