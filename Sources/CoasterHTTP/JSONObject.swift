import Foundation

/// A value that ``JSONWriter`` writes byte for byte as `JSONEncoder` encodes it, given the
/// encoder's settings for answers: `.sortedKeys`, `.withoutEscapingSlashes`, `.iso8601` times.
///
/// Strings, integers, finite doubles, Booleans, times, arrays and optionals of such values, and
/// ``JSONObject``s are.
public protocol JSONWritableValue: Encodable {
    /// Writes the value.
    func write(to json: inout JSONWriter)
    /// Writes the value as the member `name` of the object being written; nothing if it is absent.
    func write(member name: StaticString, to json: inout JSONWriter)
    /// Encodes the value as the member `key`; nothing if it is absent (`encodeIfPresent`).
    func encode<Key: CodingKey>(member key: Key, to container: inout KeyedEncodingContainer<Key>) throws
}

extension JSONWritableValue {
    @inlinable
    public func write(member name: StaticString, to json: inout JSONWriter) {
        json.key(name)
        self.write(to: &json)
    }

    @inlinable
    public func encode<Key: CodingKey>(member key: Key, to container: inout KeyedEncodingContainer<Key>) throws {
        try container.encode(self, forKey: key)
    }
}

/// An object whose members are listed once (``members``), in the order `.sortedKeys` writes them:
/// its `Encodable` form and what ``JSONWriter`` writes of it both come from that list, so the two
/// cannot disagree, and a member added to one is added to both.
///
/// Written through the list, an object costs a call per member (a closure), which the
/// hand-written answers of the hottest routes do not; it still skips everything `JSONEncoder`
/// does per value (containers, boxes, a dictionary sorted per object).
public protocol JSONObject: JSONWritableValue {
    /// The members, sorted by name as `.sortedKeys` sorts them.
    static var members: [JSONMember<Self>] { get }
}

extension JSONObject {
    @inlinable
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        for member in Self.members { member.write(self, &json) }
        json.endObject()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONMemberKey.self)
        for member in Self.members { try member.encode(self, &container) }
    }
}

/// One member of a ``JSONObject``: its name, and how it is read from the object.
public struct JSONMember<Root>: Sendable {
    public let name: StaticString
    @usableFromInline let write: @Sendable (Root, inout JSONWriter) -> Void
    @usableFromInline let encode: @Sendable (Root, inout KeyedEncodingContainer<JSONMemberKey>) throws -> Void

    /// The member `name`, read by `value` (a key path will do: `\.name`, `\.id.rawValue`); left
    /// out where it is `nil`.
    @inlinable
    public init<Value: JSONWritableValue & SendableMetatype>(_ name: StaticString, _ value: @escaping @Sendable (Root) -> Value) {
        self.name = name
        self.write = { root, json in value(root).write(member: name, to: &json) }
        self.encode = { root, container in try value(root).encode(member: JSONMemberKey(name), to: &container) }
    }
}

/// The coding key of a ``JSONMember``: its name.
public struct JSONMemberKey: CodingKey {
    public let stringValue: String
    public var intValue: Int? { nil }

    @usableFromInline init(_ name: StaticString) {
        self.stringValue = name.description
    }

    public init(stringValue: String) {
        self.stringValue = stringValue
    }

    public init?(intValue: Int) {
        nil
    }
}

extension Optional: JSONWritableValue where Wrapped: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) {
        if let self { self.write(to: &json) } else { json.null() }
    }

    @inlinable
    public func write(member name: StaticString, to json: inout JSONWriter) {
        if let self { self.write(member: name, to: &json) }
    }

    @inlinable
    public func encode<Key: CodingKey>(member key: Key, to container: inout KeyedEncodingContainer<Key>) throws {
        if let self { try self.encode(member: key, to: &container) }
    }
}

extension Array: JSONWritableValue where Element: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) {
        json.beginArray()
        for element in self { element.write(to: &json) }
        json.endArray()
    }
}

extension String: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) { json.string(self) }
}

extension Int: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) { json.number(Int64(self)) }
}

extension Int64: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) { json.number(self) }
}

/// Finite values only, as `JSONEncoder` (which throws for the others).
extension Double: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) { json.number(self) }
}

extension Bool: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) { json.bool(self) }
}

/// As the `.iso8601` date strategy writes it.
extension Date: JSONWritableValue {
    @inlinable
    public func write(to json: inout JSONWriter) { json.date(self) }
}
