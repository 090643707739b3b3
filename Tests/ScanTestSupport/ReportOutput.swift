import ScanCore

/// `scanadmin report --format json` as the tests read it.
public enum ReportOutput {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    /// The first shift's cameras.
    public static func cameras(_ stdout: String) throws -> [JSONValue] {
        guard case .array(let shifts)? = try JSONValue.parse(stdout)["shifts"],
            case .array(let cameras)? = shifts.first?["cameras"]
        else { throw Missing(description: "no cameras in \(stdout)") }
        return cameras
    }
}
