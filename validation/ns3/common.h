// common.h: the setup dumbbell.cc and highbdp.cc share (ns-3 3.37): the
// TCP defaults both set explicitly, the dumbbell topology and the bulk
// flows. Header-only (each program is one translation unit, built by
// build.sh / build-highbdp.sh with -I on this directory).
//
// The topology: N senders -> access links -> r1 -> bottleneck -> r2 ->
// access links -> N receivers. The bottleneck device's own queue is one
// packet so that the queue disc on r1's device holds the queue, as our
// qdisc does; the reverse direction (ACKs) gets a large FIFO. The order
// of node creation, device installation and address assignment fixes
// ns-3's interface indices and random-stream assignment: keep it.
#ifndef PSEUDOCONG_NS3_COMMON_H
#define PSEUDOCONG_NS3_COMMON_H

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

namespace pcong {

using namespace ns3;

// TcpDefaults are the TCP settings that differ between ns-3's defaults and
// ours; SetTcpDefaults sets every one explicitly.
struct TcpDefaults {
  std::string socketType;  // ns3::TcpNewReno, ...
  uint32_t segment = 1448; // payload bytes per segment
  uint32_t buffer = 4 << 20;
  uint32_t initialCwnd = 10;
  uint32_t initialSsthresh = 0; // 0: ns-3's default (unlimited)
  bool delack = true;           // every 2 segments, else every segment
  Time delackTimeout = MilliSeconds(200);
  Time connTimeout = Seconds(3);
  Time minRto = Seconds(1);
  bool sack = true, timestamps = true;
};

inline void SetTcpDefaults(const TcpDefaults &d) {
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(d.socketType)));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(d.segment));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(d.buffer));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(d.buffer));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(d.initialCwnd));
  if (d.initialSsthresh) Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(d.initialSsthresh));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(d.delack ? 2 : 1));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(d.delackTimeout));
  Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(d.connTimeout));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(d.minRto));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(d.sack));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(d.timestamps));
  Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false)); // we have none
}

// DumbbellSpec describes the topology; fwd is the queue disc on r1's
// bottleneck device (the queue under test).
struct DumbbellSpec {
  uint32_t flows = 1;
  std::string accessRate = "1Gbps";
  Time accessDelay;
  std::string bottleneckRate;
  Time bottleneckDelay;
  TrafficControlHelper fwd;
  uint32_t reversePackets = 1000; // FIFO on r2's bottleneck device
};

struct Dumbbell {
  NodeContainer senders, receivers, routers;
  NetDeviceContainer core; // core.Get(0): r1's bottleneck device
  std::vector<Ipv4Address> rcvAddr;
};

inline Dumbbell BuildDumbbell(DumbbellSpec &spec) {
  Dumbbell d;
  d.senders.Create(spec.flows);
  d.receivers.Create(spec.flows);
  d.routers.Create(2);
  InternetStackHelper stack;
  stack.InstallAll();

  PointToPointHelper acc;
  acc.SetDeviceAttribute("DataRate", StringValue(spec.accessRate));
  acc.SetChannelAttribute("Delay", TimeValue(spec.accessDelay));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
  PointToPointHelper bn;
  bn.SetDeviceAttribute("DataRate", StringValue(spec.bottleneckRate));
  bn.SetChannelAttribute("Delay", TimeValue(spec.bottleneckDelay));
  bn.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p")); // the qdisc holds the queue

  d.core = bn.Install(d.routers.Get(0), d.routers.Get(1));
  // Before the addresses: Ipv4AddressHelper::Assign installs a default
  // qdisc on a device that has none.
  spec.fwd.Install(d.core.Get(0));
  TrafficControlHelper rev;
  rev.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(spec.reversePackets) + "p"));
  rev.Install(d.core.Get(1));
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.0");
  addr.Assign(d.core);
  for (uint32_t i = 0; i < spec.flows; i++) {
    NetDeviceContainer a = acc.Install(d.senders.Get(i), d.routers.Get(0));
    NetDeviceContainer b = acc.Install(d.routers.Get(1), d.receivers.Get(i));
    std::string n1 = "10.1." + std::to_string(i) + ".0", n2 = "10.2." + std::to_string(i) + ".0";
    addr.SetBase(n1.c_str(), "255.255.255.0");
    addr.Assign(a);
    addr.SetBase(n2.c_str(), "255.255.255.0");
    d.rcvAddr.push_back(addr.Assign(b).GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  return d;
}

// Bulk is one flow's applications.
struct Bulk {
  Ptr<PacketSink> sink;
  Ptr<BulkSendApplication> app;
};

// InstallBulk starts a sink on receiver i at 0 and a bulk sender on sender
// i at start, sending maxBytes (0: unlimited) in writes of sendSize.
inline Bulk InstallBulk(Dumbbell &d, uint32_t i, uint32_t sendSize, Time start, uint64_t maxBytes) {
  const uint16_t port = 5001;
  PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sa = sh.Install(d.receivers.Get(i));
  sa.Start(Seconds(0));
  BulkSendHelper bh("ns3::TcpSocketFactory", InetSocketAddress(d.rcvAddr[i], port));
  bh.SetAttribute("MaxBytes", UintegerValue(maxBytes));
  bh.SetAttribute("SendSize", UintegerValue(sendSize));
  ApplicationContainer ba = bh.Install(d.senders.Get(i));
  ba.Start(start);
  return Bulk{DynamicCast<PacketSink>(sa.Get(0)), DynamicCast<BulkSendApplication>(ba.Get(0))};
}

} // namespace pcong

#endif
