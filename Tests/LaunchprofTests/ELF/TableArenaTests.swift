import Testing

@testable import LaunchprofELF

/// The loader-work tables' arena: zeroed, aligned, bounded memory, and a name table that outgrows
/// it keeps every name it numbered.
@Suite("ELF: table arena")
struct TableArenaTests {
    @Test func allocationsAreZeroedAlignedDisjointAndBounded() throws {
        let arena = TableArena()
        let first = try #require(arena.allocate(UInt64.self, count: 1000))
        let second = try #require(arena.allocate(UInt8.self, count: 3))
        let third = try #require(arena.allocate(UInt64.self, count: 10))
        for pointer in [UnsafeRawPointer(first), UnsafeRawPointer(second), UnsafeRawPointer(third)] {
            #expect(Int(bitPattern: pointer) % 64 == 0)
        }
        #expect(UnsafeRawPointer(second) >= UnsafeRawPointer(first + 1000))
        #expect(UnsafeRawPointer(third) >= UnsafeRawPointer(second + 3))
        #expect((0..<1000).allSatisfy { first[$0] == 0 } && (0..<3).allSatisfy { second[$0] == 0 })
        // 2 MiB in all: what is left cannot hold another 2 MiB.
        #expect(arena.allocate(UInt8.self, count: TableArena.hugePageBytes) == nil)
        #expect(arena.allocate(UInt8.self, count: 1024) != nil)
    }

    /// Slots and names start in the arena and move out of it as the table grows past its room.
    @Test func aNameTableOutgrowingItsArenaKeepsItsNames() throws {
        let arena = TableArena()
        // Leaves ~8 KiB: room for the first slots and names, not for their growth.
        _ = try #require(arena.allocate(UInt8.self, count: TableArena.hugePageBytes - 8192))
        let table = LookupNameTable(expectedNames: 64, arena: arena)
        let names = (0..<5000).map { Array("symbol_\($0)".utf8) }
        var numbers: [Int] = []
        for (index, name) in names.enumerated() {
            let number = name.withUnsafeBytes { table.number($0, hash: UInt32(truncatingIfNeeded: index &* 2_654_435_761), lookupClass: index % 3) }
            numbers.append(number)
        }
        #expect(numbers == Array(0..<5000))
        #expect(table.count == 5000)
        for (index, name) in names.enumerated() {
            let again = name.withUnsafeBytes { table.number($0, hash: UInt32(truncatingIfNeeded: index &* 2_654_435_761), lookupClass: index % 3) }
            #expect(again == index)
            #expect(table.lookupClass(index) == UInt8(index % 3))
        }
        #expect(table.count == 5000)
    }
}
