#if canImport(Glibc)
import Glibc
#endif

/// The names in a directory.
enum DirectoryListing {
    /// The names in `directory`, without `.` and `..`; nil (with `errno` set) if it cannot be
    /// opened.
    static func names(in directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
