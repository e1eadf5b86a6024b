#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Traffic a peer may send to a bound RX queue, and what it gets back.

  hostile_peer.py closed DST COUNT SIZE
      UDP datagrams of SIZE bytes of 0x5a to closed ports of DST; collect
      the ICMP or ICMPv6 errors that come back and check that every byte
      they quote is a byte that was sent.
  hostile_peer.py send DST PORT COUNT SIZE [SRCPORT]
      UDP datagrams of SIZE bytes of 0x5a, DF clear (IPv4), to DST:PORT.
  hostile_peer.py recv PORT SECONDS [COUNT]
      count UDP datagrams for SECONDS, or until COUNT came: intact (all
      0x5a), wrong (any other byte) and refused (recv failed with EFAULT).

  hostile_peer.py frames IFACE DSTMAC SRC4 DST4 SRC6 DST6 PORT TCPPORT
                         HOLDPORT VLANDST4
      hand-made frames through a packet socket on IFACE, to DSTMAC:
      IPv4 and IPv6 fragments of UDP datagrams to PORT (overlapping ones
      too), IPv6 with hop-by-hop and destination options before UDP to
      the closed port PORT + 100, TCP
      with bad checksums, SYN and RST with payload to TCPPORT, segments
      out of the window of an established connection to HOLDPORT, and
      802.1Q-tagged UDP (VLAN 100) to a closed port of VLANDST4. Every
      frame from DSTMAC meanwhile is checked: an ICMP or ICMPv6 error may
      quote only bytes that were sent.
  hostile_peer.py hold PORT SECONDS
      accept TCP connections on PORT and keep them open, never reading.
  hostile_peer.py stream-recv ktls|mptcp PORT SECONDS
      accept one connection on PORT and read it to its end: with kTLS
      receive (TLS 1.2, AES-GCM-128, a key of zeros) on a TCP socket, or
      on an MPTCP socket; prints the bytes read and the error that ended
      the stream.
  hostile_peer.py stream-send ktls|mptcp DST PORT SIZE [GATE]
      ktls: over plain TCP, one TLS record header announcing SIZE bytes
      and 40 of them, then the rest; mptcp: SIZE bytes of 0x5a over
      MPTCP, the first 100 of them alone, then the rest. Between the two
      parts it prints "first part acked" once the receiver has acknowledged
      the first part (SIOCOUTQ 0) and, with GATE, waits until the
      file GATE exists (the caller moves the flow to another RX queue
      meanwhile: the first part in host memory, the rest in device
      memory), else a moment.

