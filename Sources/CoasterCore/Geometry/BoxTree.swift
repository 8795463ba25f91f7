/// A static R-tree over bounding boxes, packed with Sort-Tile-Recursive (Leutenegger et al. 1997).
///
/// Built once from all items, then only queried: finding the items whose box meets a query box is
/// O(log n + k). It answers candidates; exact geometry decides.
///
/// Every level lives in one flat array of nodes and the items' boxes in another, in tree order, so
/// a search walks two buffers by index, with no level's array copied (a reference count) for each
/// node it visits.
public struct BoxTree: Sendable {
    private struct Node: Sendable {
        var box: BoundingBox
        /// Children are `nodes[first ..< first + count]`, or `items[first ..< first + count]` for a leaf.
        var first: Int32
        var count: Int32
    }

    private struct Item: Sendable {
        var box: BoundingBox
        /// The index in the array given at init.
        var index: Int
    }

    private static let fanout = 16
    /// Every node, root level last; a node at or after `firstInner` has nodes as children.
    private var nodes: [Node] = []
    /// Where the inner (non-leaf) nodes start in `nodes`.
    private var firstInner = 0
    /// Where the root level starts in `nodes`.
    private var firstRoot = 0
    private var items: [Item] = []

    public init(_ boxes: [BoundingBox]) {
        guard !boxes.isEmpty else { return }
        let order = Self.tile(Array(boxes.indices), boxes: boxes)
        self.items = order.map { Item(box: boxes[$0], index: $0) }
        var level: [Node] = Self.group(self.items.map(\.box), firstChild: 0)
        var levelStart = 0
        var nodes = level
        while level.count > 1 {
            // The level's nodes, retiled; their parents point into where they now sit in `nodes`.
            let reordered = Self.tile(Array(level.indices), boxes: level.map(\.box)).map { level[$0] }
            nodes.replaceSubrange(levelStart..<nodes.count, with: reordered)
            let parents = Self.group(reordered.map(\.box), firstChild: levelStart)
            levelStart = nodes.count
            if self.firstInner == 0 { self.firstInner = levelStart }
            nodes.append(contentsOf: parents)
            level = parents
        }
        // A single leaf is the root; then there are no inner nodes.
        if self.firstInner == 0 { self.firstInner = nodes.count }
        self.firstRoot = levelStart
        self.nodes = nodes
    }

    /// Nodes over runs of `fanout` consecutive children, the first of which is at `firstChild`.
    private static func group(_ boxes: [BoundingBox], firstChild: Int) -> [Node] {
        stride(from: 0, to: boxes.count, by: Self.fanout).map { start in
            let count = min(Self.fanout, boxes.count - start)
            var box = boxes[start]
            for i in start..<(start + count) { box = box.union(boxes[i]) }
            return Node(box: box, first: Int32(firstChild + start), count: Int32(count))
        }
    }

    public var count: Int { self.items.count }

    /// Indices (into the array given at init) of the items whose box intersects `query`.
    public func search(_ query: BoundingBox, _ body: (Int) -> Void) {
        self.nodes.withUnsafeBufferPointer { nodes in
            self.items.withUnsafeBufferPointer { items in
                for root in self.firstRoot..<nodes.count where nodes[root].box.intersects(query) {
                    Self.visit(root, nodes: nodes, firstInner: self.firstInner, items: items, query: query, body)
                }
            }
        }
    }

    public func search(_ query: BoundingBox) -> [Int] {
        var out: [Int] = []
        self.search(query) { out.append($0) }
        return out
    }

    private static func visit(_ node: Int, nodes: UnsafeBufferPointer<Node>, firstInner: Int, items: UnsafeBufferPointer<Item>,
                              query: BoundingBox, _ body: (Int) -> Void) {
        let first = Int(nodes[node].first), end = first + Int(nodes[node].count)
        if node < firstInner {
            for i in first..<end where items[i].box.intersects(query) { body(items[i].index) }
            return
        }
        for child in first..<end where nodes[child].box.intersects(query) {
            Self.visit(child, nodes: nodes, firstInner: firstInner, items: items, query: query, body)
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
