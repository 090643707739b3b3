// libFuzzer's entry point over ScanFuzz's fuzz targets (FuzzTarget): scripts/fuzz/run.sh compiles
// it with the pure modules' sources and `-sanitize=fuzzer,address`, and runs it once per target with
// SCANTRACK_FUZZ_TARGET naming the target and its corpus folder under scripts/fuzz/corpus/.
import Foundation

let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["SCANTRACK_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(
            Data("SCANTRACK_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue))\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzTarget.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
