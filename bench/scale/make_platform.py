#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes a SimGrid platform (XML) and a host file for the scaling study.

  make_platform.py fattree   P --speed 40Gf --bw 25GBps --lat 1us  OUT.xml OUT.hosts
  make_platform.py dragonfly P --speed 40Gf --bw 25GBps --lat 1us  OUT.xml OUT.hosts
  make_platform.py local     P --cores 2 --speed 20Gf --bw 5GBps --lat 1us OUT.xml OUT.hosts

fattree: a non-blocking two-level fat tree (leaf switches of up to 32 nodes, as many spine
switches as nodes per leaf: SimGrid FAT_TREE "2;d1,d2;1,d1;1,1"), one rank per node.
dragonfly: SimGrid DRAGONFLY with 4 nodes per router, up to 8 routers per chassis, up to 4
chassis per group, 1 link between each pair, as many groups as needed.
local: this machine as `cores` single-core hosts joined by links of the measured shared-memory
bandwidth and latency; P ranks are dealt round-robin over the cores, so oversubscribed ranks
share a core's speed as they do here.
"""
import argparse


def fat_tree(p):
    d1 = 1
    while d1 * 2 <= 32 and p % (d1 * 2) == 0 and d1 * 2 <= p:
        d1 *= 2
    d2 = p // d1
    return "2;%d,%d;1,%d;1,1" % (d1, d2, d1)


def dragonfly(p):
    nodes = min(4, p)
    rest = p // nodes
    routers = min(8, rest)
    rest //= routers
    chassis = min(4, rest)
    groups = max(1, rest // chassis)
    assert groups * chassis * routers * nodes == p, "P must be a power of 2"
    return "%d,1;%d,1;%d,1;%d" % (groups, chassis, routers, nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("topology", choices=["fattree", "dragonfly", "local"])
    ap.add_argument("P", type=int)
    ap.add_argument("xml")
    ap.add_argument("hosts")
    ap.add_argument("--speed", default="40Gf", help="node rate (flops/s) of one rank's host")
    ap.add_argument("--bw", default="25GBps", help="link bandwidth (200 Gb/s = 25GBps)")
    ap.add_argument("--lat", default="1us", help="link latency")
    ap.add_argument("--cores", type=int, default=2, help="local: cores of this machine")
    a = ap.parse_args()
    out = ["<?xml version='1.0'?>",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">']
    if a.topology == "local":
        nh = a.cores
        out.append('  <cluster id="local" prefix="node-" suffix="" radical="0-%d" speed="%s" '
                   'bw="%s" lat="%s" loopback_bw="%s" loopback_lat="%s"/>'
                   % (nh - 1, a.speed, a.bw, a.lat, a.bw, a.lat))
        hosts = ["node-%d" % (r % nh) for r in range(a.P)]
    else:
        topo = "FAT_TREE" if a.topology == "fattree" else "DRAGONFLY"
        par = fat_tree(a.P) if a.topology == "fattree" else dragonfly(a.P)
        out.append('  <cluster id="%s" prefix="node-" suffix="" radical="0-%d" speed="%s" '
                   'bw="%s" lat="%s" loopback_bw="100GBps" loopback_lat="0.1us" '
                   'topology="%s" topo_parameters="%s"/>'
                   % (a.topology, a.P - 1, a.speed, a.bw, a.lat, topo, par))
        hosts = ["node-%d" % r for r in range(a.P)]
    out.append("</platform>")
    with open(a.xml, "w") as f:
        f.write("\n".join(out) + "\n")
    with open(a.hosts, "w") as f:
        f.write("\n".join(hosts) + "\n")


if __name__ == "__main__":
    main()
