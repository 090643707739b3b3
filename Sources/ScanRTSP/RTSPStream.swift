internal import CAVCodec
import Foundation
import ScanCore
import ScanAgentConfig

/// A failing libavformat/libavcodec call: what was being done, on which camera (its address
/// without password), and FFmpeg's message.
public struct RTSPError: Error, Sendable, Equatable, CustomStringConvertible {
    public var action: String
    public var camera: String
    public var message: String

    public init(action: String, camera: String, message: String) {
        self.action = action
        self.camera = camera
        self.message = message
    }

    public var description: String { "\(action) (\(camera)): \(message)" }
}

/// One RTSP stream (H.264, H.265, MJPEG or anything else libavcodec decodes), read on the
/// calling thread and decoded to luma. Low latency by construction: nothing is buffered beyond
/// what decoding needs (no reorder wait, no frame threading, no probing beyond a second), so
/// the newest frame is the one handed over. Frames the decoder marks damaged (lost packets,
/// concealed errors) are counted in `damaged` and never returned. Not thread-safe: one thread
/// reads it.
public final class RTSPStream {
    public enum Transport: String, Sendable, CaseIterable {
        /// RTP interleaved in the RTSP connection: no loss, the usual choice on a plant network.
        case tcp
        /// RTP over UDP: lowest latency; lost packets become damaged frames.
        case udp
    }

    public struct Frame {
        public var image: GrayImage
        /// The frame's presentation time in seconds from the stream's start, when it has one.
        public var seconds: Double?
        /// The camera's wall clock when it took the frame (RTCP sender reports), microseconds
        /// since 1970, when the camera sends them.
        public var cameraMicroseconds: Int64?
    }

    /// Checked by libavformat while it waits: true ends the wait (a stop, or no data in time).
    final class Interrupt {
        var deadline = ContinuousClock.now
        let stopped: @Sendable () -> Bool
        init(stopped: @escaping @Sendable () -> Bool) { self.stopped = stopped }
        var due: Bool { stopped() || ContinuousClock.now > deadline }
    }

    /// The largest frame taken (about 8K): a camera sending more is refused, not allocated for.
    public static let maxPixels = 8192 * 8192

    public let address: RTSPAddress
    public let codec: String
    public private(set) var width: Int
    public private(set) var height: Int
    /// Frames per second the stream announces (0 when it does not).
    public let frameRate: Double
    /// Frames the decoder marked damaged, dropped.
    public private(set) var damaged = 0
    /// Whole frames returned.
    public private(set) var frames = 0

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var scaler: OpaquePointer?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let startTime: Int64
    private let interrupt: Interrupt
    private let timeout: Duration
    /// The relay libavformat reaches the camera through (see `RTSPGuard`).
    private let relay: RTSPGuard

