import ScanCore
import ScanTestTiming
import Testing
import ScanAgentConfig

@Suite("RTSP camera addresses", .timed)
struct RTSPAddressTests {
    @Test("rtsp and rtsps URLs are taken, with port, path, query and credentials; the password is never shown")
    func takes() throws {
        let plain = try RTSPAddress("rtsp://10.0.4.21:554/Streaming/Channels/101?transportmode=unicast")
        #expect(plain.host == "10.0.4.21" && plain.user == nil && plain.scheme == "rtsp")
        #expect(plain.redacted == plain.url)
        let secret = try RTSPAddress("RTSPS://admin:pa%40ss:w0rd@[fe80::1]:322/live")
        #expect(secret.host == "[fe80::1]" && secret.user == "admin" && secret.scheme == "rtsps")
        #expect(secret.redacted == "rtsps://admin:***@[fe80::1]:322/live")
        #expect(!secret.description.contains("w0rd"))
        let named = try RTSPAddress("rtsp://viewer@cam-7.plant/stream1")
        #expect(named.redacted == "rtsp://viewer@cam-7.plant/stream1")
        // A password from a file goes in percent-encoded: reserved characters cannot change the URL.
        #expect(
            named.withCredentials(user: "viewer", password: "a@b:c/d e%")
                == "rtsp://viewer:a%40b%3Ac%2Fd%20e%25@cam-7.plant/stream1")
    }

    @Test("other schemes, a missing host, a bad port and control characters are refused with the reason")
    func refuses() {
        let cases: [(String, String)] = [
            ("file:///etc/passwd", "only rtsp:// and rtsps://"),
            ("http://cam/stream", "only rtsp:// and rtsps://"),
            ("cam-7/stream", "not a URL"),
            ("rtsp:///stream", "no host"),
            ("rtsp://user:pw@/stream", "no host"),
            ("rtsp://cam:0/x", "port 0"),
            ("rtsp://cam:99999/x", "port 99999"),
            ("rtsp://cam:5a4/x", "port 5a4"),
            ("rtsp://cam/x\u{1b}[2J", "control"),
            ("rtsp://cam/a b", "whitespace"),
            ("rtsp://[fe80::1/x", "unclosed ["),
            ("rtsp://cam/" + String(repeating: "a", count: 3000), "longer than 2048"),
        ]
        for (url, reason) in cases {
            let error = #expect(throws: RTSPAddress.Invalid.self) { try RTSPAddress(url) }
            #expect(error?.reason.contains(reason) == true, "\(url): \(String(describing: error))")
        }
    }

    @Test("the agent config takes an rtsp source and refuses a bad one by its path")
    func config() throws {
        let config = try AgentConfig.parse(
            Array(
                #"{"camera": {"id": "c"}, "source": {"type": "rtsp", "url": "rtsp://op@cam/s", "transport": "udp", "passwordFile": "/run/secrets/cam"}}"#
                    .utf8), file: "a.json")
        #expect(config.source.kind == .rtsp && config.source.url?.host == "cam")
        #expect(config.source.transport == "udp" && config.source.passwordFile == "/run/secrets/cam")
        let texts = [
            (#"{"camera": {"id": "c"}, "source": {"type": "rtsp"}}"#, "source.url"),
            (#"{"camera": {"id": "c"}, "source": {"type": "rtsp", "url": "file:///etc/shadow"}}"#, "source.url"),
            (
                #"{"camera": {"id": "c"}, "source": {"type": "rtsp", "url": "rtsp://cam/s", "transport": "quic"}}"#,
                "source.transport"
            ),
            (
                #"{"camera": {"id": "c"}, "source": {"type": "rtsp", "url": "rtsp://cam/s", "passwordFile": "/p"}}"#,
                "source.passwordFile"
            ),
        ]
        for (text, path) in texts {
            let errors = #expect(throws: ConfigErrors.self) { try AgentConfig.parse(Array(text.utf8), file: "b.json") }
            #expect(errors?.issues.map(\.path) == [path], "\(text): \(errors?.description ?? "")")
        }
    }

    @Test("a secret file's first line is the secret, without line end or surrounding blanks")
    func secretText() {
        #expect(SecretText.firstLine(Array("s3cret\n".utf8)) == "s3cret")
        #expect(SecretText.firstLine(Array("  two words \r\nnext".utf8)) == "two words")
        #expect(SecretText.firstLine(Array("\nlater".utf8)) == nil)
        #expect(SecretText.firstLine([]) == nil)
    }
}
