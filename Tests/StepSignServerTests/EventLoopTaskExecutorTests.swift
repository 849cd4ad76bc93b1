import Foundation
import StepSignProtocol
import NIOCore
import NIOPosix
import StepSignNIO
import Testing

@Suite("Event loop task executor")
struct EventLoopTaskExecutorTests {
    @Test("a task that prefers a loop's executor runs on that loop, before and after it suspends")
    func runsOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        let onLoop = await Task(executorPreference: executor) { () async -> [Bool] in
            var seen = [loop.inEventLoop]
            await Task.yield()
            seen.append(loop.inEventLoop)
            // A continuation resumed from another thread comes back to the loop too.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread { continuation.resume() }
            }
            seen.append(loop.inEventLoop)
            return seen
        }.value
        #expect(onLoop == [true, true, true])
        try await group.shutdownGracefully()
    }
}
