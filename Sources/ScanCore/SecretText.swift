/// The secret in a password or token file as the programs read it: its first line, without the
/// line end or surrounding spaces; nil when that is empty. (Reading the file is the caller's.)
public enum SecretText {
    public static func firstLine(_ bytes: some Sequence<UInt8>) -> String? {
        let text = String(decoding: Array(bytes), as: UTF8.self)
        let line = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? ""
        let trimmed = line.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}
