#!/usr/bin/python3
"""An RTSP camera for tests, benchmarks and the demo: GStreamer's RTSP server (Debian's
gir1.2-gst-rtsp-server-1.0) serving a rendered clip, encoded beforehand.

  rtsp_server.py encode CLIP.y4m OUT.mkv --codec h264|h265|mjpeg [--quality Q | --bitrate KBPS]
                 [--repeat N] [--tail-seconds S]
      Encodes a YUV4MPEG2 clip (mono or 4:2:0, as scan-synth writes them) with x264, x265 or
      JPEG into Matroska: key frame every second, no B-frames, one slice a frame (a camera's
      low-latency profile); --repeat: the clip N times over (a longer stream for benchmarks);
      --tail-seconds: then S seconds of an empty belt (every code leaves the view).
  rtsp_server.py serve OUT.mkv [--port P] [--mount /clip] [--user U --password W --auth basic|digest]
                 [--tls-cert CERT.pem --tls-key KEY.pem]
      Serves it at rtsp://127.0.0.1:P/clip (P 0 or left out: a free port) in real time; each client gets the clip from its first
      frame, then the stream ends. Prints "rtsp server: URL" once listening. --user/--password: only that
      account may watch, answering the --auth challenge; --tls-cert/--tls-key: rtsps (TLS on every connection).
"""
import argparse
import os
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gio, GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402

ENCODERS = {
    # (encoder, parser, payloader)
    "h264": ("x264enc tune=zerolatency speed-preset=veryfast bframes=0 sliced-threads=false key-int-max={key} pass=quant quantizer={q}",
             "h264parse", "rtph264pay config-interval=-1"),
    "h265": ("x265enc tune=zerolatency speed-preset=veryfast key-int-max={key} qp={q}",
             "h265parse", "rtph265pay config-interval=-1"),
    "mjpeg": ("jpegenc quality={q}", "jpegparse", "rtpjpegpay"),
}
DEFAULT_QUALITY = {"h264": 23, "h265": 26, "mjpeg": 85}


