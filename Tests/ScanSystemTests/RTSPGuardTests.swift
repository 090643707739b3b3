import Foundation
import ScanAgentConfig
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanRTSP

/// The RTSP guard (docs/security.md, "RTSP cameras"): a peer posing as the camera gets neither
/// the password nor the agent elsewhere, and rtsps is verified. Against a hostile peer
/// (scripts/rtsp_rogue.py) and GStreamer's RTSP server with Digest, Basic and TLS.
@Suite("RTSP guard", .timed)
struct RTSPGuardTests {
    typealias C = CameraHarness

    /// The rogue peer in `mode`, its port and its trap's port; what reached them is in `log`.
    static func rogue(_ mode: String, log: String, dir: String) throws -> (Process, Int, Int) {
        let out = dir + "/rogue-\(mode).out"
        let process = try ProcessRunner.start(
            TestEnvironment.repoRoot + "/scripts/rtsp_rogue.py", [mode, log],
            environment: ProcessInfo.processInfo.environment, log: dir + "/rogue-\(mode).err", stdoutFile: out)
        var ports: [Int] = []
        let up = Polling.until(seconds: 120) {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rtsp rogue: ") }) else {
                return false
            }
            ports = line.dropFirst("rtsp rogue: ".count).split(separator: " ").compactMap { Int($0) }
            return ports.count == 2
        }
        guard up else {
            process.terminate()
            throw TestFailure("the rogue RTSP peer did not start")
        }
        return (process, ports[0], ports[1])
    }

    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    @Test(
        "a peer at the camera's address that redirects elsewhere is refused: nothing reaches the other host, the error names the redirect"
    )
    func redirect() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/rogue.log"
        let (rogue, port, trap) = try Self.rogue("redirect", log: log, dir: dir)
        defer { C.stop(rogue) }
        let address = try RTSPAddress("rtsp://viewer:s3cret-pw@127.0.0.1:\(port)/stream")
        let refused = #expect(throws: RTSPError.self) {
            _ = try RTSPStream(address: address, timeoutSeconds: 3)
        }
        #expect(
            refused?.message.contains("answered 302") == true
                && refused?.message.contains("127.0.0.1:\(trap)/stolen") == true,
            "\(String(describing: refused))")
        #expect(refused?.description.contains("s3cret-pw") == false)
        let seen = Self.text(log)
        #expect(seen.contains("connect \(port)"), "the peer was asked: \(seen)")
        #expect(!seen.contains("connect \(trap)") && !seen.contains("\(trap) "), "nothing reached the trap: \(seen)")
    }

    @Test(
        "over plain rtsp a Basic-only challenge is refused and the password never sent; allowBasicAuth answers it"
    )
    func basicRefused() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/rogue.log"
        let (rogue, port, _) = try Self.rogue("basic", log: log, dir: dir)
        defer { C.stop(rogue) }
        let address = try RTSPAddress("rtsp://viewer:s3cret-pw@127.0.0.1:\(port)/stream")
        let refused = #expect(throws: RTSPError.self) { _ = try RTSPStream(address: address, timeoutSeconds: 3) }
        #expect(refused?.message.contains("Basic authentication") == true, "\(String(describing: refused))")
        #expect(Self.text(log).contains("RTSP/1.0"), "a request reached the peer: \(Self.text(log))")
        #expect(!Self.text(log).lowercased().contains("authorization"), "no credentials sent: \(Self.text(log))")
        // Allowed: the same peer now gets them, which is what the setting is for.
        _ = try? RTSPStream(address: address, policy: RTSPGuardPolicy(allowBasicAuth: true), timeoutSeconds: 3)
        #expect(Self.text(log).contains("Authorization: Basic"), "\(Self.text(log))")
    }

    @Test(
        "a real camera with a Digest account streams through the guard; rtsps streams when its certificate chains to source.tls.ca and is refused against another CA"
    )
    func digestAndTLS() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = try AgentRunHarness.flowClip(frames: 30, seed: 7)
        let encoded = try RTSPTests.encode(clip, codec: "h264", tailSeconds: 5, dir: dir)
        let trusted = try TestCertificates(in: dir + "/trusted")
        let other = try TestCertificates(in: dir + "/other")

        let (digest, digestURL) = try RTSPTests.server(
            encoded, dir: dir, name: "digest", extra: ["--user", "viewer", "--password", "pw-1", "--auth", "digest"])
        defer { C.stop(digest) }
        let withPassword = digestURL.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:pw-1@")
        let plain = try RTSPStream(address: try RTSPAddress(withPassword), timeoutSeconds: 10)
        #expect(try plain.next() != nil && plain.codec == "h264")
        let wrong = #expect(throws: RTSPError.self) {
            _ = try RTSPStream(
                address: try RTSPAddress(digestURL.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:nope@")),
                timeoutSeconds: 5)
        }
        #expect(wrong != nil)

        let (secure, secureURL) = try RTSPTests.server(
            encoded, dir: dir, name: "tls",
            extra: [
                "--user", "viewer", "--password", "pw-2", "--auth", "basic", "--tls-cert", trusted.serverCert,
                "--tls-key", trusted.serverKey,
            ])
        defer { C.stop(secure) }
        #expect(secureURL.hasPrefix("rtsps://"))
        let secureAddress = try RTSPAddress(
            secureURL.replacingOccurrences(of: "rtsps://", with: "rtsps://viewer:pw-2@"))
        // Basic over a verified rtsps connection is answered.
        let stream = try RTSPStream(
            address: secureAddress, policy: RTSPGuardPolicy(tlsCA: trusted.ca), timeoutSeconds: 10)
        #expect(try stream.next() != nil)
        let untrusted = #expect(throws: RTSPError.self) {
            _ = try RTSPStream(address: secureAddress, policy: RTSPGuardPolicy(tlsCA: other.ca), timeoutSeconds: 5)
        }
        #expect(
            untrusted?.message.contains("certificate not trusted") == true, "\(String(describing: untrusted))")
        // `scan-agent cameras` takes the same CA.
        let agent = TestEnvironment.productsDirectory + "/scan-agent"
        let described = try ProcessRunner.run(
            agent, ["cameras", secureAddress.url, "--tls-ca", trusted.ca, "--format", "json"])
        #expect(described.status == 0 && described.stdoutText.contains("h264"), "\(described.stderr)")
        let refusedByCLI = try ProcessRunner.run(agent, ["cameras", secureAddress.url, "--tls-ca", other.ca])
        #expect(
            refusedByCLI.status == 1 && refusedByCLI.stderr.contains("certificate not trusted")
                && !refusedByCLI.stderr.contains("pw-2"), "\(refusedByCLI.stderr)")
        #expect(untrusted?.description.contains("pw-2") == false)
    }

    @Test(
        "the reply filter passes interleaved RTP and answers across reads, strips Basic beside Digest, refuses redirects and oversized headers"
    )
    func filter() throws {
        var filter = RTSPReplyFilter(allowBasicAuth: false)
        let challenge = Array(
            "RTSP/1.0 401 Unauthorized\r\nCSeq: 2\r\nWWW-Authenticate: Basic realm=\"c\"\r\nWWW-Authenticate: Digest realm=\"c\", nonce=\"n\"\r\nContent-Length: 3\r\n\r\nabc"
                .utf8)
        let rtp: [UInt8] = [UInt8(ascii: "$"), 0, 0, 5, 1, 2, 3, 4, 5]
        var out: [UInt8] = []
        for chunk in (rtp + challenge + rtp).chunked(into: 7) { out += try filter.feed(chunk) }
        let text = String(decoding: out, as: UTF8.self)
        #expect(Array(out.prefix(9)) == rtp && Array(out.suffix(9)) == rtp, "RTP frames as they came")
        #expect(!text.contains("Basic") && text.contains("Digest realm") && text.contains("\r\n\r\nabc"), "\(text)")

        var allowing = RTSPReplyFilter(allowBasicAuth: true)
        #expect(String(decoding: try allowing.feed(challenge), as: UTF8.self).contains("Basic"))

        var redirected = RTSPReplyFilter(allowBasicAuth: true)
        let moved = #expect(throws: RTSPReplyFilter.Refusal.self) {
            _ = try redirected.feed(Array("RTSP/1.0 301 Moved\r\nLocation: rtsp://evil\u{1b}[2J/x\r\n\r\n".utf8))
        }
        #expect(moved?.reason.contains("answered 301") == true && moved?.reason.contains("\u{1b}") == false)

        var flooded = RTSPReplyFilter(allowBasicAuth: false)
        let long = #expect(throws: RTSPReplyFilter.Refusal.self) {
            _ = try flooded.feed(Array(repeating: UInt8(ascii: "a"), count: RTSPReplyFilter.maxHeaderBytes + 1))
        }
        #expect(long != nil)
        var huge = RTSPReplyFilter(allowBasicAuth: false)
        let body = #expect(throws: RTSPReplyFilter.Refusal.self) {
            _ = try huge.feed(Array("RTSP/1.0 200 OK\r\nContent-Length: 99999999999\r\n\r\n".utf8))
        }
        #expect(body?.reason.contains("Content-Length") == true)
    }
}

extension Array {
    fileprivate func chunked(into size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
