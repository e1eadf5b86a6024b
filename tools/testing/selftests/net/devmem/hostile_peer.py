#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Traffic a peer may send to a bound RX queue, and what it gets back.

  hostile_peer.py closed DST COUNT SIZE
      UDP datagrams of SIZE bytes of 0x5a to closed ports of DST; collect
      the ICMP or ICMPv6 errors that come back and check that every byte
      they quote is a byte that was sent.
  hostile_peer.py send DST PORT COUNT SIZE [SRCPORT]
      UDP datagrams of SIZE bytes of 0x5a, DF clear (IPv4), to DST:PORT.
  hostile_peer.py recv PORT SECONDS
      count UDP datagrams for SECONDS: intact (all 0x5a), wrong (any other
      byte) and refused (recv failed with EFAULT).

Prints "key: value" lines; exits 1 when a reply or a datagram carried a
byte the peer never sent.
"""

import errno
import select
import socket
import struct
import sys
import time

FILL = 0x5a
IP_MTU_DISCOVER = 10      # <linux/in.h>, not in every Python
IP_PMTUDISC_DONT = 0


def family_of(addr):
    return socket.AF_INET6 if ':' in addr else socket.AF_INET


def udp_socket(dst):
    sock = socket.socket(family_of(dst), socket.SOCK_DGRAM)
    if family_of(dst) == socket.AF_INET:
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER,
                        IP_PMTUDISC_DONT)
    return sock


def quoted_udp(dst, packet):
    """The datagram an ICMP(v6) error quotes: (udp header, payload) or None.

    An IPv4 raw socket hands over the outer IP header too; an ICMPv6 raw
    socket starts at the ICMPv6 header.
    """
    if family_of(dst) == socket.AF_INET:
        outer = (packet[0] & 0x0f) * 4
        icmp = packet[outer:]
        if len(icmp) < 8 or icmp[0] != 3:          # destination unreachable
            return None
        inner = icmp[8:]
        if len(inner) < 20 or inner[9] != socket.IPPROTO_UDP:
            return None
        ihl = (inner[0] & 0x0f) * 4
        return inner[ihl:ihl + 8], inner[ihl + 8:]
    icmp = packet
    if len(icmp) < 8 or icmp[0] != 1:              # destination unreachable
        return None
    inner = icmp[8:]
    if len(inner) < 40 or inner[6] != socket.IPPROTO_UDP:
        return None
    return inner[40:48], inner[48:]


def closed(dst, count, size):
    fam = family_of(dst)
    proto = socket.IPPROTO_ICMP if fam == socket.AF_INET else \
        socket.IPPROTO_ICMPV6
    raw = socket.socket(fam, socket.SOCK_RAW, proto)
    sock = udp_socket(dst)
    payload = bytes([FILL]) * size
    for i in range(count):
        sock.sendto(payload, (dst, 33000 + i))
        time.sleep(0.01)
    replies = quoted_bytes = foreign = 0
    deadline = time.time() + 2
    while time.time() < deadline:
        ready, _, _ = select.select([raw], [], [], 0.2)
        if not ready:
            continue
        got = quoted_udp(dst, raw.recv(65536))
        if got is None:
            continue
        udph, data = got
        if len(udph) == 8 and struct.unpack('!H', udph[2:4])[0] < 33000:
            continue
        replies += 1
        quoted_bytes = max(quoted_bytes, len(data))
        foreign += sum(1 for b in data if b != FILL)
        if len(data) > size:
            foreign += len(data) - size
    print(f'icmp_errors: {replies}')
    print(f'max_quoted_payload: {quoted_bytes}')
    print(f'foreign_bytes: {foreign}')
    return 0 if not foreign else 1


def send(dst, port, count, size, srcport=0):
    sock = udp_socket(dst)
    if srcport:
        # several senders may share the source port (one flow, two sizes)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(('::' if family_of(dst) == socket.AF_INET6 else '0.0.0.0',
                   srcport))
    payload = bytes([FILL]) * size
    for _ in range(count):
        sock.sendto(payload, (dst, port))
        time.sleep(0.002)
    print(f'sent: {count}')
    return 0


def recv(port, seconds):
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind(('::', port))
    sock.setblocking(False)
    intact = wrong = refused = 0
    deadline = time.time() + seconds
    print('listening', flush=True)
    while time.time() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.2)
        if not ready:
            continue
        try:
            data = sock.recv(65536)
        except OSError as e:
            if e.errno == errno.EFAULT:
                refused += 1
                continue
            if e.errno == errno.EAGAIN:
                continue
            raise
        if all(b == FILL for b in data):
            intact += 1
        else:
            wrong += 1
    print(f'intact: {intact}')
    print(f'wrong: {wrong}')
    print(f'refused: {refused}')
    return 0 if not wrong else 1


def main(argv):
    if len(argv) == 5 and argv[1] == 'closed':
        return closed(argv[2], int(argv[3]), int(argv[4]))
    if len(argv) in (6, 7) and argv[1] == 'send':
        return send(argv[2], int(argv[3]), int(argv[4]), int(argv[5]),
                    int(argv[6]) if len(argv) == 7 else 0)
    if len(argv) == 4 and argv[1] == 'recv':
        return recv(int(argv[2]), float(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
