/// SystemTap SDT probes (`sys/sdt.h`): the `NT_STAPSDT` notes of `.note.stapsdt`, each a probe
/// site compiled into the program as a `nop`, with where its arguments are and, when it has one,
/// the semaphore the site checks before computing them. Debian's python3.11 carries them
/// (`import__find__load__start` …), as does any program built with `STAP_PROBE`.
extension ELFImage {
    /// One SDT probe site.
    public struct SDTProbe: Sendable, Equatable {
        public var provider: String
        public var name: String
        /// The site's address (unrelocated) and the file offset a uprobe names.
        public var address: UInt64
        public var fileOffset: UInt64
        /// The semaphore's file offset (a uprobe's reference counter: the kernel increments it in
        /// every process mapping the file while the probe is held), nil without one.
        public var semaphoreFileOffset: UInt64?
        /// The arguments' locations as the note spells them, e.g. `8@%rax`, `-4@%edx`.
        public var arguments: [String]
    }

    /// Every SDT probe of the file; empty without `.note.stapsdt`. A prelinked file (whose
    /// `.stapsdt.base` moved) is not adjusted for: no distribution prelinks any more.
    public var sdtProbes: [SDTProbe] {
        var probes: [SDTProbe] = []
        for section in backing.sections() where section.type == 7 /* SHT_NOTE */ && section.size < 1 << 24 {
            let bytes = backing.readBytes(offset: section.offset, count: Int(section.size))
            var at = 0
            func u32(_ index: Int) -> Int {
                Int(bytes[index]) | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2]) << 16 | Int(bytes[index + 3]) << 24
            }
            func u64(_ index: Int) -> UInt64 {
                (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[index + $1]) << (8 * UInt64($1)) }
            }
            while at + 12 <= bytes.count {
                let nameSize = u32(at)
                let descriptionSize = u32(at + 4)
                let type = u32(at + 8)
                let nameStart = at + 12
                let descriptionStart = nameStart + (nameSize + 3) & ~3
                let next = descriptionStart + (descriptionSize + 3) & ~3
                guard nameSize <= 64, descriptionSize <= 1 << 16, next <= bytes.count else { break }
                defer { at = next }
                guard type == 3, descriptionSize > 24,
                    String(decoding: bytes[nameStart..<nameStart + nameSize].prefix { $0 != 0 }, as: UTF8.self) == "stapsdt"
                else { continue }
                let pc = u64(descriptionStart)
                let semaphore = u64(descriptionStart + 16)
                // provider\0 name\0 arguments\0
                let strings = bytes[(descriptionStart + 24)..<(descriptionStart + descriptionSize)]
                    .split(separator: 0, omittingEmptySubsequences: false)
                    .map { String(decoding: $0, as: UTF8.self) }
                guard strings.count >= 2, let offset = fileOffset(ofAddress: pc) else { continue }
                probes.append(SDTProbe(
                    provider: strings[0], name: strings[1], address: pc, fileOffset: offset,
                    semaphoreFileOffset: semaphore == 0 ? nil : fileOffset(ofAddress: semaphore),
                    arguments: strings.count > 2 ? strings[2].split(separator: " ").map(String.init) : []))
            }
        }
        return probes
    }
}
