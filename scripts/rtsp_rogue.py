#!/usr/bin/python3
"""A hostile RTSP peer for the agent's RTSP guard tests (docs/security.md, "RTSP cameras"): it
poses as the camera at source.url and tries to get the camera's password.

  rtsp_rogue.py redirect LOG   answers every request with 302 to rtsp://127.0.0.1:TRAP/stolen
  rtsp_rogue.py basic LOG      answers every request with 401 and a Basic challenge only

A second listener, the trap, stands for "another host". Everything that reaches either port is
written to LOG: "connect PORT", and each request's lines. Prints "rtsp rogue: PORT TRAP" once
listening; runs until SIGTERM.
"""
import os
import signal
import socket
import sys
import threading


def serve(listener, mode, trap_port, log, lock):
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=talk, args=(connection, listener.getsockname()[1], mode, trap_port, log, lock),
                         daemon=True).start()


def talk(connection, port, mode, trap_port, log, lock):
    with lock:
        log.write(f"connect {port}\n")
        log.flush()
    data = b""
    with connection:
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return
            data += chunk
            while b"\r\n\r\n" in data:
                head, data = data.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                with lock:
                    for line in lines:
                        log.write(f"{port} {line}\n")
                    log.flush()
                cseq = next((line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("cseq:")), "1")
                if mode == "redirect":
                    reply = f"RTSP/1.0 302 Found\r\nCSeq: {cseq}\r\nLocation: rtsp://127.0.0.1:{trap_port}/stolen\r\n\r\n"
                else:
                    reply = f'RTSP/1.0 401 Unauthorized\r\nCSeq: {cseq}\r\nWWW-Authenticate: Basic realm="camera"\r\n\r\n'
                connection.sendall(reply.encode())


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("redirect", "basic"):
        sys.exit(__doc__)
    # A parent may hand SIGTERM down blocked or ignored (the mask is inherited).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    mode, log = sys.argv[1], open(sys.argv[2], "a")
    lock = threading.Lock()
    listeners = []
    for _ in range(2):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listeners.append(listener)
    trap_port = listeners[1].getsockname()[1]
    for listener in listeners:
        threading.Thread(target=serve, args=(listener, mode, trap_port, log, lock), daemon=True).start()
    print(f"rtsp rogue: {listeners[0].getsockname()[1]} {trap_port}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
