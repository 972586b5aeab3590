/// How a run's child ended, as the report writes it: `{"code": 0}`, `{"signal": 11,
/// "coreDumped": false}`, or `{"signal": 9, "killedBy": "timeout"}` when launchprof ended it.
public struct RunExit: Sendable, Equatable, Hashable, Codable {
    /// The exit code of a process that exited.
    public var code: Int32?
    /// The signal that ended the process.
    public var signal: Int32?
    public var coreDumped: Bool?
    /// Why launchprof ended the process (timeout, readiness reached, interrupted).
    public var killedBy: String?

    public init(code: Int32? = nil, signal: Int32? = nil, coreDumped: Bool? = nil, killedBy: String? = nil) {
        self.code = code
        self.signal = signal
        self.coreDumped = coreDumped
        self.killedBy = killedBy
    }

    public init(_ status: ExitStatus) {
        switch status {
        case .exited(let code): self.init(code: code)
        case .signaled(let signal, let coreDumped): self.init(signal: signal, coreDumped: coreDumped)
        case .killedByLaunchprof(let signal, let reason): self.init(signal: signal, killedBy: reason)
        case .exitedWhenEnded(let code, let reason): self.init(code: code, killedBy: reason)
        }
    }
}
