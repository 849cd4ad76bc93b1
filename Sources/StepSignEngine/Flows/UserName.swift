/// What a user ID may be: 1 to 64 characters, no whitespace or control characters.
enum UserName {
    static let limit = 64

    static func validate(_ name: String) throws(StepSignError) {
        guard !name.isEmpty else { throw .invalid("\"user\" must not be empty") }
        guard name.count <= limit else { throw .invalid("\"user\" must be at most \(limit) characters") }
        guard !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else { throw .invalid("\"user\" must not contain whitespace or control characters") }
    }
}
