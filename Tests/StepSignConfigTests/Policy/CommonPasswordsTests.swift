import Foundation
import Testing
@testable import StepSignCommonPasswords
@testable import StepSignConfig

@Suite("Common passwords")
struct CommonPasswordsTests {
    @Test func theBuiltInListHasAtLeastTenThousandEntries() {
        #expect(CommonPasswords.builtIn.count >= 10_000)
        #expect(CommonPasswords.builtIn.count == CommonPasswords.builtInListCount)
    }

    @Test func theBuiltInListHoldsTheUsualSuspects() {
        #expect(CommonPasswords.builtIn.contains("password"))
        #expect(CommonPasswords.builtIn.contains("123456"))
        #expect(CommonPasswords.builtIn.contains("qwerty"))
        #expect(!CommonPasswords.builtIn.contains("Tr0ub4dor&Zq-unlikely"))
    }

    @Test func lookupsIgnoreCase() {
        #expect(CommonPasswords.builtIn.contains("PassWord"))
        #expect(CommonPasswords.builtIn.contains("QWERTY"))
    }

    @Test func aListFileHasOnePasswordPerLineAndNoComments() {
        let list = CommonPasswords(parsing: "Alpha\r\n\n#hashtag\nbeta gamma\n")
        #expect(list.count == 3)
        #expect(list.contains("ALPHA"))
        #expect(list.contains("#hashtag"))
        #expect(list.contains("beta gamma"))
    }

    @Test func aCustomFileIsRead() throws {
        let path = NSTemporaryDirectory() + "stepsign-common-\(UUID().uuidString).txt"
        try "Company2024\nwelcome1\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let list = try CommonPasswords(contentsOf: path)
        #expect(list.count == 2)
        #expect(list.contains("company2024"))
        #expect(!list.contains("password"))
    }

    @Test func aMissingFileNamesThePathAndKey() {
        #expect {
            try CommonPasswords(contentsOf: "/nonexistent/stepsign/common.txt")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "/nonexistent/stepsign/common.txt"
                && error.key == "password.common_passwords_file" && error.line == nil
        }
    }
}
