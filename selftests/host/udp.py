#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UDP for the host tests: send N datagrams, or count what arrives.

  udp.py send <dst> <port> <count> <payload bytes>
  udp.py recv <port> <idle seconds>     prints the number of datagrams
"""
import socket
import sys
import time


def send(dst, port, count, size):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(count):
        s.sendto(b"x" * size, (dst, port))
        time.sleep(0.002)


def recv(port, idle):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    s.settimeout(idle)
    n = 0
    try:
        while True:
            s.recv(65536)
            n += 1
    except socket.timeout:
        pass
    print(n)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        recv(int(sys.argv[2]), float(sys.argv[3]))
