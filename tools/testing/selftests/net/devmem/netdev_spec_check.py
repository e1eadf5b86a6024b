#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the kernel's netdev netlink family against its YAML spec.

Reads Documentation/netlink/specs/netdev.yaml (installed next to this
script as netdev.yaml), issues every do and dump operation the spec lists,
and checks every attribute of every answer: it must belong to the
operation's attribute set, be listed among the operation's reply
attributes, and have the size of the type the spec gives (nests are
checked against their nested set). Operations that change state (bind-rx,
bind-tx) are issued without their attributes and must be refused with
EINVAL, not EOPNOTSUPP. Prints one TAP line per check and exits 1 when one
failed.

Usage: netdev_spec_check.py [SPEC] [IFNAME]
IFNAME (default: the first igb interface) gets tcp-data-split on (through
dmctl, next to this script) while the check runs, so that it has page
pools and NAPI instances to report.
"""

import errno
import os
import socket
import struct
import subprocess
import sys

import yaml

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLM_F_REQUEST = 0x1
NLM_F_ACK = 0x4
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLA_TYPE_MASK = 0x3FFF
NLA_F_NESTED = 0x8000

# Bytes an attribute of each spec type holds; None: any length.
TYPE_SIZES = {
    'u8': (1,), 'u16': (2,), 'u32': (4,), 's32': (4,), 'u64': (8,),
    's64': (8,), 'uint': (4, 8), 'sint': (4, 8), 'flag': (0,),
    'string': None, 'binary': None, 'nest': None, 'pad': None,
}


def nla(attr_type, payload):
    """One netlink attribute, padded to 4 bytes."""
    length = 4 + len(payload)
    return (struct.pack('=HH', length, attr_type) + payload +
            b'\0' * (-length % 4))


def nla_u32(attr_type, value):
    return nla(attr_type, struct.pack('=I', value))


def parse_attrs(data):
    """(type, payload) of each attribute in data."""
    off = 0
    while off + 4 <= len(data):
        length, attr_type = struct.unpack_from('=HH', data, off)
        if length < 4 or off + length > len(data):
            raise ValueError(f'bad attribute length {length} at {off}')
        yield attr_type, data[off + 4:off + length]
        off += (length + 3) & ~3


class Genl:
    """A generic netlink socket talking to one family."""

    def __init__(self, family):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  NETLINK_GENERIC)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        # an answer that never comes fails the check, not the harness
        self.sock.settimeout(60)
        self.sock.bind((0, 0))
        self.seq = 0
        self.family = GENL_ID_CTRL
        err, replies = self.request(CTRL_CMD_GETFAMILY,
                                    nla(CTRL_ATTR_FAMILY_NAME,
                                        family.encode() + b'\0'))
        if err:
            raise OSError(-err, f'family {family}')
        for attr_type, payload in parse_attrs(replies[0][1]):
            if attr_type == CTRL_ATTR_FAMILY_ID:
                self.family = struct.unpack('=H', payload)[0]

    def request(self, cmd, attrs=b'', dump=False):
        """Send a request; return (errno or 0, [(cmd, attrs) answers])."""
        self.seq += 1
        flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else NLM_F_ACK)
        body = struct.pack('=BBH', cmd, 1, 0) + attrs
        self.sock.send(struct.pack('=IHHII', 16 + len(body), self.family,
                                   flags, self.seq, 0) + body)
        replies = []
        while True:
            data = self.sock.recv(1 << 20)
            off = 0
            while off + 16 <= len(data):
                length, msg_type, _, seq, _ = struct.unpack_from('=IHHII',
                                                                 data, off)
                payload = data[off + 16:off + length]
                off += (length + 3) & ~3
                if seq != self.seq:
                    continue
                if msg_type in (NLMSG_ERROR, NLMSG_DONE):
                    return struct.unpack_from('=i', payload)[0], replies
                replies.append((payload[0], payload[4:]))


class Spec:
    """The attribute sets and operations of a YAML spec."""

    def __init__(self, path):
        with open(path, encoding='utf-8') as f:
            doc = yaml.safe_load(f)
        self.sets = {}
        plain = {s['name']: s for s in doc['attribute-sets']}
        for name, aset in plain.items():
            base = plain[aset['subset-of']] if 'subset-of' in aset else aset
            by_name = {a['name']: a for a in base['attributes']}
            attrs = {}
            for a in aset['attributes']:
                full = by_name[a['name']]
                attrs[full['value']] = full
            self.sets[name] = attrs
        self.ops = doc['operations']['list']

    def reply_names(self, op):
        names = set()
        for kind in ('do', 'dump'):
            reply = op.get(kind, {}).get('reply', {})
            names.update(reply.get('attributes', []))
        return names


class Checker:
    """Runs the checks and prints TAP lines."""

    def __init__(self, spec):
        self.spec = spec
        self.count = 0
        self.failed = 0

    def result(self, ok, what):
        self.count += 1
        if not ok:
            self.failed += 1
        print(f'{"ok" if ok else "not ok"} {self.count} {what}')

    def check_attrs(self, set_name, data, allowed, where):
        """Problems of the attributes in data, checked against set_name."""
        problems = []
        aset = self.spec.sets[set_name]
        for attr_type, payload in parse_attrs(data):
            value = attr_type & NLA_TYPE_MASK
            spec_attr = aset.get(value)
            if spec_attr is None:
                problems.append(f'{where}: attribute {value} is not in set '
                                f'{set_name}')
                continue
            name = spec_attr['name']
            if allowed is not None and name not in allowed:
                problems.append(f'{where}: {name} is not a reply attribute')
            sizes = TYPE_SIZES[spec_attr['type']]
            if sizes is not None and len(payload) not in sizes:
                problems.append(f'{where}: {name} has {len(payload)} bytes, '
                                f'{spec_attr["type"]} wants {sizes}')
            if spec_attr['type'] == 'nest':
                problems += self.check_attrs(spec_attr['nested-attributes'],
                                             payload, None,
                                             f'{where}/{name}')
        return problems

    def check_answers(self, op, replies, what):
        allowed = self.spec.reply_names(op)
        problems = []
        for cmd, data in replies:
            if cmd != op['value']:
                problems.append(f'{what}: answer has command {cmd}')
            problems += self.check_attrs(op['attribute-set'], data, allowed,
                                         what)
        for p in problems:
            print(f'# {p}')
        self.result(not problems, f'{what}: {len(replies)} answers match '
                    'the spec')


def first_value(replies, attr_value, nested=None):
    """A value of attribute attr_value in the first answer that has it."""
    for _, data in replies:
        for attr_type, payload in parse_attrs(data):
            if (attr_type & NLA_TYPE_MASK) != attr_value:
                continue
            if nested is None:
                return payload
            for inner_type, inner in parse_attrs(payload):
                if (inner_type & NLA_TYPE_MASK) == nested:
                    return inner
    return None


def values(spec, set_name):
    """Attribute numbers of a set by name."""
    return {a['name']: v for v, a in spec.sets[set_name].items()}


def do_request(spec, op, dumps):
    """Attributes of a do request built from the op's dump answers."""
    name = op['name']
    attrs = values(spec, op['attribute-set'])
    answers = dumps.get(name, [])
    if name == 'dev-get':
        ifindex = first_value(answers, attrs['ifindex'])
        return ifindex and nla(attrs['ifindex'], ifindex)
    if name in ('page-pool-get', 'napi-get'):
        ident = first_value(answers, attrs['id'])
        return ident and nla(attrs['id'], ident)
    if name == 'queue-get':
        parts = [first_value(answers, attrs[n]) for n in
                 ('ifindex', 'type', 'id')]
        if None in parts:
            return None
        return b''.join(nla(attrs[n], p) for n, p in
                        zip(('ifindex', 'type', 'id'), parts))
    if name == 'page-pool-stats-get':
        pool = values(spec, 'page-pool')
        ident = first_value(answers, attrs['info'], pool['id'])
        return ident and nla(attrs['info'] | NLA_F_NESTED,
                             nla(pool['id'], ident))
    return None


