extension KeyedDecodingContainer {
    /// The member's value, nil when it is absent, and a `valueNotFound` decoding error (422,
    /// naming it) when it is a JSON `null`: the contract's request schemas give a member `null`
    /// only where they say so, and a synthesized `Decodable` reads `null` as absent — a request
    /// the schema calls invalid, accepted (schemathesis' negative checks).
    func decodeUnlessNull<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath + [key],
                                                            debugDescription: "'\(key.stringValue)' is null"))
        }
        return try decode(T.self, forKey: key)
    }
}
