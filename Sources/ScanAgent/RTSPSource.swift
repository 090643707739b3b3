import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanRTSP
import ScanServices
import ScanAgentConfig
import ScanEvents

/// An IP camera's RTSP stream through libavformat and libavcodec, decoded to luma on the capture
/// thread. Latency stays low: the stream is read as it comes and each decoded frame goes to the
/// frame queue at once, where the newest replaces a waiting one (counted as dropped) when
/// decoding falls behind. Frames the decoder marks damaged are counted as incomplete, never
/// decoded. Reopened when the camera goes away (see `Reconnecting`); no data for 5 s counts as
/// gone. An RTSP camera's exposure and gain are its own settings (its web page, ONVIF): this
/// source takes none.
final class RTSPSource: FrameSource, @unchecked Sendable {
    // @unchecked: the stream lives on the capture thread only; the counters and the state word
    // are thread-safe.
    let kind = SourceConfig.Kind.rtsp
    let blocking = false
    let address: RTSPAddress
    /// The URL with the password from `source.passwordFile`, when there is one.
    private let url: String?
    let transport: RTSPStream.Transport
    /// Redirects, Basic authentication and rtsps certificates (see `RTSPGuard`).
    let policy: RTSPGuardPolicy
    let clock: any AgentClock
    let logger: Logger
    private let stateWord = SourceState()
    private let counters = SourceCounters()
    var state: SourceStatus { stateWord.current }
    var health: SourceHealth { counters.health }

    init(
        address: RTSPAddress, url: String?, transport: RTSPStream.Transport, policy: RTSPGuardPolicy,
        clock: any AgentClock, logger: Logger
    ) {
        self.address = address
        self.url = url
        self.transport = transport
        self.policy = policy
        self.clock = clock
        self.logger = logger
    }

    func capture(into queue: FrameQueue, stop: StopToken) {
        defer { stateWord.set(.ended) }
        var index = 0
        Reconnecting<RTSPStream>(state: stateWord, counters: counters, logger: logger).run(stop: stop) {
            try RTSPStream(address: address, url: url, transport: transport, policy: policy) { stop.isStopped }
        } stream: { stream, connection in
            logger.info(
                "camera streaming",
                metadata: [
                    "camera": "\(address.redacted)", "codec": "\(stream.codec)",
                    "size": "\(stream.width)x\(stream.height)", "transport": "\(transport.rawValue)",
                    "connection": "\(connection)",
                ])
            var counted = 0
            var timeline = CameraTimeline()
            while !stop.isStopped {
                let frame: RTSPStream.Frame?
                do {
                    frame = try stream.next()
                } catch {
                    logger.error("camera failed; reopening", metadata: ["error": "\(error)"])
                    return "\(error)"
                }
                if stream.damaged > counted {
                    counters.incomplete.withLock { $0 += stream.damaged - counted }
                    logger.debug("damaged frames dropped", metadata: ["frames": "\(stream.damaged - counted)"])
                    counted = stream.damaged
                }
                guard let frame else { return nil }
                // Event times from the stream's presentation times, which the camera stamps at capture.
                let time = timeline.time(
                    cameraNanoseconds: frame.seconds.map { Int64($0 * 1e9) }, arrival: clock.now)
                queue.put(CapturedFrame(image: frame.image, index: index, time: time))
                index += 1
            }
            return nil
        }
    }
}