Prints "key: value" lines; exits 1 when a reply or a datagram carried a
byte the peer never sent. Every wait, SECONDS included, is multiplied by
DEVMEM_TIME_SCALE (an integer, default 1) for slow guests.
"""

import errno
import fcntl
import os
import random
import select
import signal
import socket
import struct
import sys
import time

try:
    SCALE = max(1, int(os.environ.get('DEVMEM_TIME_SCALE', '1')))
except ValueError:
    SCALE = 1

FILL = 0x5a
IP_MTU_DISCOVER = 10      # <linux/in.h>, not in every Python
IP_PMTUDISC_DONT = 0
IPPROTO_MPTCP = 262
TCP_ULP = 31              # <linux/tcp.h>
SOL_TLS = 282             # <linux/socket.h>
TLS_RX = 2                # <linux/tls.h>
SIOCOUTQ = 0x5411         # <asm-generic/ioctls.h> TIOCOUTQ
TLS_1_2_VERSION = 0x0303
TLS_CIPHER_AES_GCM_128 = 51


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
    deadline = time.time() + 2 * SCALE
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


def recv(port, seconds, count=0):
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind(('::', port))
    sock.setblocking(False)
    intact = wrong = refused = 0
    deadline = time.time() + seconds * SCALE
    print('listening', flush=True)
    while time.time() < deadline:
        if count and intact + wrong + refused >= count:
            break
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


ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86dd
ETH_P_8021Q = 0x8100
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum16(data):
    """The Internet checksum of data."""
    if len(data) % 2:
        data += b'\0'
    total = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def pseudo4(src, dst, proto, length):
    return socket.inet_aton(src) + socket.inet_aton(dst) + \
        struct.pack('!BBH', 0, proto, length)


def pseudo6(src, dst, proto, length):
    return socket.inet_pton(socket.AF_INET6, src) + \
        socket.inet_pton(socket.AF_INET6, dst) + \
        struct.pack('!IxxxB', length, proto)


def ipv4(src, dst, proto, payload, ident=0, frag=0, more=False):
    """An IPv4 header (fragment offset in bytes) and payload."""
    flags_off = (0x2000 if more else 0) | (frag // 8)
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(payload), ident,
                      flags_off, 64, proto, 0, socket.inet_aton(src),
                      socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack('!H', csum16(hdr)) + hdr[12:]
    return hdr + payload


def ipv6(src, dst, nexthdr, payload):
    return struct.pack('!IHBB16s16s', 0x60000000, len(payload), nexthdr, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


def udp(pseudo, sport, dport, data):
    """A UDP header and data; pseudo(length) is the pseudo header."""
    hdr = struct.pack('!HHHH', sport, dport, 8 + len(data), 0)
    summed = csum16(pseudo(8 + len(data)) + hdr + data) or 0xffff
    return hdr[:6] + struct.pack('!H', summed) + data


def tcp(pseudo, sport, dport, seq, ack, flags, data, bad_csum=False):
    hdr = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, 5 << 4, flags,
                      65535, 0, 0)
    summed = csum16(pseudo(20 + len(data)) + hdr + data)
    if bad_csum:
        summed ^= 0x5555
    return hdr[:16] + struct.pack('!H', summed) + hdr[18:] + data


class Wire:
    """A packet socket on one interface: frames out, the server's in."""

    def __init__(self, iface, dstmac):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                  socket.htons(ETH_P_ALL))
        self.sock.bind((iface, 0))
        with open(f'/sys/class/net/{iface}/address') as f:
            self.src = bytes.fromhex(f.read().strip().replace(':', ''))
        self.dst = bytes.fromhex(dstmac.replace(':', ''))
        self.sent = 0
        self.icmp_errors = {}                     # by source address
        self.foreign = 0

    def send(self, ethertype, payload, vlan=None):
        hdr = self.dst + self.src
        if vlan is not None:
            hdr += struct.pack('!HH', ETH_P_8021Q, vlan)
        self.sock.send(hdr + struct.pack('!H', ethertype) + payload)
        self.sent += 1
        time.sleep(0.003)
        self.drain(0)

    def drain(self, seconds):
        deadline = time.time() + seconds
        while True:
            left = max(0, deadline - time.time())
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return
            frame, addr = self.sock.recvfrom(65536)
            if addr[2] == socket.PACKET_OUTGOING or frame[6:12] != self.dst:
                continue
            self.check_reply(frame)

    def check_reply(self, frame):
        """Count the bytes an ICMP(v6) error quotes that were not sent."""
        ethertype, off = struct.unpack('!H', frame[12:14])[0], 14
        if ethertype == ETH_P_8021Q:
            ethertype, off = struct.unpack('!H', frame[16:18])[0], 18
        l3 = frame[off:]
        if ethertype == ETH_P_IP and len(l3) >= 20 and l3[9] == 1:
            icmp = l3[(l3[0] & 0x0f) * 4:]
            if len(icmp) < 8 or icmp[0] not in (3, 11, 12):
                return
            src = socket.inet_ntoa(l3[12:16])
            quoted = quoted_payload4(icmp[8:])
        elif ethertype == ETH_P_IPV6 and len(l3) >= 48 and l3[6] == 58:
            icmp = l3[40:]
            if icmp[0] >= 128:                    # not an error
                return
            src = socket.inet_ntop(socket.AF_INET6, l3[8:24])
            quoted = quoted_payload6(icmp[8:])
        else:
            return
        self.icmp_errors[src] = self.icmp_errors.get(src, 0) + 1
        self.foreign += sum(1 for b in quoted if b != FILL)


def quoted_payload4(inner):
    """The payload bytes an ICMP error quotes of an IPv4 packet sent."""
    if len(inner) < 20:
        return b''
    start = (inner[0] & 0x0f) * 4
    if not struct.unpack('!H', inner[6:8])[0] & 0x1fff:   # no L4 header
        start += 20 if inner[9] == socket.IPPROTO_TCP else 8
    return inner[start:struct.unpack('!H', inner[2:4])[0]]


def quoted_payload6(inner):
    """The payload bytes an ICMPv6 error quotes of an IPv6 packet sent:
    after its extension headers and its UDP or TCP header."""
    if len(inner) < 40:
        return b''
    nexthdr, off, first = inner[6], 40, True
    while nexthdr in (0, 43, 44, 60) and off + 8 <= len(inner):
        if nexthdr == 44:
            first = not struct.unpack('!H', inner[off + 2:off + 4])[0] & 0xfff8
            nexthdr, off = inner[off], off + 8
        else:
            nexthdr, off = inner[off], off + (inner[off + 1] + 1) * 8
    if first:
        off += 20 if nexthdr == socket.IPPROTO_TCP else 8
    return inner[off:]


