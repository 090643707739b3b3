/// A zbar call that failed, naming the function and the input it was given.
public struct ZBarError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case scannerUnavailable
        case configRejected
        case scanFailed
        case badImage
    }

    public var code: Code
    public var function: String
    public var input: String

    public var description: String { "\(function) failed for \(input) (\(code.rawValue))" }
}
