import StepSignStorage
import struct Foundation.Date

extension UserRecord {
    /// Whether the password has expired: an admin expired it, or it is older than
    /// `password.max_age_days` (0 = passwords never expire by age).
    func isPasswordExpired(maxAgeDays: Int, at now: Date) -> Bool {
        if passwordExpired { return true }
        guard maxAgeDays > 0 else { return false }
        return now.timeIntervalSince(passwordChangedAt) > Double(maxAgeDays) * 86_400
    }

    /// Whether the password must be replaced before it may be used for anything but its own
    /// change: expired by age or by an admin, or marked `mustChangePassword`.
    func mustReplacePassword(maxAgeDays: Int, at now: Date) -> Bool {
        mustChangePassword || isPasswordExpired(maxAgeDays: maxAgeDays, at: now)
    }
}
