/// A static R-tree over bounding boxes, packed with Sort-Tile-Recursive (Leutenegger et al. 1997).
///
/// Built once from all items, then only queried: finding the items whose box meets a query box is
/// O(log n + k). It answers candidates; exact geometry decides.
public struct BoxTree: Sendable {
    private struct Node: Sendable {
        var box: BoundingBox
        /// Children are `entries[first ..< first + count]` of the level below (items for leaves).
        var first: Int
        var count: Int
    }

    private static let fanout = 16
    /// levels[0] are leaves (pointing into `itemOrder`), the last level is the root(s).
    private var levels: [[Node]] = []
    private var itemOrder: [Int] = []
    private var itemBoxes: [BoundingBox] = []

    public init(_ boxes: [BoundingBox]) {
        self.itemBoxes = boxes
        guard !boxes.isEmpty else { return }
        var order = Self.tile(Array(boxes.indices), boxes: boxes)
        self.itemOrder = order
        var level: [Node] = stride(from: 0, to: order.count, by: Self.fanout).map { start in
            let count = min(Self.fanout, order.count - start)
            var box = boxes[order[start]]
            for i in start..<(start + count) { box = box.union(boxes[order[i]]) }
            return Node(box: box, first: start, count: count)
        }
        self.levels.append(level)
        while level.count > 1 {
            let nodeBoxes = level.map(\.box)
            order = Self.tile(Array(level.indices), boxes: nodeBoxes)
            let reordered = order.map { level[$0] }
            self.levels[self.levels.count - 1] = reordered
            level = stride(from: 0, to: reordered.count, by: Self.fanout).map { start in
                let count = min(Self.fanout, reordered.count - start)
                var box = reordered[start].box
                for i in start..<(start + count) { box = box.union(reordered[i].box) }
                return Node(box: box, first: start, count: count)
            }
            self.levels.append(level)
        }
    }

    public var count: Int { self.itemBoxes.count }

    /// Indices (into the array given at init) of the items whose box intersects `query`.
    public func search(_ query: BoundingBox, _ body: (Int) -> Void) {
        guard let top = self.levels.last else { return }
        for root in top where root.box.intersects(query) {
            self.visit(root, level: self.levels.count - 1, query: query, body)
        }
    }

    public func search(_ query: BoundingBox) -> [Int] {
        var out: [Int] = []
        self.search(query) { out.append($0) }
        return out
    }

    private func visit(_ node: Node, level: Int, query: BoundingBox, _ body: (Int) -> Void) {
        if level == 0 {
            for i in node.first..<(node.first + node.count) {
                let item = self.itemOrder[i]
                if self.itemBoxes[item].intersects(query) { body(item) }
            }
            return
        }
        let children = self.levels[level - 1]
        for i in node.first..<(node.first + node.count) where children[i].box.intersects(query) {
            self.visit(children[i], level: level - 1, query: query, body)
        }
    }

    /// STR order: sort by x centre, cut into vertical slices, sort each slice by y centre.
    private static func tile(_ items: [Int], boxes: [BoundingBox]) -> [Int] {
        let leafCount = (items.count + fanout - 1) / fanout
        let slices = Int(Double(leafCount).squareRoot().rounded(.up))
        let perSlice = slices * fanout
        let byX = items.sorted { boxes[$0].center.lon < boxes[$1].center.lon }
        var out: [Int] = []
        out.reserveCapacity(items.count)
        for start in stride(from: 0, to: byX.count, by: perSlice) {
            let slice = byX[start..<min(start + perSlice, byX.count)]
            out.append(contentsOf: slice.sorted { boxes[$0].center.lat < boxes[$1].center.lat })
        }
        return out
    }
}
