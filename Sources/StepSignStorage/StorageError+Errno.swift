import StepSignSystem

extension StorageError: ErrnoCarrying {
    /// The errno of the state directory's or the database file's failed call.
    package var carriedErrno: Int32? {
        switch self {
        case let .stateDirectory(_, code), let .stateFile(_, code): code
        default: nil
        }
    }

    package var carriedPath: String? {
        switch self {
        case let .stateDirectory(path, _), let .stateFile(path, _): path
        default: nil
        }
    }
}
