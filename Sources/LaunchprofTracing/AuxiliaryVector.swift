#if canImport(Glibc)
import Glibc
#endif

/// The auxiliary vector the kernel put on the new image's stack: where the loader and the
/// program's entry point are. Read from the stack at the exec stop (argc, argv…, envp…, auxv),
/// which costs one system call instead of opening /proc/PID/auxv.
struct AuxiliaryVector {
    /// AT_BASE: the interpreter's load address (0 for a static program).
    var base: UInt64 = 0
    /// AT_ENTRY: the program's entry point.
    var entry: UInt64 = 0

    static func read(_ pid: pid_t, stackPointer: UInt64) throws(TracerError) -> AuxiliaryVector {
        var words: [UInt64] = []
        var readSize = 4096 - Int(stackPointer % 4096)
        if readSize < 512 { readSize += 4096 }
        // The vector ends within a few pages; read more only when the environment is large.
        for _ in 0..<32 {
            let bytes = try Ptrace.read(pid, at: stackPointer, count: readSize)
            words = bytes.withUnsafeBytes { raw in
                (0..<(bytes.count / 8)).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) }
            }
            if let vector = parse(words) { return vector }
            readSize += 4096
        }
        throw .unexpectedStop(pid: pid, detail: "no auxiliary vector on the stack at exec")
    }

    /// Parses argc, argv, envp, auxv; nil when `words` ends before AT_NULL.
    private static func parse(_ words: [UInt64]) -> AuxiliaryVector? {
        guard let argc = words.first else { return nil }
        var index = 1 + Int(argc) + 1
        while index < words.count, words[index] != 0 { index += 1 }  // envp
        index += 1
        var vector = AuxiliaryVector()
        while index + 1 < words.count {
            let (type, value) = (words[index], words[index + 1])
            switch type {
            case 0: return vector  // AT_NULL
            case 7: vector.base = value  // AT_BASE
            case 9: vector.entry = value  // AT_ENTRY
            default: break
            }
            index += 2
        }
        return nil
    }
}
