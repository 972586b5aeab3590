/// A hand-written JSON encoding of one run, byte for byte what `JSONEncoder` with sorted keys
/// and unescaped slashes gives (the tests compare the two), about ten times faster: a run is
/// encoded while the next one waits, so this is on launchprof's own per-run path.
extension LaunchRun {
    func jsonBytes() -> [UInt8] {
        var json = JSONBytes()
        json.object { json in
            json.key("absent")
            json.array(absent) { json, entry in
                json.object { json in
                    if let image = entry.image { json.field("image", image) }
                    json.field("phase", entry.phase)
                    json.field("reason", entry.reason)
                }
            }
            if let callStackTree { json.encoded("callStackTree", callStackTree) }
            if let closureBytes { json.field("closureBytes", closureBytes) }
            if let exitStatus {
                json.key("exitStatus")
                json.object { json in
                    if let code = exitStatus.code { json.field("code", code) }
                    if let coreDumped = exitStatus.coreDumped { json.field("coreDumped", coreDumped) }
                    if let killedBy = exitStatus.killedBy { json.field("killedBy", killedBy) }
                    if let signal = exitStatus.signal { json.field("signal", signal) }
                }
            }
            if let field { json.encoded("field", field) }
            if let flags { json.encoded("flags", flags) }
            json.field("index", index)
            json.key("metrics")
            json.object { json in
                if let value = metrics.exitNs { json.field("exitNs", value) }
                if let value = metrics.extendedLaunchNs { json.field("extendedLaunchNs", value) }
                if let value = metrics.optimizedTimeToFirstFrameNs { json.field("optimizedTimeToFirstFrameNs", value) }
                if let value = metrics.resumeTimeNs { json.field("resumeTimeNs", value) }
                if let value = metrics.timeToFirstFrameNs { json.field("timeToFirstFrameNs", value) }
                if let value = metrics.timeToMainNs { json.field("timeToMainNs", value) }
            }
            if let majorFaults { json.field("majorFaults", majorFaults) }
            if let minorFaults { json.field("minorFaults", minorFaults) }
            if let outcome { json.encoded("outcome", outcome) }
            json.key("phases")
            json.array(phases) { json, phase in
                json.object { json in
                    if let caller = phase.caller { json.field("caller", caller) }
                    json.field("durationNs", phase.durationNs)
                    if let image = phase.image { json.field("image", image) }
                    json.field("name", phase.name)
                    if let object = phase.object { json.field("object", object) }
                    if let observerNs = phase.observerNs { json.field("observerNs", observerNs) }
                    if let source = phase.source { json.field("source", source) }
                    json.field("startNs", phase.startNs)
                    if let task = phase.task { json.field("task", task) }
                    if let thread = phase.thread { json.field("thread", Int(thread)) }
                    if let threadState = phase.threadState { json.encoded("threadState", threadState) }
                }
            }
            json.field("pid", pid)
            if let prewarm { json.encoded("prewarm", prewarm) }
            if let residentBeforeBytes { json.field("residentBeforeBytes", residentBeforeBytes) }
            if let sampling { json.encoded("sampling", sampling) }
            if let spawnedAt { json.encoded("spawnedAt", spawnedAt) }
            if let states { json.encoded("states", states) }
            if let threadStates { json.encoded("threadStates", threadStates) }
            json.field("timedOut", timedOut)
            if let tracerPauseNs { json.field("tracerPauseNs", tracerPauseNs) }
            json.key("warnings")
            json.array(warnings) { json, warning in
                json.object { json in
                    json.field("code", warning.code.rawValue)
                    json.field("message", warning.message)
                }
            }
        }
        return json.bytes
    }
}
