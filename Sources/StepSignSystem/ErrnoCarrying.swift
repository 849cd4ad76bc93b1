/// An error with a failed system call under it: the call's errno and the file it was about,
/// carried up through the error types of the store, the keys and the daemon's start, so that
/// the start can tell a fault that may pass (``TransientErrno``) from a setting to fix.
package protocol ErrnoCarrying: Error {
    /// The failed call's errno; nil when no system call failed (the error is about contents).
    var carriedErrno: Int32? { get }
    /// The file the failed call was about, when the error knows it.
    var carriedPath: String? { get }
}

extension SystemError: ErrnoCarrying {
    package var carriedErrno: Int32? { errno }
    package var carriedPath: String? { path }
}
