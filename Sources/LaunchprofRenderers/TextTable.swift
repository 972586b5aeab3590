/// Columns of text for the terminal renderers: each column as wide as its widest cell, two
/// spaces between columns, chosen columns right-aligned (numbers), no trailing spaces.
struct TextTable {
    var rows: [[String]]
    /// Columns aligned to the right; the others are aligned to the left.
    var rightAligned: Set<Int>

    /// One line per row, in order.
    var lines: [String] {
        var widths: [Int] = []
        for row in rows {
            for (column, cell) in row.enumerated() {
                if column == widths.count { widths.append(0) }
                widths[column] = max(widths[column], cell.count)
            }
        }
        return rows.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column > 0 { line += "  " }
                line += rightAligned.contains(column) ? padding + cell : cell + padding
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// `text` in a fixed column of `width`, left-aligned, always followed by at least one space
    /// (a fixed layout whose cell overflows still keeps its columns apart).
    static func column(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    /// `text` right-aligned in a fixed column of `width`, always preceded by at least one space.
    static func rightColumn(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}
