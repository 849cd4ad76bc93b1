extension StepSignConfiguration {
    /// `[signing]`: signing options.
    public struct Signing: Sendable, Equatable {
        /// `allow_level_0`: whether a caller may ask for authentication level 0 (sign with
        /// no user authentication). Default false.
        public var allowLevel0: Bool
        /// `max_batch_items`: the most items one `authenticateUserAndSignBatch` may sign behind
        /// its one step-up (SPEC §3.4). Default 1000, at most ``maximumBatchItems``.
        public var maxBatchItems: Int
        /// `idempotency_seconds`: how long a signing request's `idempotencyKey` is remembered
        /// (SPEC §3, "Idempotent retries"): a repeat within it gets the first reply again.
        /// Default 86400, 60 to ``maximumIdempotencySeconds``.
        public var idempotencySeconds: Int
        /// `key_store`: where the daemon makes and keeps its signing keys and log key (SPEC §5.7).
        public var keyStore: KeyStore
        /// `[signing.pkcs11]`: the token, when `key_store` is `pkcs11`.
        public var pkcs11: PKCS11

        /// Where new keys are made and kept.
        public enum KeyStore: String, Sendable, Equatable, CaseIterable {
            /// PEM files in `keys/` (default).
            case file
            /// A PKCS#11 token; `keys/` holds only each key's `CKA_ID` and public half.
            case pkcs11
        }

        /// `[signing.pkcs11]` (SPEC §5.7).
        public struct PKCS11: Sendable, Equatable {
            /// `module`: the PKCS#11 module's absolute path ("" unless `key_store` is `pkcs11`).
            public var module: String
            /// `token_label`: the token's label; "" takes the first token present.
            public var tokenLabel: String
            /// `pin_file`: a file holding the user PIN; "" (default) reads the systemd credential
            /// ``pinCredentialName``. The PIN is never in this file.
            public var pinFile: String
            /// `max_sessions`: the most sessions the daemon opens on the token at once. Default 4.
            public var maxSessions: Int

            /// The systemd credential that holds the PIN when `pin_file` is "".
            public static let pinCredentialName = "stepsign-pkcs11-pin"

            public init(module: String = "", tokenLabel: String = "", pinFile: String = "", maxSessions: Int = 4) {
                self.module = module
                self.tokenLabel = tokenLabel
                self.pinFile = pinFile
                self.maxSessions = maxSessions
            }
        }

        /// The largest `max_batch_items`: a batch is committed in one transaction, and its
        /// request must fit one 64 KiB line anyway (at least 28 bytes an item).
        public static let maximumBatchItems = 10_000

        /// The longest `idempotency_seconds`: 30 days.
        public static let maximumIdempotencySeconds = 2_592_000

        public init(allowLevel0: Bool = false, maxBatchItems: Int = 1000, idempotencySeconds: Int = 86400,
                    keyStore: KeyStore = .file, pkcs11: PKCS11 = PKCS11()) {
            self.allowLevel0 = allowLevel0
            self.maxBatchItems = maxBatchItems
            self.idempotencySeconds = idempotencySeconds
            self.keyStore = keyStore
            self.pkcs11 = pkcs11
        }
    }
}
