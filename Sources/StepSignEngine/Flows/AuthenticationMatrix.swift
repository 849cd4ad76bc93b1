import StepSignProtocol

/// The (authLevel, authenticatorType) pairs of SPEC §3.2 and what each one requires.
enum AuthenticationMatrix {
    /// What a pair asks of the user.
    enum Requirement: Equatable {
        /// (0, 0): nothing; only when `signing.allow_level_0` is on.
        case none
        /// (1, 0): the user's strongest enrolled authenticator (the password for now).
        case strongestEnrolled
        /// (4, 1): an IDV server biometric assertion.
        case idvBiometric
    }

    /// The requirement for a pair, or error 214 for a pair the matrix does not have.
    static func requirement(level: Int, type: Int) throws(StepSignError) -> Requirement {
        switch (level, type) {
        case (0, 0): return .none
        case (1, 0): return .strongestEnrolled
        case (4, 1): return .idvBiometric
        default:
            throw StepSignError(.unsupportedAuthCombination,
                                "authLevel \(level) with authenticatorType \(type) is not supported")
        }
    }
}
