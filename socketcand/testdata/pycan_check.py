"""Drives cand's socketcand server with python-can's own "socketcand" interface.

Run by socketcand/pycan_test.go against cand on the virtual Pi, whose bus has an
answering peer (answers each frame with ID + 1 and the same data) and a periodic
peer (ID 0x100 every 100 ms, 8 bytes: a big-endian counter). Prints one line per
check; the Go test compares the output exactly.

    python3 pycan_check.py HOST PORT
"""
import sys

import can

TIMEOUT = 5.0  # seconds to wait for any one frame


def connect(host, port):
    # python-can 4.1 reads each handshake reply with one recv() and wants it
    # alone: a frame of the bus arriving right behind "< ok >" of rawmode fails
    # the handshake. Try again, as a user would.
    last = None
    for _ in range(3):
        try:
            return can.Bus(interface="socketcand", host=host, port=port, channel="can0")
        except can.CanError as e:
            last = e
    raise last


def recv(bus, want_id):
    """The next frame with arbitration ID want_id; other IDs are skipped."""
    while True:
        msg = bus.recv(timeout=TIMEOUT)
        if msg is None:
            sys.exit(f"no frame {want_id:03X} within {TIMEOUT} s")
        if msg.arbitration_id == want_id:
            return msg


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    bus = connect(host, port)
    print("connected")

    counters = []
    for _ in range(10):
        msg = recv(bus, 0x100)
        if msg.dlc != 8:
            sys.exit(f"periodic frame with dlc {msg.dlc}: {msg}")
        counters.append(int.from_bytes(msg.data, "big"))
    if counters != list(range(counters[0], counters[0] + 10)):
        sys.exit(f"periodic counters {counters} are not consecutive")
    print("periodic 100: 10 frames, consecutive counters")

    for i in range(20):
        data = bytes((i + k) & 0xFF for k in range(i % 9))
        bus.send(can.Message(arbitration_id=0x200, data=data, is_extended_id=False))
        answer = recv(bus, 0x201)
        if bytes(answer.data) != data or answer.dlc != len(data):
            sys.exit(f"request {i}: sent 200#{data.hex()}, answer {answer}")
        print(f"answer {i}: 201#{data.hex().upper()}")

    bus.shutdown()
    print("done")


if __name__ == "__main__":
    main()
