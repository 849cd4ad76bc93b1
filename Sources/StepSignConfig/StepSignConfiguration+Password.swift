import StepSignProtocol

extension StepSignConfiguration {
    /// `[password]` and `[password.policy]`: attempts, expiry, reuse, hashing and policy.
    public struct Password: Sendable, Equatable {
        /// `max_attempts`: wrong passwords before the user is blocked. Default 3; 1 to 100.
        public var maxAttempts: Int
        /// `max_checks_per_uid`: password checks (scrypt) one peer uid may have queued or
        /// running at once; more get error 14 (SPEC §7). Default 4; 1 to 1024.
        public var maxChecksPerUID: Int
        /// `check_wait_seconds`: how long an answer waits when every attempt left is held by
        /// answers still being checked, before error 14 (SPEC §5.1: a right answer is never
        /// refused only because others were in flight). Default 10; 0 to 300 (0: error 14 at
        /// once instead of waiting).
        public var checkWaitSeconds: Int
        /// `block_seconds`: how long a block lasts; 0 until an admin unlocks. Default 0;
        /// 0 to 31536000 (a year).
        public var blockSeconds: Int
        /// `max_age_days`: days before a password expires; 0 never. Default 90; 0 to 3650.
        public var maxAgeDays: Int
        /// `history`: how many earlier passwords may not be reused. Default 5; 0 to 100.
        public var history: Int
        /// `common_passwords_file`: a list that replaces the built-in common passwords;
        /// "" for the built-in list. Default ""; otherwise an absolute path.
        public var commonPasswordsFile: String
        /// `scrypt_n`: the scrypt cost N used to hash passwords. Default 32768 (2^15); a
        /// power of two from 1024 to 1048576. Memory per hash is 128·N·r bytes (32 MiB at
        /// the defaults) and may not exceed `maximumScryptMemory` (256 MiB).
        public var scryptN: Int
        /// `scrypt_r`: the scrypt block size r. Default 8; 1 to 32.
        public var scryptR: Int
        /// `scrypt_p`: the scrypt parallelism p. Default 1; 1 to 16.
        public var scryptP: Int
        /// `[password.policy]`: the policy sent to clients as `RELID_PASSWORD_POLICY`.
        public var policy: PasswordPolicy

        /// The most memory one hash may need, 128·`scrypt_n`·`scrypt_r` bytes: 256 MiB.
        ///
        /// This is the password hasher's own cap (`PasswordHash.Limits.maximumMemory` in
        /// StepSignCrypto, which this module does not import; a test of the engine checks
        /// that the two are equal), so every accepted configuration can make a hash.
        public static let maximumScryptMemory = 256 << 20

        public init(
            maxAttempts: Int = 3,
            maxChecksPerUID: Int = 4,
            checkWaitSeconds: Int = 10,
            blockSeconds: Int = 0,
            maxAgeDays: Int = 90,
            history: Int = 5,
            commonPasswordsFile: String = "",
            scryptN: Int = 32768,
            scryptR: Int = 8,
            scryptP: Int = 1,
            policy: PasswordPolicy = .default
        ) {
            self.maxAttempts = maxAttempts
            self.maxChecksPerUID = maxChecksPerUID
            self.checkWaitSeconds = checkWaitSeconds
            self.blockSeconds = blockSeconds
            self.maxAgeDays = maxAgeDays
            self.history = history
            self.commonPasswordsFile = commonPasswordsFile
            self.scryptN = scryptN
            self.scryptR = scryptR
            self.scryptP = scryptP
            self.policy = policy
        }
    }
}
