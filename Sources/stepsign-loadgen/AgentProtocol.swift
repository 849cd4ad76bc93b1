#if canImport(Glibc)
import Glibc
#endif

func sshString(_ bytes: [UInt8], into out: inout [UInt8]) {
    sshUInt32(UInt32(bytes.count), into: &out)
    out.append(contentsOf: bytes)
}

func sshUInt32(_ value: UInt32, into out: inout [UInt8]) {
    out.append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
}

func readUInt32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
}

/// The ssh-agent protocol (draft-miller-ssh-agent): SSH_AGENTC_SIGN_REQUEST (13), answered by
/// SSH_AGENT_SIGN_RESPONSE (14) or SSH_AGENT_FAILURE (5).
struct AgentProtocol: WireProtocol {
    let keyBlob: [UInt8]
    let payloadBytes: Int
    /// When set, each request's data is an SSHSIG signed-data blob of this namespace
    /// (OpenSSH's PROTOCOL.sshsig, a SHA-512 "hash" made of the payload's bytes), as
    /// `ssh-keygen -Y sign` and git send it: what stepsign's agent signs (SPEC §3.5).
    var namespace: String? = nil

    func request(_ serial: Int, into out: inout [UInt8]) {
        var body: [UInt8] = [13]
        sshString(keyBlob, into: &body)
        sshString(data(serial), into: &body)
        sshUInt32(0, into: &body)
        sshUInt32(UInt32(body.count), into: &out)
        out.append(contentsOf: body)
    }

    /// The data signed by request `serial`.
    func data(_ serial: Int) -> [UInt8] {
        let bytes = payload(serial, bytes: payloadBytes)
        guard let namespace else { return bytes }
        var blob = Array("SSHSIG".utf8)
        sshString(Array(namespace.utf8), into: &blob)
        sshString([], into: &blob)
        sshString(Array("sha512".utf8), into: &blob)
        var hash = Array(bytes.prefix(64))
        while hash.count < 64 { hash.append(UInt8(hash.count)) }
        sshString(hash, into: &blob)
        return blob
    }

    func reply(_ input: UnsafeRawBufferPointer) -> (length: Int, ok: Bool)? {
        guard input.count >= 5 else { return nil }
        let length = Int(readUInt32(input, 0)) + 4
        guard input.count >= length else { return nil }
        return (length, input[4] == 14)
    }

    /// Asks the agent for its identities (11 → 12) and returns the first key blob.
    static func firstKey(socket: String) -> [UInt8] {
        let fd = connectUnix(socket)
        defer { close(fd) }
        writeAll(fd, [0, 0, 0, 1, 11])
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { fail("ssh-agent closed the connection") }
            buffer.append(contentsOf: chunk[..<n])
            if buffer.count >= 4 {
                let length = buffer.withUnsafeBytes { Int(readUInt32($0, 0)) }
                if buffer.count >= length + 4 { break }
            }
        }
        return buffer.withUnsafeBytes { bytes -> [UInt8] in
            guard bytes[4] == 12, readUInt32(bytes, 5) >= 1 else { fail("ssh-agent holds no key") }
            let blobLength = Int(readUInt32(bytes, 9))
            return Array(bytes[13..<(13 + blobLength)])
        }
    }
}
