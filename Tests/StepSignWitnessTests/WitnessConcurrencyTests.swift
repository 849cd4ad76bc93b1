import Foundation
import Synchronization
import Logging
import StepSignCrypto
import StepSignFormat
import StepSignTestSupport
@testable import StepSignWitness
import Testing

/// The witness under concurrent submissions (a property test): 64 submitters at once, half
/// with the honest log and half with a rewrite of it signed by the same (stolen) key, each
/// racing to random sizes and learning the witness's size from its 409s. Whatever the
/// interleaving, every checkpoint the witness cosigned is a prefix of the tree it holds at the
/// end (never two histories, never a step back), and that tree is the largest it cosigned.
@Suite struct WitnessConcurrencyTests {
    struct Cosigned: Sendable { var size: Int64; var root: [UInt8] }

    @Test(arguments: [1, 2, 3])
    func sixtyFourSubmittersNeverGetCosignaturesOfTwoHistories(round: Int) throws {
        let directory = try TemporaryDirectory("witness-race")
        defer { directory.remove() }
        let honest = try TestLog(size: 300)
        let rewritten = honest.forked(at: 40, tag: "rewritten-\(round)")
        let witness = try Witness(
            directory: try WitnessStateDirectory(path: directory.appending("state"), name: "witness.test/race"),
            logKeys: [honest.verifierKey], now: { 1 }, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let cosigned = Mutex<[Cosigned]>([])
        let statuses = Mutex<[Int: Int]>([:])
        let group = DispatchGroup()
        for submitter in 0..<64 {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                let log = submitter % 2 == 0 ? honest : rewritten
                var generator = SystemRandomNumberGenerator()
                var old: Int64 = 0
                for _ in 0..<25 {
                    let new = max(old, Int64.random(in: 1...300, using: &generator))
                    guard let request = try? log.request(old: old, new: new) else { continue }
                    let result = witness.addCheckpoint(body: Array(request.body.utf8))
                    switch result {
                    case .success:
                        cosigned.withLock { $0.append(Cosigned(size: new, root: log.root(new))) }
                        old = new
                    case let .failure(refusal):
                        statuses.withLock { $0[refusal.status, default: 0] += 1 }
                        if case let .conflict(size) = refusal { old = size }
                    }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let all = cosigned.withLock { $0 }
        let final = try #require(witness.latest(origin: honest.origin))
        let winner = final.rootHash == honest.root(final.size) ? honest : rewritten
        #expect(all.count > 1)
        #expect(all.map(\.size).max() == final.size)
        for checkpoint in all {
            #expect(checkpoint.root == winner.root(checkpoint.size),
                    "a cosigned checkpoint of size \(checkpoint.size) is not a prefix of the witness's tree")
        }
        // The other history got nowhere past the fork, and the races did happen.
        let losers = all.filter { $0.size > 40 && $0.root != winner.root($0.size) }
        #expect(losers.isEmpty)
        #expect(statuses.withLock { $0[409, default: 0] } > 0)
    }
}
