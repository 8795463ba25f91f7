/// An area rasterised onto a uniform grid over its bounding box: each cell is known to lie wholly
/// inside the area, wholly outside it, or to be touched by an edge.
///
/// Most questions about a point, or about a small box around it, are then answered by reading one
/// or a few bytes; only positions in or near an edge cell need exact geometry, and the grid says so
/// by answering `nil`. The grid is conservative: a cell is an edge cell if any edge comes within a
/// hair (``margin``) of it, and the grid reaches one cell beyond the area's box on every side, so a
/// point on the boundary is always in an edge cell, never answered from the cell alone. A point in
/// an edge cell is decided by the even-odd rule over the edges that cross its row, unless it lies
/// within a hair of one of them.
///
/// A class, built once and never changed: the fence index reads its grids without taking a
/// reference on each (see ``FenceIndex``), which a struct holding arrays would not allow. What
/// reading the cells takes is also a ``Frame``, a value the index keeps in an array of its own.
/// (Unchecked `Sendable`: the cells are a buffer the grid owns, written only in `init`.)
public final class AreaGrid: @unchecked Sendable {
    enum Cell: UInt8 {
        case outside = 0, inside = 1, edge = 2
    }

    /// The grid's placement and its cells' address: all a lookup reads before the cell itself.
    ///
    /// Read from the grid, a cell was the third of three dependent loads (the grid, then the cell
    /// array's header, then the cell), each a cache miss for all but the hottest grids: three
    /// fifths of a lookup with accuracy in `perf`. Kept side by side in the fence index, the frames
    /// of a park's zones share cache lines, and the cell is one load away. Valid while its grid is.
    struct Frame: @unchecked Sendable {
        let minLon: Double
        let minLat: Double
        let cellWidth: Double
        let cellHeight: Double
        let columns: Int
        let rows: Int
        /// `rows` × `columns` cells, row by row, four to a byte (``cell(_:)``); `nil` for an
        /// empty grid.
        let cells: UnsafePointer<UInt8>?
        /// Each cell's clearance, one a byte, row by row: how many rings of cells around it are all
        /// of its kind (inside, or outside with the world past the grid), up to 255; 0 for an edge
        /// cell. A small circle deep inside or outside the area is judged by its centre's cell
        /// alone (``classify(ellipseAt:inner:outer:degreesPerMetre:limit:byClearance:)``). A byte
        /// a cell, one read per circle: the bench world's grids take 2.7 MB more with them (its
        /// process 70 → 73 MiB) and ~50 ms more to build. `nil` for an empty grid.
        let clearance: UnsafePointer<UInt8>?

        /// Cell `i` (row × `columns` + column), a ``Cell`` raw value: two bits of byte `i / 4`,
        /// the lowest for the first. Four to a byte, the grids of fifty parks and two thousand
        /// ride zones take 0.7 MB instead of 2.7, and more of them stay in cache between requests.
        @inline(__always)
        func cell(_ i: Int) -> UInt8 {
            (self.cells.unsafelyUnwrapped[i &>> 2] &>> UInt8(truncatingIfNeeded: (i & 3) &<< 1)) & 3
        }

        /// `cells` (one a byte) packed four to a byte, as ``cell(_:)`` reads them.
        static func pack(_ cells: [UInt8]) -> [UInt8] {
            var packed = [UInt8](repeating: 0, count: (cells.count + 3) / 4)
            for (i, cell) in cells.enumerated() { packed[i >> 2] |= cell << UInt8((i & 3) << 1) }
            return packed
        }
    }

    let frame: Frame
    /// The cells and clearances ``frame`` points to, owned here.
    private let cellStorage: UnsafeMutableBufferPointer<UInt8>
    private let clearanceStorage: UnsafeMutableBufferPointer<UInt8>
    private var minLon: Double { self.frame.minLon }
    private var minLat: Double { self.frame.minLat }
    private var cellWidth: Double { self.frame.cellWidth }
    private var cellHeight: Double { self.frame.cellHeight }
    private var columns: Int { self.frame.columns }
    private var rows: Int { self.frame.rows }
    /// Row `r`'s edges, for points in its edge cells: `rowEdges[rowStarts[r] ..< rowStarts[r + 1]]`
    /// are the segments reaching within ``margin`` of the row. Both empty when not kept.
    private let rowStarts: [Int32]
    private let rowEdges: [Segment]

