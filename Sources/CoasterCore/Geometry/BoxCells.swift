/// Boxes filed by the cells of a grid, in groups that each have a grid of their own: the zones of
/// each park, filed by a grid over that park.
///
/// A fence lookup already knows its candidate parks when it looks for zones, so it reads the one
/// cell of each park's grid under the point (or the few under a small circle's box) and tests the
/// boxes filed there, instead of walking a tree of every zone of every park from its root.
///
/// Each group, cell and box lives in one flat array of plain values, read through buffer pointers:
/// no array is copied (a reference count) on the way.
public struct BoxCells: Sendable {
    /// One group's grid: `columns × rows` cells over `box`, whose lists start at `firstCell`.
    private struct Grid: Sendable {
        var box: BoundingBox
        var columns: Int
        var rows: Int
        /// Cells per degree of longitude and of latitude.
        var columnsPerDegree: Double
        var rowsPerDegree: Double
        var firstCell: Int

        /// The column holding longitude `lon`, clamped to the grid. One formula for filing and for
        /// finding: a position in two boxes falls in a cell both boxes are filed under.
        func column(_ lon: Double) -> Int {
            let c = ((lon - self.box.minLon) * self.columnsPerDegree).rounded(.down)
            return c >= Double(self.columns - 1) ? self.columns - 1 : c > 0 ? Int(c) : 0
        }

        func row(_ lat: Double) -> Int {
            let r = ((lat - self.box.minLat) * self.rowsPerDegree).rounded(.down)
            return r >= Double(self.rows - 1) ? self.rows - 1 : r > 0 ? Int(r) : 0
        }
    }

    /// Most cells a side of a group's grid.
    public static let maximumSide = 32

    private var grids: [Grid] = []
    /// Cell `c` (counted across all groups) lists `entries[cellStarts[c] ..< cellStarts[c + 1]]`.
    private var cellStarts: [Int32] = [0]
    private var entries: [Int32] = []
    /// Every box, by the index it was given under.
    private var boxes: [BoundingBox]

    /// Files `boxes` by group: `groups[g]` lists the indices in `boxes` of group `g`'s boxes. Each
    /// group's grid has square cells, ``maximumSide`` to its longer side.
    public init(boxes: [BoundingBox], groups: [[Int]]) {
        self.boxes = boxes
        for members in groups {
            guard let first = members.first else {
                self.grids.append(Grid(box: BoundingBox(minLon: 0, minLat: 0, maxLon: 0, maxLat: 0), columns: 1, rows: 1,
                                       columnsPerDegree: 0, rowsPerDegree: 0, firstCell: self.cellStarts.count - 1))
                self.cellStarts.append(Int32(self.entries.count))
                continue
            }
            let extent = members.dropFirst().reduce(boxes[first]) { $0.union(boxes[$1]) }
            // Square-ish cells in degrees; a side of zero width (one point) gets one cell.
            let width = extent.maxLon - extent.minLon, height = extent.maxLat - extent.minLat
            let side = max(width, height) / Double(Self.maximumSide)
            let columns = side > 0 ? min(Self.maximumSide, max(1, Int((width / side).rounded(.up)))) : 1
            let rows = side > 0 ? min(Self.maximumSide, max(1, Int((height / side).rounded(.up)))) : 1
            let grid = Grid(box: extent, columns: columns, rows: rows,
                            columnsPerDegree: width > 0 ? Double(columns) / width : 0,
                            rowsPerDegree: height > 0 ? Double(rows) / height : 0,
                            firstCell: self.cellStarts.count - 1)
            var cells = [[Int32]](repeating: [], count: columns * rows)
            for member in members {
                let box = boxes[member]
                for row in grid.row(box.minLat)...grid.row(box.maxLat) {
                    for column in grid.column(box.minLon)...grid.column(box.maxLon) { cells[row * columns + column].append(Int32(member)) }
                }
            }
            for cell in cells {
                self.entries.append(contentsOf: cell)
                self.cellStarts.append(Int32(self.entries.count))
            }
            self.grids.append(grid)
        }
    }

    /// Calls `body` once with each box of group `group` that meets `query` (boundaries count).
    ///
    /// A box filed under several of the cells the query covers is reported from one of them only:
    /// the cell holding the lower-left corner of the box's overlap with the query, which is in both.
    @inline(__always)
    public func forEach(inGroup group: Int, meeting query: BoundingBox, _ body: (Int) -> Void) {
        self.grids.withUnsafeBufferPointer { grids in
            let grid = grids[group]
            guard grid.box.intersects(query) else { return }
            let firstColumn = grid.column(query.minLon), lastColumn = grid.column(query.maxLon)
            let firstRow = grid.row(query.minLat), lastRow = grid.row(query.maxLat)
            let single = firstColumn == lastColumn && firstRow == lastRow
            self.cellStarts.withUnsafeBufferPointer { starts in
                self.entries.withUnsafeBufferPointer { entries in
                    self.boxes.withUnsafeBufferPointer { boxes in
                        for row in firstRow...lastRow {
                            for column in firstColumn...lastColumn {
                                let cell = grid.firstCell + row * grid.columns + column
                                for k in Int(starts[cell])..<Int(starts[cell + 1]) {
                                    let member = Int(entries[k])
                                    let box = boxes[member]
                                    guard box.intersects(query) else { continue }
                                    if !single {
                                        guard grid.column(max(box.minLon, query.minLon)) == column,
                                              grid.row(max(box.minLat, query.minLat)) == row
                                        else { continue }
                                    }
                                    body(member)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
