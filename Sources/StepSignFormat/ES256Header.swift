import StepSignProtocol

/// The protected header of every JWS stepsign makes: `{"alg":"ES256","kid":…,"typ":…}`, members
/// in that fixed order.
enum ES256Header {
    static func json(kid: String, typ: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + kid.utf8.count + typ.utf8.count)
        writer.beginObject()
        writer.member("alg", "ES256")
        writer.member("kid", kid)
        writer.member("typ", typ)
        writer.endObject()
        return writer.bytes
    }
}
