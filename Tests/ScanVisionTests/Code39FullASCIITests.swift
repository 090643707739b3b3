import ScanTestTiming
import ScanVision
import Testing

@Suite("Code 39 full ASCII", .timed)
struct Code39FullASCIITests {
    static func decode(_ text: String) -> String? {
        Code39FullASCII.decode(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("shift pairs become the characters they stand for; a value without one has no other reading")
    func pairs() {
        #expect(Self.decode("A+A-1234") == "Aa-1234")
        #expect(Self.decode("+H+E+L+L+O") == "hello")
        #expect(Self.decode("/A/O/Z") == "!/:")
        #expect(Self.decode("%A%F%K%P%U%V%W") == "\u{1B};[{\u{00}@`")
        #expect(Self.decode("$M$J") == "\r\n")
        #expect(Self.decode("ABC-123") == nil)
    }

    @Test("a shift without a partner is no full ASCII reading")
    func invalid() {
        #expect(Self.decode("AB+") == nil)
        #expect(Self.decode("/P") == nil)
        #expect(Self.decode("+1") == nil)
        #expect(Self.decode("$ ") == nil)
    }
}
