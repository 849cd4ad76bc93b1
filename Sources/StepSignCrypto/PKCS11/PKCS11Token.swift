internal import CPKCS11
import Dispatch
import Synchronization

/// A PKCS#11 token (SPEC §5.7): its module, the slot that holds it (found by label), and a
/// pool of at most `maxSessions` logged-in sessions, so that many signatures can be under way
/// at once without asking more of the token than it offers.
///
/// The PIN is kept in memory (the process is non-dumpable) because a token that stops
/// answering is opened again, and its sessions must log in again; it is never logged and
/// never in an error. A call that says the token or its session is gone (``PKCS11Error/tokenStoppedAnswering``)
/// closes every session; the next call finds the slot again and logs in again.
///
/// `@unchecked Sendable`: the mutable state is behind `state`'s mutex, and a session handle is
/// used by one thread at a time (between taking it from the pool and putting it back).
public final class PKCS11Token: @unchecked Sendable {
    let module: PKCS11Module
    /// The label the token was asked for ("" took the first token).
    public let label: String
    public let maxSessions: Int
    private let pin: [UInt8]
    /// Admits at most `maxSessions` users of a session at once.
    private let admission: DispatchSemaphore

    private struct State {
        var slot: CK_SLOT_ID?
        var idle: [CK_SESSION_HANDLE] = []
        /// Sessions open now, idle or in use.
        var open = 0
        /// Counts reopenings; object handles found under an earlier one are stale.
        var generation = 0
        /// Private key handles by `CKA_ID` (hex), found in this generation.
        var handles: [String: CK_OBJECT_HANDLE] = [:]
        /// Whether the module must be initialised again before the slot is looked for (the
        /// token stopped answering; this generation has not opened a session yet).
        var reinitialize = false
    }
    private let state = Mutex(State())
    /// Held while the slot is looked for (and the module initialised again).
    private let opening = Mutex(())

    /// Loads `modulePath`, finds the token labelled `label` ("" the first token present),
    /// and logs in with `pin`: a wrong PIN, a missing module or token throws at once.
    public init(modulePath: String, label: String, pin: [UInt8], maxSessions: Int) throws(PKCS11Error) {
        self.module = try PKCS11Module(path: modulePath)
        self.label = label
        self.pin = pin
        self.maxSessions = max(1, maxSessions)
        self.admission = DispatchSemaphore(value: self.maxSessions)
        try withSession { _ in }
    }

    /// Logs out and closes the sessions; the module (`C_Finalize`) goes with the last reference.
    deinit {
        let idle = state.withLock { $0.idle }
        if let first = idle.first { _ = module.functions.pointee.C_Logout?(first) }
        for session in idle { _ = module.functions.pointee.C_CloseSession?(session) }
    }

    /// How many sessions are open now (for tests and the metrics of the pool).
    public var openSessions: Int { state.withLock { $0.open } }

    /// Runs `body` with a logged-in session of its own, waiting while all `maxSessions` are in
    /// use. A failure that means the token is gone closes every session first.
    func withSession<T>(_ body: (CK_SESSION_HANDLE) throws(PKCS11Error) -> T) throws(PKCS11Error) -> T {
        admission.wait()
        defer { admission.signal() }
        let (session, generation) = try takeSession()
        do throws(PKCS11Error) {
            let result = try body(session)
            state.withLock { state in
                if state.generation == generation { state.idle.append(session) }
            }
            return result
        } catch {
            if error.tokenStoppedAnswering {
                reset(after: generation)
            } else {
                state.withLock { state in
                    if state.generation == generation { state.idle.append(session) }
                }
            }
            throw error
        }
    }

