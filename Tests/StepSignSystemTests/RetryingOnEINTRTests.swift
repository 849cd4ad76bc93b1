#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StepSignSystem
import Testing

/// The one EINTR rule (issue 23): a call interrupted by a signal is made again; any other
/// failure, and any success, is returned as the call gave it.
@Suite struct RetryingOnEINTRTests {
    @Test func anInterruptedCallIsMadeAgainUntilItSucceeds() {
        var calls = 0
        let result = retryingOnEINTR { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42 && calls == 3)
    }

    @Test func anotherFailureIsReturnedAtOnceWithItsErrno() {
        var calls = 0
        let result = retryingOnEINTR { () -> Int32 in
            calls += 1
            errno = EAGAIN
            return -1
        }
        #expect(result == -1 && calls == 1 && errno == EAGAIN)
    }

    @Test func aRealReadInterruptedByASignalIsResumed() throws {
        // A pipe read that blocks until a byte arrives after a SIGUSR1 interrupted it.
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0  // no SA_RESTART: the read fails with EINTR
        sigemptyset(&action.sa_mask)
        var previous = sigaction()
        try #require(sigaction(SIGUSR1, &action, &previous) == 0)
        defer { sigaction(SIGUSR1, &previous, nil) }
        let reader = pthread_self()
        let writer = fds[1]
        let thread = Thread {
            usleep(50_000)
            pthread_kill(reader, SIGUSR1)
            usleep(50_000)
            var byte: UInt8 = 7
            _ = write(writer, &byte, 1)
        }
        thread.start()
        var byte: UInt8 = 0
        let count = retryingOnEINTR { read(fds[0], &byte, 1) }
        #expect(count == 1 && byte == 7)
    }
}