def find_igb():
    for ifname in sorted(os.listdir('/sys/class/net')):
        driver = f'/sys/class/net/{ifname}/device/driver'
        if os.path.islink(driver) and \
           os.path.basename(os.readlink(driver)) == 'igb':
            return ifname
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    spec_path = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(here, 'netdev.yaml')
    ifname = sys.argv[2] if len(sys.argv) > 2 else find_igb()
    spec = Spec(spec_path)
    checker = Checker(spec)
    genl = Genl('netdev')

    # Debian 12's ethtool cannot set tcp-data-split: dmctl does it through
    # ethtool netlink
    dmctl = os.path.join(here, 'dmctl')
    if ifname:
        was_up = 'UP' in subprocess.run(
            ['ip', '-o', 'link', 'show', ifname], check=True,
            capture_output=True, text=True).stdout.split('>')[0]
        split_before = subprocess.run(
            [dmctl, 'data-split', ifname], check=True, capture_output=True,
            text=True).stdout.strip()
        subprocess.run(['ip', 'link', 'set', ifname, 'up'], check=True)
        subprocess.run([dmctl, 'data-split', ifname, 'on'], check=True)
    try:
        dumps = {}
        for op in spec.ops:
            if 'dump' in op:
                err, replies = genl.request(op['value'], dump=True)
                checker.result(err == 0, f'{op["name"]} dump: errno {-err}')
                checker.check_answers(op, replies, f'{op["name"]} dump')
                dumps[op['name']] = replies
        qstats = next(op for op in spec.ops if op['name'] == 'qstats-get')
        scope = values(spec, 'qstats')['scope']
        err, replies = genl.request(qstats['value'], nla_u32(scope, 1),
                                    dump=True)
        checker.result(err == 0 and bool(replies),
                       f'qstats-get dump per queue: errno {-err}')
        checker.check_answers(qstats, replies, 'qstats-get dump per queue')

        for op in spec.ops:
            if 'do' not in op:
                continue
            if op['name'] in ('bind-rx', 'bind-tx'):
                err, _ = genl.request(op['value'])
                checker.result(err == -errno.EINVAL,
                               f'{op["name"]} without attributes: errno '
                               f'{-err} (want EINVAL)')
                continue
            request = do_request(spec, op, dumps)
            checker.result(request is not None,
                           f'{op["name"]} do: a request from the dump')
            if request is None:
                continue
            err, replies = genl.request(op['value'], request)
            checker.result(err == 0 and len(replies) == 1,
                           f'{op["name"]} do: errno {-err}')
            checker.check_answers(op, replies, f'{op["name"]} do')
    finally:
        if ifname:
            if split_before != 'on':
                subprocess.run([dmctl, 'data-split', ifname, 'off'],
                               check=False)
            if not was_up:
                subprocess.run(['ip', 'link', 'set', ifname, 'down'],
                               check=False)
    print(f'# {checker.count - checker.failed} of {checker.count} checks '
          'passed')
    return 1 if checker.failed else 0


if __name__ == '__main__':
    sys.exit(main())
