import Foundation
import NIOConcurrencyHelpers

/// Level-0 signatures counted by peer, for one `info` line per minute instead of one per
/// signature (issue 15: a level-0 signer may sign thousands a second; signatures behind a
/// step-up keep a line each). The ledger stays the durable record of every signature.
///
/// A window opens with the first level-0 signature after the last summary and is summarized
/// by the first ``record(uid:comm:now:)`` or ``flush(now:)`` at least ``windowSeconds``
/// later (the daemon calls `flush` every few seconds), or by ``flush(now:)`` with `force`
/// at shutdown. At most ``maxPeers`` peers (uid and comm) are counted by name in a window;
/// signatures of any further peer are counted together, so a peer that keeps renaming itself
/// cannot grow the summary or the memory it takes.
final class SigningSummary: Sendable {
    static let windowSeconds: TimeInterval = 60
    static let maxPeers = 32

    /// One window's counts.
    struct Window: Equatable, Sendable {
        struct Peer: Hashable, Sendable {
            let uid: UInt32
            let comm: String
        }

        let start: Date
        let end: Date
        /// Signatures per named peer, most first (then by uid and comm).
        let byPeer: [(peer: Peer, count: Int)]
        /// Signatures of peers past ``SigningSummary/maxPeers``.
        let otherPeers: Int

        var total: Int { byPeer.reduce(otherPeers) { $0 + $1.count } }

        static func == (a: Window, b: Window) -> Bool {
            a.start == b.start && a.end == b.end && a.otherPeers == b.otherPeers
                && a.byPeer.map(\.peer) == b.byPeer.map(\.peer) && a.byPeer.map(\.count) == b.byPeer.map(\.count)
        }
    }

    private struct State {
        var start: Date?
        var counts: [Window.Peer: Int] = [:]
        var otherPeers = 0
    }

    private let state = NIOLockedValueBox(State())

    /// Counts `count` level-0 signatures (one, or a batch's) by `uid`/`comm` at `now`; returns
    /// the window that ended before them, if one did (they then open the next).
    func record(uid: UInt32, comm: String, now: Date, count: Int = 1) -> Window? {
        state.withLockedValue { state in
            var ended: Window?
            if let start = state.start, now.timeIntervalSince(start) >= Self.windowSeconds {
                ended = Self.close(&state, at: now)
            }
            if state.start == nil { state.start = now }
            let peer = Window.Peer(uid: uid, comm: comm)
            if let counted = state.counts[peer] {
                state.counts[peer] = counted + count
            } else if state.counts.count < Self.maxPeers {
                state.counts[peer] = count
            } else {
                state.otherPeers += count
            }
            return ended
        }
    }

    /// The open window, if it has lasted ``windowSeconds`` by `now` (or at all, with `force`).
    func flush(now: Date, force: Bool = false) -> Window? {
        state.withLockedValue { state in
            guard let start = state.start, force || now.timeIntervalSince(start) >= Self.windowSeconds else { return nil }
            return Self.close(&state, at: now)
        }
    }

    private static func close(_ state: inout State, at end: Date) -> Window? {
        defer { state = State() }
        guard let start = state.start else { return nil }
        let byPeer = state.counts.map { (peer: $0.key, count: $0.value) }.sorted {
            ($1.count, $0.peer.uid, $0.peer.comm) < ($0.count, $1.peer.uid, $1.peer.comm)
        }
        return Window(start: start, end: end, byPeer: byPeer, otherPeers: state.otherPeers)
    }
}
