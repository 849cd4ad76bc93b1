import StepSignFormat

/// The local process that asked for a signature, from `SO_PEERCRED` and `/proc/PID/comm`: the
/// ledger row's peer columns hold exactly the signature's `peer` claim.
public typealias LedgerPeer = SignaturePeer