    /// An idle session, or a new one (finding the slot and logging in when there is none).
    private func takeSession() throws(PKCS11Error) -> (CK_SESSION_HANDLE, Int) {
        if let taken = state.withLock({ state -> (CK_SESSION_HANDLE, Int)? in
            state.idle.popLast().map { ($0, state.generation) }
        }) {
            return taken
        }
        let (known, generation, reinitialize) = state.withLock { ($0.slot, $0.generation, $0.reinitialize) }
        let slot: CK_SLOT_ID
        if let known {
            slot = known
        } else {
            // One thread at a time looks for the slot, so that a module initialised again for
            // one is not finalised under it by another.
            slot = try opening.withLock { _ throws(PKCS11Error) -> CK_SLOT_ID in
                let (found, again) = state.withLock { state in
                    state.generation == generation ? (state.slot, state.reinitialize) : (nil, false)
                }
                if let found { return found }
                if again && reinitialize {
                    // Reopening a token that stopped answering: the module looks for it afresh.
                    try module.reinitialize()
                    state.withLock { state in if state.generation == generation { state.reinitialize = false } }
                }
                return try findSlot()
            }
        }
        guard let openSession = module.functions.pointee.C_OpenSession else { throw module.missing("C_OpenSession") }
        var session: CK_SESSION_HANDLE = 0
        let opened = openSession(slot, CK_FLAGS(CKF_SERIAL_SESSION | CKF_RW_SESSION), nil, nil, &session)
        guard opened == CKR_OK else {
            let error = PKCS11Error.call("C_OpenSession", opened)
            if error.tokenStoppedAnswering || known == nil { reset(after: generation) }
            throw error
        }
        // One login serves every session of this process on the token.
        guard let login = module.functions.pointee.C_Login else { throw module.missing("C_Login") }
        var pin = self.pin
        let loggedIn = pin.withUnsafeMutableBufferPointer { login(session, CK_USER_TYPE(CKU_USER), $0.baseAddress, UInt($0.count)) }
        pin.withUnsafeMutableBytes { bytes in for index in bytes.indices { bytes[index] = 0 } }
        guard loggedIn == CKR_OK || loggedIn == CKR_USER_ALREADY_LOGGED_IN else {
            _ = module.functions.pointee.C_CloseSession?(session)
            reset(after: generation)
            throw PKCS11Error.call("C_Login", loggedIn)
        }
        state.withLock { state in
            if state.generation == generation {
                state.slot = slot
                state.open += 1
            }
        }
        return (session, generation)
    }

    /// Closes every session of the token (it stopped answering); the next use opens it again.
    private func reset(after generation: Int) {
        let slot: CK_SLOT_ID? = state.withLock { state in
            guard state.generation == generation else { return nil }
            defer { state = State(generation: generation + 1, reinitialize: true) }
            return state.slot
        }
        if let slot { _ = module.functions.pointee.C_CloseAllSessions?(slot) }
    }

    /// The slot whose token has the label asked for (the first token present for "").
    private func findSlot() throws(PKCS11Error) -> CK_SLOT_ID {
        guard let getSlotList = module.functions.pointee.C_GetSlotList else { throw module.missing("C_GetSlotList") }
        guard let getTokenInfo = module.functions.pointee.C_GetTokenInfo else { throw module.missing("C_GetTokenInfo") }
        var count: UInt = 0
        try module.check(getSlotList(CK_BBOOL(CK_TRUE), nil, &count), "C_GetSlotList")
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
        try module.check(getSlotList(CK_BBOOL(CK_TRUE), &slots, &count), "C_GetSlotList")
        for slot in slots.prefix(Int(count)) {
            var info = CK_TOKEN_INFO()
            guard getTokenInfo(slot, &info) == CKR_OK else { continue }
            let text = withUnsafeBytes(of: info.label) { String(decoding: $0, as: UTF8.self) }
            let tokenLabel = String(text.reversed().drop { $0 == " " || $0 == "\0" }.reversed())
            if label.isEmpty || tokenLabel == label { return slot }
        }
        throw PKCS11Error(operation: "C_GetTokenInfo", returnValue: UInt(CKR_TOKEN_NOT_PRESENT),
                          reason: label.isEmpty ? "no token is present in \(module.path)"
                              : "no token labelled \"\(label)\" is present in \(module.path)")
    }

    /// The handle of the private key with `CKA_ID` `id`, found once per opening.
    func privateKeyHandle(id: [UInt8], in session: CK_SESSION_HANDLE) throws(PKCS11Error) -> CK_OBJECT_HANDLE {
        let key = Hex.encode(id)
        if let handle = state.withLock({ $0.handles[key] }) { return handle }
        guard let handle = try findObject(class: UInt(CKO_PRIVATE_KEY), id: id, in: session) else {
            throw PKCS11Error(operation: "C_FindObjects", returnValue: nil,
                              reason: "the token holds no private key with CKA_ID \(key)")
        }
        state.withLock { $0.handles[key] = handle }
        return handle
    }

