import LaunchprofELF

/// Turns an image's closure into uprobe targets: every pre-main boundary the ptrace observer
/// stops at, as a file and an offset, read from the ELF files alone. A DT_INIT_ARRAY entry's
/// target is what relocation will write there (`ELFImage.relocatedPointer(atSlot:)`), so nothing
/// is read from the child.
enum UprobePlanner {
    static func targets(
        program: ELFImage, closure: Closure, plan: ImagePlan, loaderImage: ELFImage?
    ) -> (targets: [UprobeTarget], unobservable: [(phase: String, reason: String)]) {
        var targets: [UprobeTarget] = []
        var unobservable: [(phase: String, reason: String)] = []
        func add(_ image: ELFImage, address: UInt64, _ action: Boundary) -> Bool {
            var address = address
            var code = image.bytes(atAddress: address, count: 64)
            if let target = ProbePlacement.jumpTarget(code, at: address) {
                address = target
                code = image.bytes(atAddress: address, count: 64)
            }
            guard let offset = image.fileOffset(ofAddress: address) else { return false }
            let (delta, emulated) = ProbePlacement.place(code)
            targets.append(UprobeTarget(path: image.path, offset: offset + delta, action: action, emulated: emulated))
            return true
        }
        if let loader = plan.loader, let loaderImage, let relocate = loader.relocateObject {
            _ = add(loaderImage, address: relocate, .relocationStart)
        }
        if plan.loader != nil {
            for entry in closure.entries.dropFirst() where entry.image.path != loaderImage?.path {
                let object = entry.image
                let dynamic = object.dynamic
                let name = entry.loadedAs
                if let function = dynamic.initAddress {
                    _ = add(object, address: function, .objectInit(path: name))
                } else if let array = dynamic.initArray, array.count > 0 {
                    // The first entry the loader calls; an empty (0 or -1) slot is skipped by it.
                    let first = (0..<array.count).lazy
                        .compactMap { object.relocatedPointer(atSlot: array.vaddr + UInt64($0) * 8) }
                        .first { $0 != 0 && $0 != UInt64.max }
                    if let first, add(object, address: first, .objectInit(path: name)) { continue }
                    unobservable.append(("loader.init", "the first initializer of \(name) is not a relative relocation"))
                }
            }
        }
        var programInitPlaced = false
        switch plan.programInitializer {
        case .function(let function):
            programInitPlaced = add(program, address: function, .programInit)
        case .arraySlot(let slot):
            if let function = program.relocatedPointer(atSlot: slot), function != 0, function != UInt64.max {
                programInitPlaced = add(program, address: function, .programInit)
            }
        case nil:
            break
        }
        // As with ptrace: the entry marks libc's start-up when no initializer does, and always
        // in a static program.
        if !programInitPlaced || plan.loader == nil { _ = add(program, address: plan.entry, .entry) }
        if let main = plan.main {
            _ = add(program, address: main, .main)
        } else {
            unobservable.append(("main", "no `main` symbol and none in the entry code: use --observer ptrace"))
            unobservable.append(("program.init", "its end, main, is not observable"))
        }
        return (targets, unobservable)
    }
}