    /// How far (degrees, about 1 cm) an edge may pass from a cell and still mark it.
    static let margin = 1e-7

    /// Rasterises `area` onto `side` × `side` cells (plus a border of one cell each way).
    /// - Parameter side: cells per axis over the area's box; by default it grows with the vertex count.
    public init(_ area: MultiPolygon, side: Int? = nil) {
        let segments = Self.segments(area)
        guard let box = area.boundingBox, !segments.isEmpty else {
            self.frame = Frame(minLon: 0, minLat: 0, cellWidth: 1, cellHeight: 1, columns: 0, rows: 0, cells: nil, clearance: nil)
            self.cellStorage = UnsafeMutableBufferPointer(start: nil, count: 0)
            self.clearanceStorage = UnsafeMutableBufferPointer(start: nil, count: 0)
            self.rowStarts = []; self.rowEdges = []
            return
        }
        let n = side ?? min(128, max(16, Int(Double(area.vertexCount).squareRoot() * 8)))
        let width = max(box.maxLon - box.minLon, 1e-9) / Double(n)
        let height = max(box.maxLat - box.minLat, 1e-9) / Double(n)
        let minLon = box.minLon - width, minLat = box.minLat - height, columns = n + 2, rows = n + 2
        var cells = [UInt8](repeating: Cell.outside.rawValue, count: columns * rows)
        // The rows each segment passes through or near: the cells it may mark, and the rows it is
        // filed under below.
        let spans = segments.map { s -> ClosedRange<Int>? in
            let r0 = max(0, Int(((min(s.y1, s.y2) - Self.margin) - minLat) / height))
            let r1 = min(rows - 1, Int(((max(s.y1, s.y2) + Self.margin) - minLat) / height))
            return r0 <= r1 ? r0...r1 : nil
        }

        // Edge cells: every cell a segment passes through or near.
        for (s, span) in zip(segments, spans) {
            let c0 = max(0, Int(((min(s.x1, s.x2) - Self.margin) - minLon) / width))
            let c1 = min(columns - 1, Int(((max(s.x1, s.x2) + Self.margin) - minLon) / width))
            guard c0 <= c1, let span else { continue }
            for r in span {
                for c in c0...c1 where cells[r * columns + c] != Cell.edge.rawValue {
                    let x0 = minLon + Double(c) * width - Self.margin, y0 = minLat + Double(r) * height - Self.margin
                    if s.meets(minX: x0, minY: y0, maxX: x0 + width + 2 * Self.margin, maxY: y0 + height + 2 * Self.margin) {
                        cells[r * columns + c] = Cell.edge.rawValue
                    }
                }
            }
        }
        // The other cells: no edge touches them, so a run of them along a row lies on one side of
        // every edge; one ray cast from the first cell's centre decides the whole run.
        for r in 0..<rows {
            var c = 0
            while c < columns {
                guard cells[r * columns + c] != Cell.edge.rawValue else { c += 1; continue }
                let x = minLon + (Double(c) + 0.5) * width, y = minLat + (Double(r) + 0.5) * height
                let state = Self.crossings(x: x, y: y, segments) ? Cell.inside.rawValue : Cell.outside.rawValue
                while c < columns, cells[r * columns + c] != Cell.edge.rawValue {
                    cells[r * columns + c] = state
                    c += 1
                }
            }
        }
        let packed = Frame.pack(cells)
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: packed.count)
        _ = storage.initialize(from: packed)
        self.cellStorage = storage
        let clearance = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: cells.count)
        _ = clearance.initialize(from: Self.clearances(cells, columns: columns, rows: rows))
        self.clearanceStorage = clearance
        self.frame = Frame(minLon: minLon, minLat: minLat, cellWidth: width, cellHeight: height, columns: columns, rows: rows,
                           cells: UnsafePointer(storage.baseAddress), clearance: UnsafePointer(clearance.baseAddress))
        // Each segment is filed under every row it reaches. An area of many long north-south edges
        // (a comb of 50,000 teeth) would file most of them under every row, hundreds of megabytes:
        // past a budget the rows are not kept, and points and circles near its edges go to exact
        // geometry as before.
        let filed = spans.reduce(0) { $0 + ($1?.count ?? 0) }
        guard filed <= max(Self.rowEdgeBudget, 8 * segments.count) else {
            self.rowStarts = []
            self.rowEdges = []
            return
        }
        var byRow = [[Segment]](repeating: [], count: rows)
        for (s, span) in zip(segments, spans) {
            guard let span else { continue }
            for r in span { byRow[r].append(s) }
        }
        var rowStarts: [Int32] = [0], rowEdges: [Segment] = []
        rowEdges.reserveCapacity(filed)
        for row in byRow {
            rowEdges.append(contentsOf: row)
            rowStarts.append(Int32(rowEdges.count))
        }
        self.rowStarts = rowStarts
        self.rowEdges = rowEdges
    }

    deinit {
        self.cellStorage.deallocate()
        self.clearanceStorage.deallocate()
    }

    /// Each cell's clearance (see ``Frame/clearance``), from the cells one a byte: for an inside
    /// cell, the chessboard distance to the nearest cell that is not inside, less one; for an
    /// outside cell, to the nearest that is not outside (the world past the grid is outside).
    /// Two passes each, forward and back, which give chessboard distances exactly.
    static func clearances(_ cells: [UInt8], columns: Int, rows: Int) -> [UInt8] {
        let far = Int32.max / 2
        func distances(to kind: UInt8) -> [Int32] {
            var d = cells.map { $0 == kind ? far : 0 }
            if kind == Cell.inside.rawValue {
                // The world past the grid is not inside (the grid's border cells are outside anyway).
                for r in 0..<rows {
                    for c in 0..<columns where r == 0 || c == 0 || r == rows - 1 || c == columns - 1 {
                        d[r * columns + c] = min(d[r * columns + c], 1)
                    }
                }
            }
            for r in 0..<rows {
                for c in 0..<columns {
                    var v = d[r * columns + c]
                    if c > 0 { v = min(v, d[r * columns + c - 1] + 1) }
                    if r > 0 {
                        v = min(v, d[(r - 1) * columns + c] + 1)
                        if c > 0 { v = min(v, d[(r - 1) * columns + c - 1] + 1) }
                        if c < columns - 1 { v = min(v, d[(r - 1) * columns + c + 1] + 1) }
                    }
                    d[r * columns + c] = v
                }
            }
            for r in stride(from: rows - 1, through: 0, by: -1) {
                for c in stride(from: columns - 1, through: 0, by: -1) {
                    var v = d[r * columns + c]
                    if c < columns - 1 { v = min(v, d[r * columns + c + 1] + 1) }
                    if r < rows - 1 {
                        v = min(v, d[(r + 1) * columns + c] + 1)
                        if c > 0 { v = min(v, d[(r + 1) * columns + c - 1] + 1) }
                        if c < columns - 1 { v = min(v, d[(r + 1) * columns + c + 1] + 1) }
                    }
                    d[r * columns + c] = v
                }
            }
            return d
        }
        let inside = distances(to: Cell.inside.rawValue), outside = distances(to: Cell.outside.rawValue)
        return cells.indices.map { i in
            let d: Int32
            switch cells[i] {
            case Cell.inside.rawValue: d = inside[i]
            case Cell.outside.rawValue: d = outside[i]
            default: return 0
            }
            return UInt8(clamping: d - 1)
        }
    }

    /// How many segments the rows may hold in all (each segment once per row it reaches), unless
    /// eight times the area's segments is more: 64k segments, 2 MiB.
    static let rowEdgeBudget = 65_536

    /// Whether the rows' segments are kept (see ``init(_:side:)``); without them only the cells
    /// answer.
    var hasRowEdges: Bool { !self.rowStarts.isEmpty }

    /// Whether the point is in the area (boundary included): `nil` when it lies within ``margin``
    /// of an edge, where exact geometry must decide.
    public func contains(_ p: Coordinate) -> Bool? {
        self.frame.contains(p) { row in self.containsNearEdges(p, row: row) }
    }

    /// The even-odd rule for a point in an edge cell of `row`, over the segments filed under that
    /// row, or `nil` within ``margin`` of one of them.
    ///
    /// Every segment that crosses the point's latitude, and every one within ``margin`` of the
    /// point, reaches the row, so the row's list is enough. A point farther than ``margin`` from
    /// every segment is off the boundary by far more than rounding, and each crossing it counts lies
    /// at least that far east or west of it: the answer is exact geometry's.
    func containsNearEdges(_ p: Coordinate, row: Int) -> Bool? {
        guard self.hasRowEdges else { return nil }
        let x = p.lon, y = p.lat
        let margin = Self.margin
        return self.rowStarts.withUnsafeBufferPointer { starts in
            self.rowEdges.withUnsafeBufferPointer { edges in
                var inside = false
                for i in Int(starts[row])..<Int(starts[row + 1]) {
                    let s = edges[i]
                    if s.box(holds: x, y, widenedBy: margin, margin), s.distanceSquared(x: x, y: y) <= margin * margin { return nil }
                    if (s.y1 > y) != (s.y2 > y), s.x1 + (y - s.y1) / (s.y2 - s.y1) * (s.x2 - s.x1) > x { inside.toggle() }
                }
                return inside
            }
        }
    }

    /// Where an ellipse in degrees stands (``Frame/classify(ellipseAt:inner:outer:degreesPerMetre:limit:)``).
    public func classify(ellipseAt centre: Coordinate, inner: Double, outer: Double, degreesPerMetre: (lat: Double, lon: Double),
                         limit: Int = 4_096) -> Containment? {
        self.frame.classify(ellipseAt: centre, inner: inner, outer: outer, degreesPerMetre: degreesPerMetre, limit: limit)
    }

    /// Each cell's clearance (``Frame/clearance``), row by row, for tests.
    var clearances: [UInt8] {
        guard let clearance = self.frame.clearance else { return [] }
        return Array(UnsafeBufferPointer(start: clearance, count: self.columns * self.rows))
    }

    /// For a circle the cells cannot judge, from the distance in metres between its centre and
    /// the nearest edge, in the plane tangent at the centre (`degreesPerMetre` there):
    /// `.uncertain` when an edge comes within `crossing`, the centre's side when none comes within
    /// `clearance`, `nil` in between (or when the rows to read are more than `rowLimit`).
    ///
    /// A boundary point well inside the circle has both the area and its outside next to it, both
    /// in the circle: the circle crosses the fence. A circle with no edge within its reach lies
    /// wholly on its centre's side. Every segment within either distance of the centre reaches one
    /// of the rows within it, so those rows' lists are enough.
    public func classify(centre: Coordinate, crossing: Double, clearance: Double, degreesPerMetre: (lat: Double, lon: Double),
                         rowLimit: Int = 64) -> Containment? {
        let reach = max(crossing, clearance)
        let (dLat, dLon) = degreesPerMetre
        guard self.hasRowEdges, self.frame.cells != nil, reach > 0, dLat > 0, dLon > 0 else { return nil }
        let reachLat = reach * dLat, reachLon = reach * dLon
        let first = Int((((centre.lat - reachLat) - self.minLat) / self.cellHeight).rounded(.down))
        let last = Int((((centre.lat + reachLat) - self.minLat) / self.cellHeight).rounded(.down))
        var nearest = Double.infinity
        if last >= 0, first < self.rows {
            let rows = max(0, first)...min(self.rows - 1, last)
            guard rows.count <= rowLimit else { return nil }
            let x = centre.lon, y = centre.lat, crossingSquared = crossing * crossing
            nearest = self.rowStarts.withUnsafeBufferPointer { starts in
                self.rowEdges.withUnsafeBufferPointer { edges in
                    var nearest = Double.infinity
                    for r in rows {
                        for i in Int(starts[r])..<Int(starts[r + 1]) {
                            let s = edges[i]
                            guard s.box(holds: x, y, widenedBy: reachLon, reachLat) else { continue }
                            // The segment in metres east and north of the centre.
                            let inMetres = Segment(x1: (s.x1 - x) / dLon, y1: (s.y1 - y) / dLat, x2: (s.x2 - x) / dLon, y2: (s.y2 - y) / dLat)
                            nearest = min(nearest, inMetres.distanceSquared(x: 0, y: 0))
                            if nearest < crossingSquared { return nearest }
                        }
                    }
                    return nearest
                }
            }
        }
        if nearest < crossing * crossing { return .uncertain }
        if clearance > 0, nearest > clearance * clearance { return self.contains(centre).map { $0 ? .inside : .outside } }
        return nil
    }

    /// The grid's cells as counts (outside, inside, edge), for tests and sizing.
    var census: (outside: Int, inside: Int, edge: Int) {
        var out = (0, 0, 0)
        for i in 0..<self.columns * self.rows {
            switch self.frame.cell(i) {
            case Cell.outside.rawValue: out.0 += 1
            case Cell.inside.rawValue: out.1 += 1
            default: out.2 += 1
            }
        }
        return out
    }

    struct Segment {
        var x1, y1, x2, y2: Double

        /// Whether the segment's bounding box, widened by `dx` east and west and `dy` north and
        /// south, holds (x, y); a segment whose box does not is farther than that from the point.
        func box(holds x: Double, _ y: Double, widenedBy dx: Double, _ dy: Double) -> Bool {
            x >= min(self.x1, self.x2) - dx && x <= max(self.x1, self.x2) + dx && y >= min(self.y1, self.y2) - dy
                && y <= max(self.y1, self.y2) + dy
        }

        /// The squared distance from (x, y) to the segment, in its units (degrees², or metres² for a
        /// segment given in metres).
        func distanceSquared(x: Double, y: Double) -> Double {
            let dx = self.x2 - self.x1, dy = self.y2 - self.y1
            let length = dx * dx + dy * dy
            let t = length > 0 ? min(1, max(0, ((x - self.x1) * dx + (y - self.y1) * dy) / length)) : 0
            let ex = self.x1 + t * dx - x, ey = self.y1 + t * dy - y
            return ex * ex + ey * ey
        }

        /// Whether the segment meets the closed rectangle (Liang–Barsky clipping).
        func meets(minX: Double, minY: Double, maxX: Double, maxY: Double) -> Bool {
            var t0 = 0.0, t1 = 1.0
            let dx = self.x2 - self.x1, dy = self.y2 - self.y1
            func clip(_ p: Double, _ q: Double) -> Bool {
                if p == 0 { return q >= 0 }
                let t = q / p
                if p < 0 {
                    if t > t1 { return false }
                    t0 = max(t0, t)
                } else {
                    if t < t0 { return false }
                    t1 = min(t1, t)
                }
                return true
            }
            return clip(-dx, self.x1 - minX) && clip(dx, maxX - self.x1) && clip(-dy, self.y1 - minY) && clip(dy, maxY - self.y1)
                && t0 <= t1
        }
    }

    static func segments(_ area: MultiPolygon) -> [Segment] {
        var out: [Segment] = []
        for polygon in area.polygons {
            for ring in polygon.rings where ring.count >= 2 {
                for i in 1..<ring.count where ring[i - 1] != ring[i] {
                    out.append(Segment(x1: ring[i - 1].lon, y1: ring[i - 1].lat, x2: ring[i].lon, y2: ring[i].lat))
                }
            }
        }
        return out
    }

    /// Even-odd ray cast to +x: whether (x, y) is inside; only called far from every edge.
    static func crossings(x: Double, y: Double, _ segments: [Segment]) -> Bool {
        var inside = false
        for s in segments where (s.y1 > y) != (s.y2 > y) {
            let xCross = s.x1 + (y - s.y1) / (s.y2 - s.y1) * (s.x2 - s.x1)
            if xCross > x { inside.toggle() }
        }
        return inside
    }
}

