#if canImport(Glibc)
import Glibc
#endif

/// The bearer token `/metrics` asks for: from `--metrics-token-file`, or made at the first start
/// as `STORE/metrics.token` (32 random bytes as hex, mode 0600: the store's owner reads it, and
/// gives it to Prometheus's `authorization.credentials_file`).
public enum MetricsToken {
    public static let fileName = "metrics.token"

    /// The token in `path`, or a new one written there when `create` and the file is missing.
    public static func load(_ path: String, create: Bool) throws(MonitorError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0, errno == ENOENT, create { return try make(path) }
        guard fd >= 0 else {
            throw .badValue(option: "--metrics-token-file", value: path, reason: "it cannot be read (\(MonitorError.text(errno)))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .badValue(option: "--metrics-token-file", value: path, reason: "it is not a regular file")
        }
        guard status.st_mode & 0o002 == 0, status.st_uid == geteuid() || status.st_uid == 0 else {
            throw .badValue(
                option: "--metrics-token-file", value: path,
                reason: "anyone may write it, or it belongs to another user: a token must be the monitor's own")
        }
        var bytes = [UInt8](repeating: 0, count: 4097)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0, count < bytes.count else {
            throw .badValue(option: "--metrics-token-file", value: path, reason: "it is empty or longer than 4 KiB")
        }
        var token = Array(bytes[..<count])
        while let last = token.last, last == 0x0a || last == 0x0d || last == 0x20 { token.removeLast() }
        guard token.count >= 16, token.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw .badValue(
                option: "--metrics-token-file", value: path,
                reason: "a token is at least 16 printable characters, without spaces")
        }
        return token
    }

    private static func make(_ path: String) throws(MonitorError) -> [UInt8] {
        // The system generator reads getrandom(2): the kernel's cryptographic source.
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Array(random.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return [digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }.joined())
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storeUnusable(path: path, reason: "its metrics token cannot be written (\(MonitorError.text(errno)))") }
        defer { close(fd) }
        let line = token + [0x0a]
        guard write(fd, line, line.count) == line.count, fsync(fd) == 0 else {
            unlink(path)
            throw .storeUnusable(path: path, reason: "its metrics token cannot be written (\(MonitorError.text(errno)))")
        }
        return token
    }
}
