#if canImport(Glibc)
import Glibc
#endif

/// The names in a directory.
enum DirectoryListing {
    /// The names in `directory`, without `.` and `..`; nil (with `errno` set) if it cannot be
    /// opened or read to its end (`readdir` returns NULL for both the end and an error, told
    /// apart by `errno`).
    static func names(in directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { return nil }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
    }
}
