import Foundation

#if FUZZING
/// libFuzzer's entry point (built with `-sanitize=fuzzer -DFUZZING`, see scripts/fuzz).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzHarness.run(bytes)
    return 0
}

/// libFuzzer's driver, run from our own entry point: SwiftPM links an executable target with
/// `main` defined as `<module>_main`, so libFuzzer's `main` cannot be the one that runs.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

@_cdecl("stepsign_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzTestOneInput)
}
#else
/// Without libFuzzer: replays files (or every file of directories) through the same harness,
/// for the regression test. Exits 0 when every input ran; a failing input traps.
@main
struct ReplayMain {
    static func main() {
        var files: [String] = []
        for argument in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("stepsign-fuzz: no such file \(argument)\n".utf8))
                exit(2)
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []
                files += names.sorted().filter { !$0.hasPrefix(".") }.map { "\(argument)/\($0)" }
            } else {
                files.append(argument)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            FuzzHarness.run(Array(data))
        }
        print("replayed \(files.count) inputs")
    }
}
#endif
