import Foundation

/// How the SQLite store writes times: REAL Unix seconds.
extension Date {
    var storageSeconds: Double { timeIntervalSince1970 }

    init(storageSeconds: Double) {
        self.init(timeIntervalSince1970: storageSeconds)
    }
}