def read_y4m(path):
    """(width, height, fps numerator, denominator, gstreamer format, frame bytes) and an iterator of frames."""
    stream = open(path, "rb")
    header = stream.readline().decode("ascii").split()
    if not header or header[0] != "YUV4MPEG2":
        sys.exit(f"{path}: not a YUV4MPEG2 clip")
    fields = {item[0]: item[1:] for item in header[1:]}
    width, height = int(fields["W"]), int(fields["H"])
    num, den = (int(x) for x in fields.get("F", "30:1").split(":"))
    colour = fields.get("C", "420jpeg")
    if colour == "mono":
        fmt, size = "GRAY8", width * height
    elif colour.startswith("420"):
        fmt, size = "I420", width * height + 2 * ((width + 1) // 2) * ((height + 1) // 2)
    else:
        sys.exit(f"{path}: colour space {colour} not served (mono or 4:2:0)")

    def frames():
        while True:
            line = stream.readline()
            if not line:
                return
            if not line.startswith(b"FRAME"):
                sys.exit(f"{path}: damaged frame header")
            data = stream.read(size)
            if len(data) < size:
                return
            yield data

    return width, height, num, den, fmt, frames()


def encode(args):
    width, height, num, den, fmt, frames = read_y4m(args.clip)
    quality = args.quality if args.quality is not None else DEFAULT_QUALITY[args.codec]
    encoder, parser, _ = ENCODERS[args.codec]
    key = max(1, round(num / den))
    encoder = encoder.format(key=key, q=quality)
    if args.bitrate:
        # A camera's constant bitrate instead of a constant quality.
        encoder = {"h264": encoder.replace(f"pass=quant quantizer={quality}", f"pass=cbr bitrate={args.bitrate}"),
                   "h265": encoder.replace(f"qp={quality}", f"bitrate={args.bitrate}"),
                   "mjpeg": encoder}[args.codec]
    Gst.init(None)
    pipeline = Gst.parse_launch(
        f"appsrc name=src format=time ! videoconvert ! video/x-raw,format=I420 ! "
        f"{encoder} ! {parser} ! matroskamux ! filesink name=sink")
    pipeline.get_by_name("sink").set_property("location", args.out)
    source = pipeline.get_by_name("src")
    source.set_property("caps", Gst.Caps.from_string(
        f"video/x-raw,format={fmt},width={width},height={height},framerate={num}/{den}"))
    pipeline.set_state(Gst.State.PLAYING)
    duration = Gst.SECOND * den // num
    count = 0
    clip = list(frames) * max(1, args.repeat)
    if clip and args.tail_seconds > 0:
        # A belt with nothing on it: uniform frames, so that every code leaves the view.
        clip += [bytes([128]) * len(clip[0])] * round(args.tail_seconds * num / den)
    for index, data in enumerate(clip):
        buffer = Gst.Buffer.new_wrapped(data)
        buffer.pts = index * duration
        buffer.duration = duration
        if source.emit("push-buffer", buffer) != Gst.FlowReturn.OK:
            sys.exit("encoding failed")
        count += 1
    source.emit("end-of-stream")
    message = pipeline.get_bus().timed_pop_filtered(
        600 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if message is None or message.type == Gst.MessageType.ERROR:
        detail = message.parse_error()[1] if message else "timed out"
        sys.exit(f"encoding failed: {detail}")
    print(f"encoded {count} frames {width}x{height} {args.codec} -> {args.out}")


def serve(args):
    Gst.init(None)
    codec = codec_of(args.file)
    _, parser, payloader = ENCODERS[codec]
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        f"( filesrc name=file ! matroskademux ! {parser} ! {payloader} name=pay0 pt=96 )")
    factory.set_shared(False)  # each client from the first frame
    factory.set_eos_shutdown(False)
    path = os.path.abspath(args.file)

    def configure(_factory, media):
        media.get_element().get_by_name("file").set_property("location", path)

    factory.connect("media-configure", configure)
    if args.user is not None or args.tls_cert is not None:
        auth = GstRtspServer.RTSPAuth()
        if args.tls_cert is not None:
            auth.set_tls_certificate(Gio.TlsCertificate.new_from_files(args.tls_cert, args.tls_key))
        if args.user is not None:
            token = GstRtspServer.RTSPToken()
            token.set_string("media.factory.role", "viewer")
            if args.auth == "digest":
                auth.add_digest(args.user, args.password, token)
                auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
            else:
                auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password), token)
                auth.set_supported_methods(GstRtsp.RTSPAuthMethod.BASIC)
            permissions = GstRtspServer.RTSPPermissions()
            permissions.add_permission_for_role("viewer", "media.factory.access", True)
            permissions.add_permission_for_role("viewer", "media.factory.construct", True)
            factory.set_permissions(permissions)
        server.set_auth(auth)
    server.get_mount_points().add_factory(args.mount, factory)
    if server.attach(None) == 0:
        sys.exit(f"rtsp server: cannot listen on 127.0.0.1:{args.port}")
    loop = GLib.MainLoop()
    # A parent may hand these down blocked (the mask is inherited): GLib would never see them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, loop.quit)
    scheme = "rtsps" if args.tls_cert is not None else "rtsp"
    print(f"rtsp server: {scheme}://127.0.0.1:{server.get_bound_port()}{args.mount}", flush=True)
    loop.run()


def codec_of(path):
    """The codec of an encoded clip, from its file name: NAME.h264.mkv, NAME.h265.mkv, NAME.mjpeg.mkv."""
    for codec in ENCODERS:
        if path.endswith(f".{codec}.mkv"):
            return codec
    sys.exit(f"{path}: name it NAME.h264.mkv, NAME.h265.mkv or NAME.mjpeg.mkv")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    encoding = commands.add_parser("encode")
    encoding.add_argument("clip")
    encoding.add_argument("out")
    encoding.add_argument("--codec", choices=sorted(ENCODERS), default="h264")
    encoding.add_argument("--quality", type=int)
    encoding.add_argument("--bitrate", type=int, help="kbit/s, constant (H.264, H.265) instead of --quality")
    encoding.add_argument("--repeat", type=int, default=1, help="the clip this many times over")
    encoding.add_argument("--tail-seconds", type=float, default=0, help="then this long an empty belt")
    serving = commands.add_parser("serve")
    serving.add_argument("file")
    serving.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    serving.add_argument("--mount", default="/clip")
    serving.add_argument("--user")
    serving.add_argument("--password")
    serving.add_argument("--auth", choices=["basic", "digest"], default="digest")
    serving.add_argument("--tls-cert")
    serving.add_argument("--tls-key")
    args = parser.parse_args()
    if args.command == "encode":
        if codec_of(args.out) != args.codec:
            sys.exit(f"{args.out}: name it NAME.{args.codec}.mkv")
        encode(args)
    else:
        serve(args)


if __name__ == "__main__":
    main()
