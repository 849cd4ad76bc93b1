import StepSignProtocol

extension LedgerExportEntry {
    /// One line of an export, read with the protocol's strict parser: an object with `seq`,
    /// `signatureID`, `payloadSignature`, `prevHash` and `entryHash`, and `user` and `peer`
    /// (`uid`, `pid`, `comm`) when present and not null; other members are ignored. Nil when
    /// the line is not such an object, a member has the wrong type, or one is named twice.
    public init?(jsonLine: some Collection<UInt8>) {
        guard let object = try? JSONParser.parse(jsonLine), object.members != nil,
              let seq = object["seq"]?.intValue,
              let signatureID = object["signatureID"]?.stringValue,
              let payloadSignature = object["payloadSignature"]?.stringValue,
              let prevHash = object["prevHash"]?.stringValue,
              let entryHash = object["entryHash"]?.stringValue
        else { return nil }
        var user: String?
        if let value = object["user"], !value.isNull {
            guard let text = value.stringValue else { return nil }
            user = text
        }
        var peer: SignaturePeer?
        if let value = object["peer"], !value.isNull {
            guard let uid = value["uid"]?.intValue.flatMap(UInt32.init(exactly:)),
                  let pid = value["pid"]?.intValue.flatMap(Int32.init(exactly:)),
                  let comm = value["comm"]?.stringValue
            else { return nil }
            peer = SignaturePeer(uid: uid, pid: pid, comm: comm)
        }
        self.init(seq: seq, signatureID: signatureID, payloadSignature: payloadSignature, prevHash: prevHash,
                  entryHash: entryHash, user: user, peer: peer)
    }
}