extension AreaGrid.Frame {
    /// Where an ellipse in degrees stands: the points whose offset from `centre`, in metres by
    /// `degreesPerMetre` (`Δlat / lat` north, `Δlon / lon` east), is within a radius.
    ///
    /// `.inside` if every cell the ellipse of radius `outer` meets is inside; `.outside` if none of
    /// them is inside or edge; `.uncertain` if the ellipse of radius `inner` meets both an inside
    /// cell and an outside one (or reaches past the grid); `nil` otherwise, or when the ellipse's
    /// box covers more than `limit` of the grid's cells. A shape lying between the two ellipses (the accuracy
    /// circle's circumscribed polygon) stands where the answer says.
    ///
    /// A circle is judged cell by cell, row by row: its bounding box's corners would often reach an
    /// edge cell the circle itself never meets.
    ///
    /// A circle well inside or outside the area is judged by its centre's cell alone, by the
    /// cell's clearance (`byClearance`, which only tests turn off: the answer is the same).
    func classify(ellipseAt centre: Coordinate, inner: Double, outer: Double, degreesPerMetre: (lat: Double, lon: Double),
                  limit: Int = 4_096, byClearance: Bool = true) -> Containment? {
        let (dLat, dLon) = degreesPerMetre
        let (c0, c1, r0, r1) = self.box(ellipseAt: centre, outer: outer, degreesPerMetre: degreesPerMetre)
        guard c1 >= 0, r1 >= 0, c0 < self.columns, r0 < self.rows, self.cells != nil else { return .outside }
        let rows = max(0, r0)...min(self.rows - 1, r1)
        guard (min(self.columns - 1, c1) - max(0, c0) + 1) * rows.count <= limit else { return nil }
        if byClearance, let answer = self.clearanceAnswer(centre, columns: c0...c1, rows: r0...r1) { return answer }
        let outsideBit: UInt8 = 1 << AreaGrid.Cell.outside.rawValue, insideBit: UInt8 = 1 << AreaGrid.Cell.inside.rawValue
        // Cells the outer ellipse meets, and cells the inner one meets; past the grid is outside.
        var seen: UInt8 = 0, met: UInt8 = 0
        if c0 < 0 || r0 < 0 || c1 >= self.columns || r1 >= self.rows { seen |= outsideBit }
        let innerBox = (minLon: centre.lon - inner * dLon, maxLon: centre.lon + inner * dLon,
                        minLat: centre.lat - inner * dLat, maxLat: centre.lat + inner * dLat)
        let gridMaxLon = self.minLon + Double(self.columns) * self.cellWidth, gridMaxLat = self.minLat + Double(self.rows) * self.cellHeight
        if innerBox.minLon < self.minLon || innerBox.minLat < self.minLat || innerBox.maxLon > gridMaxLon || innerBox.maxLat > gridMaxLat {
            met |= outsideBit
        }
        // Once the outer ellipse has met an inside cell and another, only `.uncertain` is left to
        // find; once the inner one has met both kinds, that is the answer.
        let mixed = { (bits: UInt8) in bits & insideBit != 0 && bits & ~insideBit != 0 }
        var decided = false
        scan: for r in rows {
            // The row's nearest latitude to the centre, in metres.
            let south = (self.minLat + Double(r) * self.cellHeight - centre.lat) / dLat
            let north = south + self.cellHeight / dLat
            let near = south > 0 ? south : north < 0 ? -north : 0
            func columns(_ radius: Double) -> ClosedRange<Int>? {
                guard near <= radius else { return nil }
                let halfWidth = (radius * radius - near * near).squareRoot() * dLon
                let first = Int(((centre.lon - halfWidth - self.minLon) / self.cellWidth).rounded(.down))
                let last = Int(((centre.lon + halfWidth - self.minLon) / self.cellWidth).rounded(.down))
                guard last >= 0, first < self.columns else { return nil }
                return max(0, first)...min(self.columns - 1, last)
            }
            if !mixed(seen), let cs = columns(outer) {
                for c in cs { seen |= 1 << self.cell(r * self.columns + c) }
            }
            if let cs = columns(inner) {
                for c in cs { met |= 1 << self.cell(r * self.columns + c) }
                if met & insideBit != 0, met & outsideBit != 0 { decided = true; break scan }
            }
        }
        if decided { return .uncertain }
        if seen == insideBit { return .inside }
        if seen == outsideBit { return .outside }
        return nil
    }

