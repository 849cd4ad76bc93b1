import NIOCore
import NIOEmbedded
@testable import StepSignServer
import Synchronization
import Testing

/// A connection's input as its task sees it when the task is cancelled (the daemon's task
/// group at shutdown): the wait for a frame ends, the frames read before are still taken, and
/// then the input has ended. One cancellation handler serves the connection's whole life
/// (``StreamConnection/executeThenClose(_:)``), none per frame awaited.
@Suite("Stream connection: a cancelled task", .timeLimit(.minutes(1)))
struct StreamConnectionTests {
    func connection() async throws -> (NIOAsyncTestingChannel, StreamConnection<ByteBuffer>) {
        let channel = NIOAsyncTestingChannel()
        let connection = try await channel.testingEventLoop.executeInContext {
            try StreamConnection<ByteBuffer>(wrappingChannelSynchronously: channel)
        }
        try await channel.connect(to: try SocketAddress(unixDomainSocketPath: "/stepsign-test")).get()
        return (channel, connection)
    }

    /// `task`'s value, or nil if it has none within `seconds` (a task the cancellation does not
    /// reach would otherwise hang the run).
    func value<T: Sendable>(of task: Task<T, any Error>, within seconds: Int = 10) async throws -> T? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
            let resumed = Mutex(false)
            let finish: @Sendable (Result<T?, any Error>) -> Void = { result in
                if resumed.withLock({ done in defer { done = true }; return !done }) { continuation.resume(with: result) }
            }
            Task {
                do { finish(.success(try await task.value)) } catch { finish(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                finish(.success(nil))
            }
        }
    }

    @Test("a task waiting for a frame when it is cancelled gets the end of the input (nil), and so does every later call")
    func waitingTaskGetsTheEnd() async throws {
        let (_, connection) = try await connection()
        let started = AsyncStream<Void>.makeStream()
        let task = Task {
            try await connection.executeThenClose { connection -> [ByteBuffer?] in
                started.continuation.yield()
                let first = try await connection.next()
                let second = try await connection.next()
                return [first, second]
            }
        }
        for await _ in started.stream { break }
        task.cancel()
        #expect(try await value(of: task) == [nil, nil])
    }

    @Test("frames read before the cancellation are still taken, in order, then the input has ended")
    func framesReadBeforeAreTaken() async throws {
        let (channel, connection) = try await connection()
        try await channel.writeInbound(ByteBuffer(string: "one"))
        try await channel.writeInbound(ByteBuffer(string: "two"))
        let cancelled = Task {
            try await connection.executeThenClose { connection -> [String?] in
                withUnsafeCurrentTask { $0?.cancel() }
                var taken: [String?] = []
                for _ in 0..<3 { taken.append(try await connection.next().map { String(buffer: $0) }) }
                return taken
            }
        }
        #expect(try await value(of: cancelled) == ["one", "two", nil])
    }

    @Test("a frame read while the task waits is handed to it")
    func frameToTheWaitingTask() async throws {
        let (channel, connection) = try await connection()
        let started = AsyncStream<Void>.makeStream()
        let task = Task {
            try await connection.executeThenClose { connection -> String? in
                started.continuation.yield()
                return try await connection.next().map { String(buffer: $0) }
            }
        }
        for await _ in started.stream { break }
        try await channel.writeInbound(ByteBuffer(string: "request"))
        #expect(try await value(of: task) == "request")
    }
}
