import Foundation
import StepSignTestSupport

extension TemporaryDirectory {
    /// Writes an executable (0700) script `name` with `body` and returns its path.
    func script(_ name: String, _ body: String) throws -> String {
        let file = path + "/" + name
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: file)
        return file
    }

    func read(_ name: String) throws -> String {
        try String(decoding: Data(contentsOf: URL(fileURLWithPath: path + "/" + name)), as: UTF8.self)
    }

    func mode(_ relative: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + relative)
        return (attributes[.posixPermissions] as! NSNumber).intValue & 0o7777
    }
}
