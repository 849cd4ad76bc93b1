import NIOConcurrencyHelpers
import StepSignMetrics
import StepSignStorage

extension Engine {
    /// Keys, signatures, the events of who may sign, and the ledger as a transparency log: the
    /// part of the engine's state that makes and keeps the evidence (SPEC §4, §5.3–§5.5).
    ///
    /// Its store is the signing keys' rows and the ledger alone (``SigningKeyStore``,
    /// ``LedgerStore``); it is the only way a flow reaches them.
    final class Signing: Sendable {
        /// The signing keys' rows and the ledger.
        let store: any SigningKeyStore & LedgerStore & LedgerLookupStore & LogEpochStore & IdempotencyStore
        /// The signing keys, the log key, and which keys are trusted (SPEC §5.4).
        let keyring: Keyring
        /// Signs a request and records it in the ledger, through the one ledger writer.
        let signer: Signer
        /// Records changes of who may sign in the ledger (SPEC §5.4).
        let events: EventRecorder
        /// The transparency log's checkpoints (SPEC §5.5).
        let log: TransparencyLog
        /// Makes checkpoints when SPEC §5.3 says (entries, seconds, shutdown).
        let checkpointer: LedgerCheckpointer
        /// Why the log cannot be extended, once the store found its tree broken (SPEC §5.5).
        let logAlarm: LogAlarm
        /// Says once that the state directory's filesystem is full, and once that space is back.
        let noSpaceAlarm: NoSpaceAlarm
        /// Level-0 signatures, summarized once a minute (``Engine/flushSigningSummary(now:)``).
        let levelZeroSummary = SigningSummary()
        /// `waitForProof`s waiting for cosignatures, and the pushers they ask (SPEC §5.6).
        let witnessWaits = WitnessWaits()
        /// `stepsign_signatures_total`, each level and authenticator's counter made once.
        let signatureCounters = SignatureCounters()

        init(store: any SigningKeyStore & LedgerStore & LedgerLookupStore & LogEpochStore & IdempotencyStore, keyring: Keyring,
             signer: Signer, events: EventRecorder, log: TransparencyLog, checkpointer: LedgerCheckpointer, logAlarm: LogAlarm,
             noSpaceAlarm: NoSpaceAlarm) {
            self.store = store
            self.keyring = keyring
            self.signer = signer
            self.events = events
            self.log = log
            self.checkpointer = checkpointer
            self.logAlarm = logAlarm
            self.noSpaceAlarm = noSpaceAlarm
        }
    }
}
