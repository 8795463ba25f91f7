import PostgresNIO

/// A PostgreSQL array whose elements may be NULL, for binding a nullable column of an `unnest`
/// insert (postgres-nio encodes arrays of non-optional elements only): `\(NullableArray(xs))::text[]`.
struct NullableArray<Element: PostgresArrayEncodable>: PostgresEncodable, Sendable where Element: Sendable {
    var elements: [Element?]

    init(_ elements: [Element?]) {
        self.elements = elements
    }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    /// The binary array format (`array_recv`): dimensions, has-nulls flag, element type, the one
    /// dimension's length and lower bound, then each element as its length (-1 for NULL) and bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
        buffer.writeInteger(self.elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(self.elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !self.elements.isEmpty else { return }
        buffer.writeInteger(Int32(self.elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in self.elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            try element.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - lengthIndex - 4), at: lengthIndex)
        }
    }
}