    /// Connects to `address` (`url`: the same with credentials, if any) over `transport`, through
    /// an `RTSPGuard` that holds the connection to `policy`: no answer within `timeoutSeconds` (or
    /// `stopped`) fails, as does a stream without video or anything the guard refuses.
    public init(
        address: RTSPAddress, url: String? = nil, transport: Transport = .tcp, policy: RTSPGuardPolicy = .init(),
        timeoutSeconds: Double = 5, stopped: @escaping @Sendable () -> Bool = { false }
    ) throws(RTSPError) {
        scantrack_av_quiet()  // FFmpeg's own log would print what cameras send, unescaped
        self.address = address
        let camera = address.redacted
        self.interrupt = Interrupt(stopped: stopped)
        self.timeout = .milliseconds(Int64(timeoutSeconds * 1000))
        let relay = try RTSPGuard(address: address, policy: policy, timeoutSeconds: timeoutSeconds)
        self.relay = relay
        func failure(_ action: String, _ code: Int32) -> RTSPError {
            relay.close()  // the relay's refusal, if any, is known once it has ended
            return RTSPError(action: action, camera: camera, message: relay.refusal ?? Self.message(code))
        }
        // libavformat talks plain RTSP to the guard; rtsps's TLS is the guard's (RTP interleaved,
        // as libavformat does for rtsps itself).
        let withCredentials = (try? RTSPAddress(url ?? address.url)) ?? address
        let relayedURL = withCredentials.relayed(toLocalPort: relay.localPort)
        let transport = address.scheme == "rtsps" ? .tcp : transport

        var context = avformat_alloc_context()
        guard let allocated = context else {
            relay.close()
            throw RTSPError(action: "connecting", camera: camera, message: "out of memory")
        }
        allocated.pointee.interrupt_callback = AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<Interrupt>.fromOpaque(opaque).takeUnretainedValue().due ? 1 : 0
            }, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let settings: [(String, String)] = [
            ("rtsp_transport", transport.rawValue),
            ("timeout", "\(Int64(timeoutSeconds * 1_000_000))"),  // socket I/O, µs
            // Only what RTSP to the guard needs: a URL cannot make it open a file or HTTP.
            ("protocol_whitelist", "rtsp,rtp,udp,tcp"),
            ("allowed_media_types", "video"),
            ("max_delay", "100000"),  // reordering waits at most 0.1 s
            ("reorder_queue_size", "16"),
            ("probesize", "1000000"),
            ("analyzeduration", "1000000"),
        ]
        for (key, value) in settings { av_dict_set(&options, key, value, 0) }
        interrupt.deadline = ContinuousClock.now + timeout
        var status = avformat_open_input(&context, relayedURL, nil, &options)
        guard status >= 0, let opened = context else { throw failure("connecting", status) }
        format = opened
        status = avformat_find_stream_info(opened, nil)
        guard status >= 0 else {
            avformat_close_input(&format)
            throw failure("reading the stream's description", status)
        }
        var codecPointer: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(opened, AVMEDIA_TYPE_VIDEO, -1, -1, &codecPointer, 0)
        guard index >= 0, let codec = codecPointer, let stream = opened.pointee.streams[Int(index)] else {
            avformat_close_input(&format)
            throw RTSPError(
                action: "choosing the video", camera: camera,
                message: index >= 0 ? "no decoder for its codec" : "the stream has no video")
        }
        streamIndex = index
        timeBase = stream.pointee.time_base
        startTime = stream.pointee.start_time
        let rate = stream.pointee.avg_frame_rate.den > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        frameRate = rate.den > 0 ? Double(rate.num) / Double(rate.den) : 0
        self.codec = String(cString: codec.pointee.name)
        decoder = avcodec_alloc_context3(codec)
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard let decoder, packet != nil, frame != nil else {
            avformat_close_input(&format)
            throw RTSPError(action: "decoding", camera: camera, message: "out of memory")
        }
        status = avcodec_parameters_to_context(decoder, stream.pointee.codecpar)
        if status >= 0 {
            decoder.pointee.thread_count = 1  // frame threading would hold frames back
            scantrack_av_set_low_delay(decoder)
            // The decoder refuses a frame larger than this before allocating it: a camera that
            // announces 65535² pixels gets an error, not gigabytes.
            decoder.pointee.max_pixels = Int64(Self.maxPixels)
            status = avcodec_open2(decoder, codec, nil)
        }
        width = Int(decoder.pointee.width)
        height = Int(decoder.pointee.height)
        guard status >= 0 else {
            let error = failure("opening its \(self.codec) decoder", status)
            release()
            throw error
        }
    }

    deinit { release() }

    private func release() {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&decoder)
        avformat_close_input(&format)
        if let scaler { sws_freeContext(scaler) }
        scaler = nil
        relay.close()
    }

    /// The next whole frame. Nil when `stopped` became true; throws when the camera sent
    /// nothing for the timeout, the stream ended or reading failed.
    public func next() throws(RTSPError) -> Frame? {
        guard let format, let decoder, let packet, let frame else {
            throw RTSPError(action: "reading", camera: address.redacted, message: "the stream is closed")
        }
        while true {
            let received = avcodec_receive_frame(decoder, frame)
            if received == 0 {
                defer { av_frame_unref(frame) }
                if let taken = take(frame) { return taken }
                continue
            }
            if received != scantrack_av_error_again() {
                throw RTSPError(
                    action: "decoding", camera: address.redacted,
                    message: received == scantrack_av_error_eof() ? "the stream ended" : Self.message(received))
            }
            interrupt.deadline = ContinuousClock.now + timeout
            let read = av_read_frame(format, packet)
            if read < 0 {
                if interrupt.stopped() { return nil }
                let message =
                    relay.refusal
                    ?? (read == scantrack_av_error_eof()
                        ? "the stream ended"
                        : read == scantrack_av_error_exit()
                            ? "no data for \(timeout.components.seconds) s" : Self.message(read))
                throw RTSPError(action: "reading", camera: address.redacted, message: message)
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            // A packet the decoder refuses (damaged on the way) is counted, not fatal: the next
            // key frame recovers.
            if avcodec_send_packet(decoder, packet) < 0 { damaged += 1 }
        }
    }

    /// The luma of a decoded frame, or nil when it is damaged or of a size not taken.
    private func take(_ frame: UnsafeMutablePointer<AVFrame>) -> Frame? {
        let frameWidth = Int(frame.pointee.width)
        let frameHeight = Int(frame.pointee.height)
        guard scantrack_av_frame_corrupt(frame) == 0, frameWidth > 0, frameHeight > 0,
            frameWidth * frameHeight <= Self.maxPixels
        else {
            damaged += 1
            return nil
        }
        let count = frameWidth * frameHeight
        var converted = true
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if scantrack_av_luma_in_plane0(frame.pointee.format) != 0 {
                scantrack_av_copy_luma(frame, buffer.baseAddress)
            } else {
                converted = scantrack_av_scale_gray(&scaler, frame, buffer.baseAddress) >= 0
            }
            initialized = count
        }
        guard converted else {
            damaged += 1
            return nil
        }
        width = frameWidth
        height = frameHeight
        frames += 1
        let pts = frame.pointee.best_effort_timestamp
        var seconds: Double?
        var camera: Int64?
        if pts != scantrack_av_nopts() {
            let fromStart = pts - (startTime == scantrack_av_nopts() ? 0 : startTime)
            seconds = Double(fromStart) * Double(timeBase.num) / Double(max(1, timeBase.den))
            if let format, format.pointee.start_time_realtime != scantrack_av_nopts(), let seconds {
                camera = format.pointee.start_time_realtime + Int64(seconds * 1_000_000)
            }
        }
        return Frame(
            image: GrayImage(width: frameWidth, height: frameHeight, pixels: pixels), seconds: seconds,
            cameraMicroseconds: camera)
    }

    /// FFmpeg's text for an error code.
    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