def frag4_datagrams(wire, src, dst, port, count, overlap):
    data = bytes([FILL]) * 3000
    for i in range(count):
        dgram = udp(lambda n: pseudo4(src, dst, socket.IPPROTO_UDP, n),
                    41000 + i, port, data)
        ident = random.randint(1, 0xffff)
        step = 1480
        offsets = list(range(0, len(dgram), step))
        if overlap:
            offsets.insert(2, step - 8 * 8)       # rewrites 64 bytes
        for off in offsets:
            piece = dgram[off:off + step]
            more = off + len(piece) < len(dgram)
            wire.send(ETH_P_IP, ipv4(src, dst, socket.IPPROTO_UDP, piece,
                                     ident, off, more))


def frag6_datagrams(wire, src, dst, port, count):
    data = bytes([FILL]) * 3000
    for i in range(count):
        dgram = udp(lambda n: pseudo6(src, dst, socket.IPPROTO_UDP, n),
                    42000 + i, port, data)
        ident = random.randint(1, 0xffffffff)
        step = 1448
        for off in range(0, len(dgram), step):
            piece = dgram[off:off + step]
            more = off + len(piece) < len(dgram)
            fraghdr = struct.pack('!BBHI', socket.IPPROTO_UDP, 0,
                                  off | int(more), ident)
            wire.send(ETH_P_IPV6, ipv6(src, dst, 44, fraghdr + piece))


def exthdr6_datagrams(wire, src, dst, port, count):
    data = bytes([FILL]) * 1000
    for i in range(count):
        dgram = udp(lambda n: pseudo6(src, dst, socket.IPPROTO_UDP, n),
                    43000 + i, port, data)
        # hop-by-hop (PadN), then destination options (PadN), then UDP
        hbh = struct.pack('!BB', 60, 0) + bytes([1, 4, 0, 0, 0, 0])
        dst_opts = struct.pack('!BB', socket.IPPROTO_UDP, 0) + \
            bytes([1, 4, 0, 0, 0, 0])
        wire.send(ETH_P_IPV6, ipv6(src, dst, 0, hbh + dst_opts + dgram))


def tcp_segments(wire, src, dst, dport, count, flags, bad_csum, sport=0,
                 seq=None, ack=0):
    data = bytes([FILL]) * 1000
    pseudo = lambda n: pseudo4(src, dst, socket.IPPROTO_TCP, n)
    for i in range(count):
        segment = tcp(pseudo, sport or 44000 + i, dport,
                      random.getrandbits(32) if seq is None else seq, ack,
                      flags, data, bad_csum)
        wire.send(ETH_P_IP, ipv4(src, dst, socket.IPPROTO_TCP, segment))


def out_of_window(wire, src, dst, port, count):
    """Segments far out of the window of an established connection."""
    conn = socket.create_connection((dst, port), timeout=5 * SCALE)
    sport = conn.getsockname()[1]
    for _ in range(count):
        tcp_segments(wire, src, dst, port, 1, TCP_ACK | TCP_PSH, False,
                     sport, random.getrandbits(32), random.getrandbits(32))
    conn.sendall(b'alive')
    conn.close()


def frames(iface, dstmac, src4, dst4, src6, dst6, port, tcpport, holdport,
           vlandst4):
    wire = Wire(iface, dstmac)
    # first: the listener on HOLDPORT keeps its connections for a while only
    out_of_window(wire, src4, dst4, holdport, 20)
    frag4_datagrams(wire, src4, dst4, port, 10, False)
    frag4_datagrams(wire, src4, dst4, port, 5, True)
    frag6_datagrams(wire, src6, dst6, port, 10)
    exthdr6_datagrams(wire, src6, dst6, port + 100, 10)   # a closed port
    tcp_segments(wire, src4, dst4, tcpport, 20, TCP_ACK | TCP_PSH, True)
    tcp_segments(wire, src4, dst4, tcpport, 10, TCP_SYN, False)
    tcp_segments(wire, src4, dst4, tcpport, 10, TCP_RST, False)
    vlan_src = vlandst4.rsplit('.', 1)[0] + '.2'
    for i in range(10):
        dgram = udp(lambda n: pseudo4(vlan_src, vlandst4, socket.IPPROTO_UDP,
                                      n), 45000 + i, 33000 + i,
                    bytes([FILL]) * 1000)
        wire.send(ETH_P_IP, ipv4(vlan_src, vlandst4, socket.IPPROTO_UDP,
                                 dgram), vlan=100)
    # reassembly timeouts (the server's are one second) send time
    # exceeded errors quoting the first fragment
    wire.drain(4 * SCALE)
    print(f'frames_sent: {wire.sent}')
    print(f'icmp_errors: {sum(wire.icmp_errors.values())}')
    print(f'vlan_icmp_errors: {wire.icmp_errors.get(vlandst4, 0)}')
    print(f'foreign_bytes: {wire.foreign}')
    return 0 if not wire.foreign else 1