    /// The columns and rows of the cells holding the box of the ellipse of radius `outer` (the
    /// first and last of each, unclamped: they may lie past the grid).
    @inline(__always)
    func box(ellipseAt centre: Coordinate, outer: Double, degreesPerMetre: (lat: Double, lon: Double)) -> (Int, Int, Int, Int) {
        let (dLat, dLon) = degreesPerMetre
        return (Int(((centre.lon - outer * dLon - self.minLon) / self.cellWidth).rounded(.down)),
                Int(((centre.lon + outer * dLon - self.minLon) / self.cellWidth).rounded(.down)),
                Int(((centre.lat - outer * dLat - self.minLat) / self.cellHeight).rounded(.down)),
                Int(((centre.lat + outer * dLat - self.minLat) / self.cellHeight).rounded(.down)))
    }

    /// The answer of the cell holding `centre`, if the rings of cells around it that are all of
    /// its kind (its ``clearance``) hold the ellipse's box (`columns`, `rows`: ``box(ellipseAt:outer:degreesPerMetre:)``),
    /// with a column to spare each way: then the ellipse meets only cells of that kind, and the
    /// scan would say `.inside` or `.outside` by that kind. (The scan reads the box's rows, and in
    /// each the columns of the ellipse's half-width there, which rounding may put a column past
    /// the box.) `nil` otherwise.
    @inline(__always)
    func clearanceAnswer(_ centre: Coordinate, columns: ClosedRange<Int>, rows: ClosedRange<Int>) -> Containment? {
        let fx = (centre.lon - self.minLon) / self.cellWidth, fy = (centre.lat - self.minLat) / self.cellHeight
        guard fx >= 0, fy >= 0, fx < Double(self.columns), fy < Double(self.rows), let clearance = self.clearance else { return nil }
        let c = Int(fx), r = Int(fy), i = r * self.columns + c
        let k = Int(clearance[i])
        guard columns.lowerBound > c - k, columns.upperBound < c + k, rows.lowerBound >= r - k, rows.upperBound <= r + k else { return nil }
        return self.cell(i) == AreaGrid.Cell.inside.rawValue ? .inside : .outside
    }

    /// Whether `p` is in the area by its cell: `true` or `false` where the cell decides, else
    /// `nearEdges` with the cell's row (which answers as ``AreaGrid/containsNearEdges(_:row:)``).
    @inline(__always)
    func contains(_ p: Coordinate, nearEdges: (Int) -> Bool?) -> Bool? {
        let fx = (p.lon - self.minLon) / self.cellWidth
        let fy = (p.lat - self.minLat) / self.cellHeight
        guard fx >= 0, fy >= 0, fx < Double(self.columns), fy < Double(self.rows), self.cells != nil else { return false }
        switch self.cell(Int(fy) * self.columns + Int(fx)) {
        case AreaGrid.Cell.inside.rawValue: return true
        case AreaGrid.Cell.outside.rawValue: return false
        default: return nearEdges(Int(fy))
        }
    }
}
