import LaunchprofReport

/// Why `launchprof calibrate` could not calibrate, or a stored calibration cannot be used.
/// Each case names its subject and says what to do.
public enum CalibrationError: LaunchprofError, Sendable {
    case unreadable(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case buildFailed(command: String, status: Int32, output: String)
    case compilerMissing(path: String)
    /// `cause`: the exit cause of what failed (a program not found is 66 here as in `run`).
    case measurementFailed(program: String, reason: String, cause: ExitCause = .software)
    case fitFailed(points: Int)
    /// The fit's own measurements disagree with it after every pass (`why`): not stored.
    case fitDisagrees(why: String, passes: Int)
    case noCacheDirectory

    public var exitCause: ExitCause {
        switch self {
        case .cannotWrite, .noCacheDirectory: .cannotCreate
        case .compilerMissing: .unavailable
        case .unreadable: .noInput
        case .measurementFailed(_, _, let cause): cause
        case .buildFailed, .fitFailed, .fitDisagrees: .software
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "the calibration \(path) cannot be read (\(reason)): run `launchprof calibrate` again, or delete it"
        case .cannotWrite(let path, let reason):
            "cannot write \(path): \(reason)"
        case .buildFailed(let command, let status, let output):
            "building a calibration program failed (\(command), status \(status)): \(output.suffix(400))"
        case .compilerMissing(let path):
            "no C compiler at \(path): calibrate builds its programs from source (install gcc)"
        case .measurementFailed(let program, let reason, _):
            "measuring \(program) failed: \(reason)"
        case .fitFailed(let points):
            "the \(points) measurements do not determine a cost model (too few, or too alike)"
        case .fitDisagrees(let why, let passes):
            "the calibration was not stored: after \(passes) measurement passes its own programs still disagree with the fit "
                + "(\(why)); the machine was probably busy: run `launchprof calibrate` again when it is quieter, or with "
                + "more --runs (a calibration stored earlier, if any, is kept)"
        case .noCacheDirectory:
            "neither XDG_CACHE_HOME nor HOME is set: set one so the calibration can be stored"
        }
    }
}