    /// The first object of `class` with `CKA_ID` `id`, or nil.
    func findObject(class objectClass: UInt, id: [UInt8], in session: CK_SESSION_HANDLE) throws(PKCS11Error) -> CK_OBJECT_HANDLE? {
        let functions = module.functions.pointee
        guard let initFind = functions.C_FindObjectsInit, let find = functions.C_FindObjects,
              let finalFind = functions.C_FindObjectsFinal else { throw module.missing("C_FindObjects") }
        let template = PKCS11Template([(UInt(CKA_CLASS), PKCS11Template.ulong(objectClass)), (UInt(CKA_ID), id)])
        try module.check(initFind(session, template.attributes, UInt(template.count)), "C_FindObjectsInit")
        var handle: CK_OBJECT_HANDLE = 0
        var found: UInt = 0
        let rv = find(session, &handle, 1, &found)
        let finished = finalFind(session)
        try module.check(rv, "C_FindObjects")
        try module.check(finished, "C_FindObjectsFinal")
        return found == 1 ? handle : nil
    }

    /// The value of one attribute of an object (two calls: its length, then its bytes).
    func attribute(_ type: UInt, of object: CK_OBJECT_HANDLE, in session: CK_SESSION_HANDLE) throws(PKCS11Error) -> [UInt8] {
        guard let get = module.functions.pointee.C_GetAttributeValue else { throw module.missing("C_GetAttributeValue") }
        var attribute = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(type), pValue: nil, ulValueLen: 0)
        try module.check(get(session, object, &attribute, 1), "C_GetAttributeValue")
        guard attribute.ulValueLen != UInt.max, attribute.ulValueLen <= 4096 else {
            throw PKCS11Error(operation: "C_GetAttributeValue", returnValue: nil, reason: "the attribute cannot be read")
        }
        var value = [UInt8](repeating: 0, count: Int(attribute.ulValueLen))
        let rv = value.withUnsafeMutableBytes { bytes in
            attribute.pValue = bytes.baseAddress
            return get(session, object, &attribute, 1)
        }
        try module.check(rv, "C_GetAttributeValue")
        return Array(value.prefix(Int(attribute.ulValueLen)))
    }

    /// Whether the token offers `mechanism` (e.g. `CKM_EC_EDWARDS_KEY_PAIR_GEN`).
    func supports(mechanism: UInt) throws(PKCS11Error) -> Bool {
        guard let getMechanisms = module.functions.pointee.C_GetMechanismList else { throw module.missing("C_GetMechanismList") }
        let slot = try withSession { _ throws(PKCS11Error) -> CK_SLOT_ID in
            guard let slot = state.withLock({ $0.slot }) else {
                throw PKCS11Error.call("C_GetMechanismList", UInt(CKR_SLOT_ID_INVALID))
            }
            return slot
        }
        var count: UInt = 0
        try module.check(getMechanisms(slot, nil, &count), "C_GetMechanismList")
        var mechanisms = [CK_MECHANISM_TYPE](repeating: 0, count: Int(count))
        try module.check(getMechanisms(slot, &mechanisms, &count), "C_GetMechanismList")
        return mechanisms.prefix(Int(count)).contains(CK_MECHANISM_TYPE(mechanism))
    }

    /// Signs `data` with the private key `id` and `mechanism` (no parameters): one
    /// `C_SignInit` and one `C_Sign` on a pooled session. `length` is the signature's size.
    func sign(_ data: [UInt8], keyID id: [UInt8], mechanism: UInt, length: Int) throws(PKCS11Error) -> [UInt8] {
        try withSession { session throws(PKCS11Error) -> [UInt8] in
            guard let signInit = module.functions.pointee.C_SignInit, let sign = module.functions.pointee.C_Sign else {
                throw module.missing("C_Sign")
            }
            let key = try privateKeyHandle(id: id, in: session)
            var chosen = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(mechanism), pParameter: nil, ulParameterLen: 0)
            try module.check(signInit(session, &chosen, key), "C_SignInit")
            var signature = [UInt8](repeating: 0, count: length)
            var signatureLength = UInt(length)
            var input = data
            let rv = input.withUnsafeMutableBufferPointer { buffer in
                sign(session, buffer.baseAddress, UInt(buffer.count), &signature, &signatureLength)
            }
            try module.check(rv, "C_Sign")
            guard Int(signatureLength) == length else {
                throw PKCS11Error(operation: "C_Sign", returnValue: nil,
                                  reason: "the token made a signature of \(signatureLength) bytes, not \(length)")
            }
            return signature
        }
    }

    /// Makes a key pair in the token with `mechanism` and the curve `ecParams` (DER), both
    /// halves labelled `label` and identified by `id`: the private half `CKA_TOKEN`,
    /// `CKA_PRIVATE`, `CKA_SENSITIVE`, not `CKA_EXTRACTABLE`, `CKA_SIGN`. Usage attributes the
    /// token derives itself (`CKA_VERIFY`, `CKA_DECRYPT`, `CKA_DERIVE`) are not asked for:
    /// tpm2-pkcs11 refuses a template whose usage differs from the TPM object's. Returns the
    /// public half's `CKA_EC_POINT`.
    func generateKeyPair(mechanism: UInt, ecParams: [UInt8], id: [UInt8], label: String) throws(PKCS11Error) -> [UInt8] {
        try withSession { session throws(PKCS11Error) -> [UInt8] in
            guard let generate = module.functions.pointee.C_GenerateKeyPair else { throw module.missing("C_GenerateKeyPair") }
            let labelBytes = Array(label.utf8)
            let publicTemplate = PKCS11Template([
                (UInt(CKA_TOKEN), PKCS11Template.bool(true)), (UInt(CKA_PRIVATE), PKCS11Template.bool(false)),
                (UInt(CKA_EC_PARAMS), ecParams),
                (UInt(CKA_ID), id), (UInt(CKA_LABEL), labelBytes),
            ])
            let privateTemplate = PKCS11Template([
                (UInt(CKA_TOKEN), PKCS11Template.bool(true)), (UInt(CKA_PRIVATE), PKCS11Template.bool(true)),
                (UInt(CKA_SENSITIVE), PKCS11Template.bool(true)), (UInt(CKA_EXTRACTABLE), PKCS11Template.bool(false)),
                (UInt(CKA_SIGN), PKCS11Template.bool(true)), (UInt(CKA_ID), id), (UInt(CKA_LABEL), labelBytes),
            ])
            var chosen = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(mechanism), pParameter: nil, ulParameterLen: 0)
            var publicKey: CK_OBJECT_HANDLE = 0
            var privateKey: CK_OBJECT_HANDLE = 0
            try module.check(generate(session, &chosen, publicTemplate.attributes, UInt(publicTemplate.count),
                                      privateTemplate.attributes, UInt(privateTemplate.count), &publicKey, &privateKey),
                             "C_GenerateKeyPair")
            state.withLock { $0.handles[Hex.encode(id)] = privateKey }
            return try attribute(UInt(CKA_EC_POINT), of: publicKey, in: session)
        }
    }

    /// The `CKA_EC_POINT` of the public key with `CKA_ID` `id`.
    func publicPoint(id: [UInt8]) throws(PKCS11Error) -> [UInt8] {
        try withSession { session throws(PKCS11Error) -> [UInt8] in
            guard let object = try findObject(class: UInt(CKO_PUBLIC_KEY), id: id, in: session) else {
                throw PKCS11Error(operation: "C_FindObjects", returnValue: nil,
                                  reason: "the token holds no public key with CKA_ID \(Hex.encode(id))")
            }
            return try attribute(UInt(CKA_EC_POINT), of: object, in: session)
        }
    }

    /// `CKA_EC_POINT` without its DER OCTET STRING wrapping (PKCS#11 2.40 wants it wrapped;
    /// some tokens give the bare point).
    static func unwrapPoint(_ value: [UInt8], length: Int) -> [UInt8]? {
        if value.count == length { return value }
        guard value.count >= 2, value[0] == 0x04 else { return nil }
        if value[1] < 0x80, Int(value[1]) == length, value.count == 2 + length { return Array(value[2...]) }
        if value[1] == 0x81, value.count == 3 + length, Int(value[2]) == length { return Array(value[3...]) }
        return nil
    }
}
