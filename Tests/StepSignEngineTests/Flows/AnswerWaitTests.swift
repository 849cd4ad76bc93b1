import Foundation
import NIOConcurrencyHelpers
import StepSignProtocol
@testable import StepSignEngine
import StepSignConfig
import StepSignEngineTestSupport
import StepSignStorage
import Testing

/// SPEC §5.1, issue 39: an answer that finds every attempt left held by checks still in flight
/// (here, on another connection or another daemon) waits for them, up to
/// `password.check_wait_seconds`, instead of being told 153; then error 14. The wait runs on
/// an injected clock: each pause moves it and may settle the check waited for, so nothing is
/// slept on.
@Suite("Answers wait for checks in flight")
final class AnswerWaitTests: Sendable {
    let directory: String
    let engine: Engine
    let store: any CredentialStore & CounterStore

    init() async throws {
        (engine, directory) = try await makeTestEngine("engine-answer-wait") {
            $0.password.maxAttempts = 1
            $0.password.checkWaitSeconds = 2
        }
        try await addTestUser(engine)
        store = engine.credentials.store
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let peer = Peer(uid: 1000, gid: 1000, pid: 42, comm: "tester", groups: [])
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    /// A clock that moves only when the waiting answer pauses; `onPause(n)` runs at the n-th
    /// pause (from 1), before the clock moves on.
    final class PausingClock: Sendable {
        let start = ContinuousClock.now
        private let state = NIOLockedValueBox<(elapsed: Duration, pauses: [Duration])>((.zero, []))
        let onPause: @Sendable (Int) async -> Void

        init(onPause: @escaping @Sendable (Int) async -> Void = { _ in }) {
            self.onPause = onPause
        }

        var pauses: [Duration] { state.withLockedValue { $0.pauses } }
        var elapsed: Duration { state.withLockedValue { $0.elapsed } }

        var clock: WaitClock {
            WaitClock(now: { [self] in start + elapsed }, sleep: { [self] duration in
                let count = state.withLockedValue { state in
                    state.pauses.append(duration)
                    return state.pauses.count
                }
                await onPause(count)
                state.withLockedValue { $0.elapsed += duration }
            })
        }
    }

    func authenticator(_ clock: PausingClock, checks: CheckScheduler = CheckScheduler()) throws -> PasswordAuthenticator {
        try PasswordAuthenticator(store: store, parameters: engine.config.password.scryptParameters, checks: checks,
                                  logger: engine.logger, clock: clock.clock)
    }

    /// Another answer of alice's, being checked elsewhere: it holds her only attempt.
    func holdTheOnlyAttempt() async throws -> ReservationID {
        let id = try ReservationID.random()
        #expect(try await store.reserveAttempt(id, name: "alice", maxAttempts: 1, blockSeconds: 0, now: Self.now)
                == .granted(attemptsLeft: 0))
        return id
    }

    @Test("the check in flight proves right: the waiting answer is checked then, and accepted")
    func waitsForARightAnswer() async throws {
        let held = try await holdTheOnlyAttempt()
        let clock = PausingClock { [store] pause in
            if pause == 3 { try? await store.giveBackAttempt(held, name: "alice", now: Self.now) }
        }
        let checks = CheckScheduler()
        let verification = try await authenticator(clock, checks: checks)
            .verify(user: "alice", password: testUserPassword, peer: Self.peer, config: engine.config, now: Self.now)
        guard case .accepted = verification else { Issue.record("\(verification)"); return }
        #expect(clock.pauses == [.milliseconds(10), .milliseconds(20), .milliseconds(40)], "pauses double from 10 ms")
        #expect(checks.startedCount == 1, "checked once, after the wait")
        #expect(try await store.attemptCounter(name: "alice", now: Self.now) == AttemptCounter())
    }

    @Test("the check in flight proves wrong and uses the last attempt: the waiting answer is not checked, and gets 153")
    func waitsForAWrongAnswer() async throws {
        let held = try await holdTheOnlyAttempt()
        let clock = PausingClock { [store] pause in
            if pause == 2 { _ = try? await store.spendAttempt(held, name: "alice", maxAttempts: 1, blockSeconds: 0, now: Self.now) }
        }
        let checks = CheckScheduler()
        let verification = try await authenticator(clock, checks: checks)
            .verify(user: "alice", password: testUserPassword, peer: Self.peer, config: engine.config, now: Self.now)
        #expect(verification == .exhausted)
        #expect(checks.startedCount == 0, "no scrypt for an answer that finds no attempt left")
        #expect(try await store.attemptCounter(name: "alice", now: Self.now).isBlocked(at: Self.now))
    }

    @Test("a check that does not settle within check_wait_seconds: the waiting answer gets error 14 and takes nothing")
    func waitsAtMostCheckWaitSeconds() async throws {
        _ = try await holdTheOnlyAttempt()
        let clock = PausingClock()
        let checks = CheckScheduler()
        await #expect(throws: StepSignError.self) {
            do {
                _ = try await self.authenticator(clock, checks: checks)
                    .verify(user: "alice", password: testUserPassword, peer: Self.peer, config: self.engine.config, now: Self.now)
            } catch let error as StepSignError {
                #expect(error.code == .busy)
                throw error
            }
        }
        #expect(clock.elapsed == .seconds(2), "it waited check_wait_seconds, no more")
        #expect(clock.pauses.max() == PasswordAuthenticator.longestWaitPause, "pauses grow to 200 ms, no more")
        #expect(checks.startedCount == 0)
        #expect(checks.admittedCount(uid: Self.peer.uid) == 0, "its place in the uid's queue is free again")
        // The held attempt is still the only one taken; nothing is blocked.
        #expect(try await store.attemptCounter(name: "alice", now: Self.now) == AttemptCounter(failedAttempts: 1, inFlight: 1))
    }

    @Test("check_wait_seconds = 0: error 14 at once, no pause")
    func noWait() async throws {
        _ = try await holdTheOnlyAttempt()
        var config = engine.config
        config.password.checkWaitSeconds = 0
        let clock = PausingClock()
        await #expect(throws: StepSignError(.busy, "every attempt left is held by answers still being checked; "
                                             + "try again later (password.check_wait_seconds)")) {
            _ = try await self.authenticator(clock).verify(user: "alice", password: testUserPassword, peer: Self.peer,
                                                           config: config, now: Self.now)
        }
        #expect(clock.pauses.isEmpty)
    }

    /// Device-key signatures and IDV assertions take their attempt from the same counter: the
    /// same wait.
    @Test("an answer that is not a password waits the same way, and a name that is not a user too",
          arguments: ["alice", "nobody"])
    func otherAnswersWait(name: String) async throws {
        let held = try ReservationID.random()
        #expect(try await store.reserveAttempt(held, name: name, maxAttempts: 1, blockSeconds: 0, now: Self.now)
                == .granted(attemptsLeft: 0))
        let clock = PausingClock { [store] pause in
            if pause == 2 { try? await store.giveBackAttempt(held, name: name, now: Self.now) }
        }
        let context = RequestContext(settings: engine.settings, now: Self.now, peer: Self.peer)
        let checked = NIOLockedValueBox(0)
        let outcome = try await authenticator(clock).checkWithAttempt(user: name, context: context, logger: engine.logger) {
            checked.withLockedValue { $0 += 1 }
            return nil
        }
        #expect(outcome == .accepted)
        #expect(checked.withLockedValue { $0 } == 1)
        #expect(clock.pauses.count == 2)
    }
}
