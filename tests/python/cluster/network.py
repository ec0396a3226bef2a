"""Network partitions between member processes, made with iptables on real connections.

Each member of a test that cuts the network runs on its own loopback address (127.0.0.2,
127.0.0.3, ...: `make_cluster(n, hosts=...)`, each added to the loopback interface) and binds its outgoing member links to it
(`hazelcast.socket.client.bind.any: false`, on both targets), so every packet between two
members carries both members' addresses. `Network.cut(side_a, side_b)` drops, in the INPUT chain,
every packet from one side's addresses to the other's (both ways, or one way); `heal()` drops
nothing again. Clients connect from 127.0.0.1 and are never cut: a test reaches each side with a
unisocket client of its own.

The rules live in a chain of their own (FERROGRID_SPLIT) in this process's network namespace,
which must be a private one (`unshare --net`, as `scripts/test` runs test_split_brain.py): the
tests never touch the machine's own firewall, and all traffic stays on the namespace's loopback
interface (127.0.0.0/8). `private_namespace()` says whether the tests may run here.
"""

import os
import shutil
import socket
import subprocess

CHAIN = "FERROGRID_SPLIT"


def private_namespace():
    """Why the partition tests cannot run here, or None when they can: root, iptables, and a
    private network namespace (one whose only interface is the loopback, as `unshare --net`
    makes it: the machine's own has others)."""
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("iptables") is None:
        return "iptables is not installed (apt-get install iptables)"
    interfaces = [name for _, name in socket.if_nameindex()]
    if interfaces != ["lo"]:
        return "not in a private network namespace (interfaces %s; run under `unshare --net`)" % interfaces
    return None


def _iptables(*args, check=True):
    return subprocess.run(["iptables", "-w", *args], capture_output=True, text=True, check=check)


class Network:
    """The cuts of one test (healed at its end), between members on `hosts`."""

    def __init__(self, hosts):
        # Hazelcast picks its address among the interfaces' addresses: give each its own on
        # the loopback interface (127.0.0.1/8 answers all of them already).
        for host in hosts:
            added = subprocess.run(["ip", "addr", "add", host + "/8", "dev", "lo"], capture_output=True, text=True)
            if added.returncode != 0 and "exists" not in added.stderr and "already assigned" not in added.stderr:
                raise RuntimeError("ip addr add %s: %s" % (host, added.stderr.strip()))
        if _iptables("-L", CHAIN, "-n", check=False).returncode != 0:
            _iptables("-N", CHAIN)
            _iptables("-I", "INPUT", "1", "-j", CHAIN)
        _iptables("-F", CHAIN)
        self.cuts = []

    def cut(self, side_a, side_b, one_way=False):
        """Drops packets from each address of `side_a` to each of `side_b` (and back, unless
        `one_way`)."""
        pairs = [(a, b) for a in side_a for b in side_b]
        if not one_way:
            pairs += [(b, a) for a, b in pairs]
        for source, destination in pairs:
            _iptables("-A", CHAIN, "-s", source, "-d", destination, "-j", "DROP")
        self.cuts.append((tuple(side_a), tuple(side_b), one_way))

    def heal(self):
        """Lets every packet through again."""
        _iptables("-F", CHAIN)
        self.cuts = []

    def rules(self):
        """The chain as iptables lists it (for failure reports)."""
        return _iptables("-S", CHAIN, check=False).stdout
