/// A program's dependency closure as the dynamic loader would build it.
public struct Closure: Sendable {
    /// How the loader found an object.
    public enum Source: String, Sendable, Equatable {
        case program, interpreter, preload
        /// A DT_NEEDED name containing a slash, used as a path.
        case path
        case rpath, libraryPath = "ld-library-path", runpath, cache, defaultDirectory = "default-directory"
    }

    /// One loaded object and how it got there.
    public struct Entry: Sendable {
        public var image: ELFImage
        /// The path the loader opened (the name ldd prints).
        public var loadedAs: String
        public var source: Source
        /// Indices (into `entries`) of the objects whose DT_NEEDED named this one, first first.
        public var neededBy: [Int]
        /// Indices of this object's direct dependencies, in DT_NEEDED order.
        public var dependencies: [Int]
    }

    /// A DT_NEEDED name the loader would not find (or could not load), and who needs it.
    public struct Missing: Sendable, Equatable {
        public var name: String
        /// Paths of the objects that name it, in load order.
        public var neededBy: [String]
        /// Why it is missing: not found, or the error reading the file that was found.
        public var reason: String
    }

    /// Objects in the loader's load order: the program first, then breadth-first, the
    /// interpreter where the loader links it in (its first appearance in that order).
    public var entries: [Entry]
    public var missing: [Missing]
    /// Every path the resolution tried, found or not, in order: what decides this closure, so
    /// a result kept for it stays true while each of these paths stays as it was.
    public var consultedPaths: [String] = []

    public var objects: [ELFImage] { entries.map(\.image) }

    /// The order in which glibc 2.36 runs initializers (`_dl_sort_maps`, DFS): every object's
    /// dependencies before it, the program last. Objects without initializers are included;
    /// the loader skips them.
    public func initializerOrder() -> [Int] {
        guard !entries.isEmpty else { return [] }
        var visited = [Bool](repeating: false, count: entries.count)
        var sorted = [Int](repeating: 0, count: entries.count - 1)
        var head = sorted.count
        func visit(_ index: Int) {
            visited[index] = true
            for dependency in entries[index].dependencies where !visited[dependency] && dependency != 0 {
                visit(dependency)
            }
            head -= 1
            sorted[head] = index
        }
        // Like _dl_sort_maps_dfs: roots from the last object back, reverse post-order.
        for index in stride(from: entries.count - 1, through: 1, by: -1) where !visited[index] {
            visit(index)
        }
        // `sorted` is the finalizer order; initializers run in reverse, then the program's.
        return sorted.reversed() + [0]
    }
}
