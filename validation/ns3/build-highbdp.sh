#!/bin/sh
# Builds highbdp.cc (paper 002's dumbbell, docs/high-bdp.md) like
# build.sh builds dumbbell.cc. Output: $OUT (default bin/ns3) /highbdp.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/../../bin/ns3}
mkdir -p "$out"
if ! pkg-config --exists ns3-core; then
	echo "ns-3 not installed: apt-get install libns3-dev libgsl-dev libsqlite3-dev libxml2-dev g++" >&2
	exit 1
fi
# shellcheck disable=SC2046
g++ -O2 -std=c++17 -I"$here" "$here/highbdp.cc" -o "$out/highbdp" $(pkg-config --cflags --libs ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control)
echo "$out/highbdp"
