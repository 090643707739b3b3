internal import CAravis

/// A failing Aravis call: the function, the camera or feature it was given, and Aravis's message.
public struct GenICamError: Error, Sendable, Equatable, CustomStringConvertible {
    public var function: String
    public var input: String
    public var message: String

    public init(function: String, input: String, message: String) {
        self.function = function
        self.input = input
        self.message = message
    }

    public var description: String { "\(function) (\(input)): \(message)" }

    /// Runs one Aravis call that reports through a `GError**`, and turns a set error into a
    /// `GenICamError` naming the function and the input (the GError is freed).
    static func check<T>(
        _ function: String, _ input: @autoclosure () -> String,
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T
    ) throws(GenICamError) -> T {
        var error: UnsafeMutablePointer<GError>?
        let result = body(&error)
        if let error {
            let message = String(cString: scantrack_arv_error_message(error))
            scantrack_arv_free_error(error)
            throw GenICamError(function: function, input: input(), message: message)
        }
        return result
    }
}
