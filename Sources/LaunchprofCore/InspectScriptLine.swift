#if canImport(Glibc)
import Glibc
#endif
import LaunchprofELF

/// The `#!` line of a script, split as the kernel splits it: the interpreter, then the rest of
/// the line as one optional argument.
struct ScriptLine: Equatable {
    var interpreter: String
    var argument: String?

    /// The kernel reads at most this many bytes of the first line (BINPRM_BUF_SIZE).
    static let limit = 256

    /// The `#!` line of the file at `path`, or nil when it does not start with `#!`.
    static func read(_ path: String) throws(InspectError) -> ScriptLine? {
        // Only a regular file can be a script; anything else (a FIFO, whose open would wait for a
        // writer; a device) is left to the ELF reader, which refuses it without opening it.
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            // Let the ELF reader classify the failure (missing, directory, unreadable).
            return nil
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, limit) }
        guard count >= 2, buffer[0] == UInt8(ascii: "#"), buffer[1] == UInt8(ascii: "!") else { return nil }
        return parse(buffer[2..<count])
    }

    static func parse(_ bytes: ArraySlice<UInt8>) -> ScriptLine {
        let line = bytes.prefix { $0 != UInt8(ascii: "\n") }
        let text = String(decoding: line, as: UTF8.self)
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        let trimmed = text.drop(while: isBlank)
        let interpreter = trimmed.prefix { !isBlank($0) }
        var rest = trimmed.dropFirst(interpreter.count).drop(while: isBlank)
        while let last = rest.last, isBlank(last) { rest.removeLast() }
        return ScriptLine(interpreter: String(interpreter), argument: rest.isEmpty ? nil : String(rest))
    }
}
