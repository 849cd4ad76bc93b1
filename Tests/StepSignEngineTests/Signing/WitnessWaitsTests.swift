@testable import StepSignEngine
import Testing

/// The waits of `waitForProof` and the pushers' long poll (SPEC §5.6): a request reaches a
/// pusher at once or the next one to ask, requests made together are one, a cosigned size
/// wakes exactly the waiters it covers (and is kept for one that is not waiting yet), a peer's
/// waiters are bounded, and shutdown ends every wait.
@Suite struct WitnessWaitsTests {
    static let far = ContinuousClock.now + .seconds(60)

    @Test("a request made before any pusher asks answers the next one at once, and only that one")
    func requestBeforePoll() async {
        let waits = WitnessWaits()
        waits.request()
        waits.request()
        #expect(await waits.nextRequest(within: 0) == true)
        #expect(await waits.nextRequest(within: 0) == false, "two requests made together are one round")
    }

    @Test("a waiting pusher is woken by a request")
    func pusherWoken() async {
        let waits = WitnessWaits()
        async let asked = waits.nextRequest(within: 60)
        // The pusher may not be waiting yet: either way the request reaches it.
        try? await Task.sleep(for: .milliseconds(50))
        waits.request()
        #expect(await asked == true)
    }

    @Test("a pusher that nobody asks returns false after its wait")
    func pusherTimesOut() async {
        let waits = WitnessWaits()
        let started = ContinuousClock.now
        #expect(await waits.nextRequest(within: 1) == false)
        #expect(ContinuousClock.now - started >= .seconds(1))
    }

    @Test("a cosigned size wakes the waiters whose entry it covers, and is kept for one not waiting yet")
    func cosignedWakes() async throws {
        let waits = WitnessWaits()
        let covered = try #require(waits.register(index: 4, uid: 1000))
        let above = try #require(waits.register(index: 9, uid: 1000))
        waits.cosigned(size: 5)
        // Not waiting when it was stored: taken at once.
        #expect(await waits.next(covered, until: Self.far) == 5)
        // Not covered: waits until its deadline.
        #expect(await waits.next(above, until: ContinuousClock.now + .milliseconds(200)) == nil)
        async let woken = waits.next(above, until: Self.far)
        try await Task.sleep(for: .milliseconds(50))
        waits.cosigned(size: 12)
        #expect(await woken == 12)
        waits.unregister(covered)
        waits.unregister(above)
        #expect(waits.waiting == 0)
    }

    @Test("a wait answered before its deadline leaves the ticket's next wait alone (its timer is cancelled, not fired)")
    func answeredWaitLeavesTheNext() async throws {
        let waits = WitnessWaits()
        // Each wait is answered at once (by its own or another ticket's cosigned size: each
        // covers every ticket), 16 tickets at a time so that timers queue behind the waits: a
        // timer of an earlier wait that fired when cancelled would end a later wait of its
        // ticket with nil long before its deadline (the 14 that 16 callers of waitForProof saw).
        let failures = await withTaskGroup(of: [String].self) { group in
            for uid in UInt32(0)..<16 {
                group.addTask {
                    guard let ticket = waits.register(index: 0, uid: uid) else { return ["no ticket"] }
                    for size in Int64(1)...500 {
                        async let next = waits.next(ticket, until: Self.far)
                        await Task.yield()
                        waits.cosigned(size: size)
                        let got = await next
                        if got == nil { return ["wait \(size) of uid \(uid) ended with nil"] }
                    }
                    return []
                }
            }
            var all: [String] = []
            for await failed in group { all += failed }
            return all
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("a peer uid has at most maxWaitersPerUID waiting; another uid is not held up by it")
    func boundedPerPeer() throws {
        let waits = WitnessWaits()
        var tickets: [WitnessWaits.Ticket] = []
        for n in 0..<WitnessWaits.maxWaitersPerUID { tickets.append(try #require(waits.register(index: Int64(n), uid: 1000))) }
        #expect(waits.register(index: 0, uid: 1000) == nil)
        #expect(waits.register(index: 0, uid: 1001) != nil)
        waits.unregister(tickets[0])
        #expect(waits.register(index: 0, uid: 1000) != nil)
    }

    @Test("shutdown ends every wait at once, and none begins after it")
    func shutdownEndsWaits() async throws {
        let waits = WitnessWaits()
        let ticket = try #require(waits.register(index: 0, uid: 1000))
        async let waiter = waits.next(ticket, until: Self.far)
        async let pusher = waits.nextRequest(within: 60)
        try await Task.sleep(for: .milliseconds(50))
        waits.endAll()
        #expect(await waiter == nil)
        #expect(await pusher == false)
        #expect(waits.register(index: 0, uid: 1000) == nil)
        #expect(await waits.nextRequest(within: 60) == false)
    }
}