def hold(port, seconds):
    """Accept connections and keep them, unread, for SECONDS or until
    SIGTERM, then print how many there were."""
    stop = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(('0.0.0.0', port))
    lsock.listen(8)
    print('listening', flush=True)
    conns = []
    deadline = time.time() + seconds * SCALE
    while not stop and time.time() < deadline:
        ready, _, _ = select.select([lsock], [], [], 0.2)
        if ready:
            conns.append(lsock.accept()[0])
    print(f'accepted: {len(conns)}')
    return 0


def stream_socket(mode, family=socket.AF_INET):
    proto = IPPROTO_MPTCP if mode == 'mptcp' else socket.IPPROTO_TCP
    return socket.socket(family, socket.SOCK_STREAM, proto)


def ktls_rx(conn):
    """kTLS receive on CONN: TLS 1.2, AES-GCM-128, key, IV and salt zero."""
    conn.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b'tls')
    info = struct.pack('<HH', TLS_1_2_VERSION, TLS_CIPHER_AES_GCM_128)
    info += bytes(8 + 16 + 4 + 8)         # iv, key, salt, rec_seq
    conn.setsockopt(SOL_TLS, TLS_RX, info)


def stream_recv(mode, port, seconds):
    lsock = stream_socket(mode)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(('0.0.0.0', port))
    lsock.listen(1)
    lsock.settimeout(seconds * SCALE)
    print('listening', flush=True)
    try:
        conn = lsock.accept()[0]
    except OSError:
        print('error: no connection')
        return 1
    if mode == 'ktls':
        ktls_rx(conn)
    conn.settimeout(seconds * SCALE)
    got, foreign, error = 0, 0, 'none'
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            got += len(data)
            foreign += sum(1 for b in data if b != FILL)
    except OSError as e:
        error = errno.errorcode.get(e.errno, 'timeout') if e.errno else \
            'timeout'
    print(f'bytes: {got}')
    print(f'foreign_bytes: {foreign}')
    print(f'error: {error}')
    return 0


def wait_for_file(path, seconds):
    deadline = time.time() + seconds * SCALE
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)


def wait_acked(sock, seconds):
    """Waits until the peer has acknowledged all SOCK sent (SIOCOUTQ 0)."""
    deadline = time.time() + seconds * SCALE
    while time.time() < deadline:
        if struct.unpack('i', fcntl.ioctl(sock, SIOCOUTQ, bytes(4)))[0] == 0:
            return True
        time.sleep(0.05)
    return False


def stream_send(mode, dst, port, size, gate=None):
    sock = stream_socket(mode, family_of(dst))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(10 * SCALE)
    sock.connect((dst, port))
    time.sleep(0.5)                       # the receiver arms kTLS first
    try:
        if mode == 'ktls':
            first = 40
            sock.sendall(struct.pack('!BHH', 23, TLS_1_2_VERSION, size) +
                         bytes([FILL]) * first)
        else:
            first = 100
            sock.sendall(bytes([FILL]) * first)
        if wait_acked(sock, 10):
            print('first part acked', flush=True)
        if gate:
            wait_for_file(gate, 30)
        else:
            time.sleep(0.3)
        sock.sendall(bytes([FILL]) * (size - first))
        time.sleep(1)
    except OSError as e:
        print(f'send: {errno.errorcode.get(e.errno, e.errno)}')
    sock.close()
    print(f'sent: {size}')
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == 'closed':
        return closed(argv[2], int(argv[3]), int(argv[4]))
    if len(argv) in (6, 7) and argv[1] == 'send':
        return send(argv[2], int(argv[3]), int(argv[4]), int(argv[5]),
                    int(argv[6]) if len(argv) == 7 else 0)
    if len(argv) in (4, 5) and argv[1] == 'recv':
        return recv(int(argv[2]), float(argv[3]),
                    int(argv[4]) if len(argv) == 5 else 0)
    if len(argv) == 12 and argv[1] == 'frames':
        return frames(*argv[2:8], int(argv[8]), int(argv[9]), int(argv[10]),
                      argv[11])
    if len(argv) == 4 and argv[1] == 'hold':
        return hold(int(argv[2]), float(argv[3]))
    if len(argv) == 5 and argv[1] == 'stream-recv':
        return stream_recv(argv[2], int(argv[3]), float(argv[4]))
    if len(argv) in (6, 7) and argv[1] == 'stream-send':
        return stream_send(argv[2], argv[3], int(argv[4]), int(argv[5]),
                           argv[6] if len(argv) == 7 else None)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
