#if canImport(Glibc)
import Glibc
#endif

/// stepsign's line protocol: level-0 `authenticateUserAndSignData`, a success being error 0
/// with status 100. Written and matched as bytes, so the client's cost stays small.
struct StepSignLineProtocol: WireProtocol {
    let user: String
    let payloadBytes: Int
    static let success = Array(#""status":{"code":100"#.utf8)
    static let accepted = Array(#""error":{"code":0,"#.utf8)

    func request(_ serial: Int, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":\#(serial),"op":"authenticateUserAndSignData","user":"\#(user)","payload":""#.utf8)
        out.append(contentsOf: payload(serial, bytes: payloadBytes))
        out.append(contentsOf: #"","reason":"Benchmark","authLevel":0,"authenticatorType":0}"#.utf8)
        out.append(0x0A)
    }

    func reply(_ input: UnsafeRawBufferPointer) -> (length: Int, ok: Bool)? {
        guard let base = input.baseAddress, input.count > 0,
              let newline = memchr(base, 0x0A, input.count) else { return nil }
        let length = base.distance(to: UnsafeRawPointer(newline)) + 1
        let line = UnsafeRawBufferPointer(rebasing: input[..<length])
        return (length, contains(line, Self.accepted) && contains(line, Self.success))
    }
}
