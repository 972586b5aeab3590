/// The report's JSON, written member by member in sorted key order. The names are the
/// `Codable` names (a test compares this text with `JSONEncoder`'s encoding of the same value).
extension InspectReport {
    /// The report as pretty-printed JSON with sorted keys, ending in a newline.
    public func jsonBytes() throws(LaunchReportError) -> [UInt8] {
        // Written in place into the array's memory, sized generously (gdb's 59 objects take
        // 115 KiB of 260): untouched pages cost nothing. Written again, twice as large, in the
        // rare report that does not fit.
        var capacity = 16_384 + 4_096 * (objects.count + advice.count + missing.count + initializerOrder.count / 8)
        while true {
            var complete = false
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                let written = writeJSON(into: UnsafeMutableRawBufferPointer(buffer))
                complete = written != nil
                count = written ?? 0
            }
            if complete { return bytes }
            capacity *= 2
        }
    }

    /// Writes the JSON (`jsonBytes`) into `buffer`; its length, or nil when it does not fit.
    public func writeJSON(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        var json = InspectJSONText(into: buffer.bindMemory(to: UInt8.self))
        write(to: &json)
        json.endLine()
        return json.overflowed ? nil : json.count
    }

    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.key("advice")
            json.array(advice) { json, item in item.write(to: &json) }
            json.key("costModel")
            costModel.write(to: &json)
            json.member("initializerOrder", initializerOrder)
            json.key("missing")
            json.array(missing) { json, item in item.write(to: &json) }
            json.key("objects")
            json.array(objects) { json, item in item.write(to: &json) }
            json.key("program")
            program.write(to: &json)
            json.member("schemaVersion", schemaVersion)
            if let script {
                json.key("script")
                script.write(to: &json)
            }
            json.key("totals")
            totals.write(to: &json)
        }
    }
}

extension InspectReport.Advice {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("costPerUnitNs", costPerUnitNs)
            json.member("count", count)
            json.member("estimatedNs", estimatedNs)
            json.member("kind", kind)
            json.member("message", message)
            json.member("objects", objects)
        }
    }
}

extension LaunchCostModel {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            if let calibration {
                json.key("calibration")
                calibration.write(to: &json)
            }
            json.member("perInitializerPs", perInitializerPs)
            json.member("perLargeTableLookupPs", perLargeTableLookupPs)
            json.member("perLaunchPs", perLaunchPs)
            json.member("perLookupNameBytePs", perLookupNameBytePs)
            json.member("perLookupPs", perLookupPs)
            json.member("perObjectPs", perObjectPs)
            json.member("perPageTouchedPs", perPageTouchedPs)
            json.member("perRelativeRelocationPs", perRelativeRelocationPs)
            json.member("perScopeStepPs", perScopeStepPs)
            json.member("perSegmentPs", perSegmentPs)
            json.member("perSymbolTableFaultPs", perSymbolTableFaultPs)
            json.member("perSymbolTablePagePs", perSymbolTablePagePs)
            json.member("perVersionCheckPs", perVersionCheckPs)
            json.member("source", source)
        }
    }
}

extension LaunchCostModel.Calibration {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("cpu", cpu)
            json.member("kernel", kernel)
            json.member("measuredAt", measuredAt)
            json.member("rSquaredPermille", rSquaredPermille)
            json.member("worstErrorPercent", worstErrorPercent)
        }
    }
}

extension LoaderWork {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("largeTableLookups", largeTableLookups)
            json.member("lookupNameBytes", lookupNameBytes)
            json.member("lookups", lookups)
            json.member("mappedObjects", mappedObjects)
            json.member("pagesTouched", pagesTouched)
            json.member("relative", relative)
            json.member("scopeSteps", scopeSteps)
            json.member("segments", segments)
            json.member("symbolTableFaults", symbolTableFaults)
            json.member("symbolTablePages", symbolTablePages)
            json.member("versionChecks", versionChecks)
        }
    }
}

extension InspectReport.Missing {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("name", name)
            json.member("neededBy", neededBy)
            json.member("reason", reason)
        }
    }
}

extension InspectReport.Object {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("binding", binding)
            json.member("buildID", buildID)
            json.key("finalizers")
            finalizers.write(to: &json)
            json.member("foundVia", foundVia)
            json.member("hashStyles", hashStyles)
            json.key("initializers")
            initializers.write(to: &json)
            json.member("loadedAs", loadedAs)
            json.key("loaderWork")
            loaderWork.write(to: &json)
            json.member("needed", needed)
            json.member("neededBy", neededBy)
            json.member("path", path)
            json.key("relocations")
            relocations.write(to: &json)
            json.member("rpath", rpath)
            json.member("runpath", runpath)
            json.member("sizeBytes", sizeBytes)
            json.member("soname", soname)
            json.key("symbols")
            symbols.write(to: &json)
            json.member("tlsSizeBytes", tlsSizeBytes)
            json.member("type", type)
        }
    }
}

extension InspectReport.Finalizers {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("finiArray", finiArray)
            json.member("finiFunction", finiFunction)
            json.member("total", total)
        }
    }
}

extension InspectReport.Initializers {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("initArray", initArray)
            json.member("initFunction", initFunction)
            json.member("preinitArray", preinitArray)
            json.member("total", total)
        }
    }
}

extension InspectReport.Relocations {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("copy", copy)
            json.member("irelative", irelative)
            json.member("jumpSlot", jumpSlot)
            json.member("other", other)
            json.member("relative", relative)
            json.member("relativeRELR", relativeRELR)
            json.member("symbolic", symbolic)
            json.member("tls", tls)
            json.member("total", total)
        }
    }
}

extension InspectReport.Symbols {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("exported", exported)
            json.member("imported", imported)
        }
    }
}

extension InspectReport.Program {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("binding", binding)
            json.member("buildID", buildID)
            json.member("elfClass", elfClass)
            json.member("hashStyles", hashStyles)
            json.member("interpreter", interpreter)
            json.member("machine", machine)
            json.member("path", path)
            json.member("stripped", stripped)
            json.member("tlsSizeBytes", tlsSizeBytes)
            json.member("type", type)
            json.member("usesLoader", usesLoader)
        }
    }
}

extension InspectReport.Script {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("interpreter", interpreter)
            json.member("interpreterArgument", interpreterArgument)
            json.member("path", path)
        }
    }
}

extension InspectReport.Totals {
    func write(to json: inout InspectJSONText) {
        json.object { json in
            json.member("estimatedLoaderNs", estimatedLoaderNs)
            json.member("exportedSymbols", exportedSymbols)
            json.member("finalizers", finalizers)
            json.member("importedSymbols", importedSymbols)
            json.member("initializers", initializers)
            json.key("loaderWork")
            loaderWork.write(to: &json)
            json.member("missing", missing)
            json.member("objects", objects)
            json.key("relocations")
            relocations.write(to: &json)
            json.member("sizeBytes", sizeBytes)
        }
    }
}
