extension StepSignConfiguration {
    /// One `[[witness]]`: a C2SP tlog-witness that cosigns the log's checkpoints (SPEC §5.6).
    public struct Witness: Sendable, Equatable {
        /// `name`: the witness's name, the key name of its cosignature lines.
        public var name: String
        /// `url`: where `stepsign-witnessd` submits checkpoints (`<url>/add-checkpoint`).
        public var url: String
        /// `key`: its cosignature verifier key, `name+hex8+base64(0x04 ‖ Ed25519 key)`, named
        /// `name`. Its key ID is checked against the key by the engine (which owns the
        /// cryptography) at start.
        public var key: String

        public init(name: String, url: String, key: String) {
            self.name = name
            self.url = url
            self.key = key
        }
    }
}

extension StepSignConfiguration.Witness {
    /// Reads the `[[witness]]` tables of the root, in order; two with one name are refused.
    static func all(_ root: ConfigTableReader) throws(ConfigError) -> [Self] {
        guard let value = root.table["witness"] else { return [] }
        guard let tables = value.array, tables.allSatisfy({ $0.table != nil }) else {
            throw root.error("witness", value, "expected [[witness]] tables")
        }
        var witnesses: [Self] = []
        for (index, element) in tables.enumerated() {
            guard let table = element.table else { continue }
            let t = ConfigTableReader(file: root.file, path: "witness[\(index + 1)]", table: table)
            let witness = try Self(t)
            if let earlier = witnesses.first(where: { $0.name == witness.name }) {
                throw t.error("name", table["name"], "a second [[witness]] named \(earlier.name)")
            }
            witnesses.append(witness)
        }
        return witnesses
    }

    init(_ t: ConfigTableReader) throws(ConfigError) {
        try t.rejectUnknown(["name", "url", "key"])
        guard t.table["name"] != nil, t.table["url"] != nil, t.table["key"] != nil else {
            throw t.error("name", nil, "a [[witness]] needs name, url and key")
        }
        let name = try t.string("name", default: "") { name in
            name.isEmpty || name.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7f || $0 == "+" || $0.properties.isWhitespace }
                ? "must be one word of printable characters, without spaces or +" : nil
        }
        let url = try t.string("url", default: "") { url in
            (url.hasPrefix("https://") || url.hasPrefix("http://")) && !url.contains(where: \.isWhitespace)
                ? nil : "must be an http:// or https:// URL"
        }
        let key = try t.string("key", default: "") { key in
            let parts = key.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == Substring(name) else {
                return "must be the witness's verifier key (\(name)+hex8+base64), named as the witness"
            }
            guard parts[1].utf8.count == 8, parts[1].utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            else { return "its key ID must be eight lowercase hex digits" }
            // base64(0x04 ‖ 32 bytes) is 44 characters and starts with "B" (0x04 = 000001 00…).
            guard parts[2].utf8.count == 44, parts[2].hasPrefix("B") else {
                return "must be a cosignature key (C2SP type 0x04, Ed25519), not another kind of key"
            }
            return nil
        }
        self.init(name: name, url: url, key: key)
    }
}
