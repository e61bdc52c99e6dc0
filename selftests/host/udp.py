#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UDP for the host tests: send N datagrams, or count what arrives.

  udp.py send <dst> <port> <count> <payload bytes>
  udp.py recv <port> <ready file> <stop file>
      binds, creates <ready file>, counts datagrams until <stop file>
      exists and nothing came for 0.3 s, prints the count
"""
import os
import socket
import sys
import time


def send(dst, port, count, size):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(count):
        s.sendto(b"x" * size, (dst, port))
        time.sleep(0.002)


def recv(port, ready, stop):
    # Slow machines (emulated guests) start Python slowly: the test waits
    # for <ready> before sending, and tells us when it is done.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.3)
    open(ready, "w").close()
    n = 0
    while True:
        try:
            s.recv(65536)
            n += 1
        except socket.timeout:
            if os.path.exists(stop):
                break
    print(n)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        recv(int(sys.argv[2]), sys.argv[3], sys.argv[4])
