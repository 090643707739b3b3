#if canImport(Glibc)
    import Glibc
#endif

/// C strings that outlive a closure: cnats configuration structs hold `const char*` fields
/// which must stay valid for the duration of the call that reads them.
final class CStrings {
    private var owned: [UnsafeMutablePointer<CChar>] = []

    func make(_ string: String) -> UnsafePointer<CChar> {
        // strdup fails only when memory is exhausted, which no caller can recover from.
        guard let copy = strdup(string) else { preconditionFailure("out of memory copying a C string") }
        owned.append(copy)
        return UnsafePointer(copy)
    }

    func makeOptional(_ string: String?) -> UnsafePointer<CChar>? {
        string.map { make($0) }
    }

    /// An array of C strings, itself owned by this object.
    func makeArray(_ strings: [String]) -> UnsafeMutablePointer<UnsafePointer<CChar>?> {
        let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(strings.count, 1))
        for (index, string) in strings.enumerated() { array[index] = make(string) }
        arrays.append(array)
        return array
    }

    private var arrays: [UnsafeMutablePointer<UnsafePointer<CChar>?>] = []

    deinit {
        owned.forEach { free($0) }
        arrays.forEach { $0.deallocate() }
    }
}
