// highbdp.cc: paper 002's high-BDP dumbbell (experiments/highbdp) in
// ns-3 3.37, for the side-by-side check in docs/high-bdp.md.
//
// 10 long bulk flows (flow 0 at t = 0, the others at uniform random times
// in [0, 5 s)), 3 short bulk transfers of share·capacity·duration bytes at
// 0.2, 0.4, 0.6 of the run, each on its own 1 Gbit/s access links (2 ms)
// to r1 -> bottleneck (53 ms, DropTail of --queue packets) -> r2: base RTT
// 2·(2·2 + 53) = 114 ms. TcpNewReno (ns-3's per-ACK growth, as ns-2's),
// no SACK, no timestamps, segment 1460 B, initial window 2, initial
// ssthresh 65 535 B, delayed ACKs every 2 segments or 100 ms, minimum RTO
// 200 ms. The web flows of our scenario are left out here (ns-3 has no
// object-by-object web source over one connection); the comparison runs
// ours without them too (--web 0). Prints one JSON object.
//
// Build: sh validation/ns3/build-highbdp.sh
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

static uint64_t g_bneckBytes = 0;

static void OnBneckTx(Ptr<const Packet> p) { g_bneckBytes += p->GetSize() - 2; } // less the PPP header

int main(int argc, char *argv[]) {
  std::string bottleneck = "100Mbps";
  double duration = 60, shareScale = 1;
  uint32_t queue = 95, seed = 1;
  bool delack = true;
  CommandLine cmd;
  cmd.AddValue("bottleneck", "bottleneck rate (ns-3 DataRate)", bottleneck);
  cmd.AddValue("duration", "simulated seconds", duration);
  cmd.AddValue("queue", "bottleneck DropTail, packets", queue);
  cmd.AddValue("delack", "delayed ACKs", delack);
  cmd.AddValue("seed", "RNG run number", seed);
  cmd.AddValue("shareScale", "multiplies the short flows' sizes", shareScale);
  cmd.Parse(argc, argv);
  RngSeedManager::SetRun(seed);

  const uint32_t segment = 1460, nLong = 10, nShort = 3;
  const double shortShare[nShort] = {0.005, 0.01, 0.015}, shortStart[nShort] = {0.2, 0.4, 0.6};
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
  DataRate br(bottleneck);
  double bdpBytes = br.GetBitRate() * 0.114 / 8;
  uint32_t buf = std::max<uint32_t>(4 << 20, uint32_t(2 * bdpBytes));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buf));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(65535));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delack ? 2 : 1));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(100)));
  Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(3)));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));

  uint32_t flows = nLong + nShort;
  NodeContainer senders, receivers, routers;
  senders.Create(flows);
  receivers.Create(flows);
  routers.Create(2);
  InternetStackHelper stack;
  stack.InstallAll();

  PointToPointHelper acc;
  acc.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
  acc.SetChannelAttribute("Delay", TimeValue(MilliSeconds(2)));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
  PointToPointHelper bn;
  bn.SetDeviceAttribute("DataRate", StringValue(bottleneck));
  bn.SetChannelAttribute("Delay", TimeValue(MilliSeconds(53)));
  bn.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p")); // the qdisc holds the queue

  NetDeviceContainer core = bn.Install(routers.Get(0), routers.Get(1));
  TrafficControlHelper tch;
  tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(queue) + "p"));
  tch.Install(core.Get(0));
  TrafficControlHelper big;
  big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
  big.Install(core.Get(1));
  core.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBneckTx));
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.0");
  addr.Assign(core);
  std::vector<Ipv4Address> rcvAddr;
  for (uint32_t i = 0; i < flows; i++) {
    NetDeviceContainer a = acc.Install(senders.Get(i), routers.Get(0));
    NetDeviceContainer b = acc.Install(routers.Get(1), receivers.Get(i));
    std::string n1 = "10.1." + std::to_string(i) + ".0", n2 = "10.2." + std::to_string(i) + ".0";
    addr.SetBase(n1.c_str(), "255.255.255.0");
    addr.Assign(a);
    addr.SetBase(n2.c_str(), "255.255.255.0");
    rcvAddr.push_back(addr.Assign(b).GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < flows; i++) {
    PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 5001));
    ApplicationContainer sa = sh.Install(receivers.Get(i));
    sa.Start(Seconds(0));
    sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
    BulkSendHelper bh("ns3::TcpSocketFactory", InetSocketAddress(rcvAddr[i], 5001));
    bh.SetAttribute("SendSize", UintegerValue(segment));
    double start = 0;
    uint64_t maxBytes = 0;
    if (i > 0 && i < nLong) start = u->GetValue(0, 5);
    if (i >= nLong) {
      start = shortStart[i - nLong] * duration;
      maxBytes = uint64_t(br.GetBitRate() / 8.0 * duration * shortShare[i - nLong] * shareScale);
    }
    bh.SetAttribute("MaxBytes", UintegerValue(maxBytes));
    ApplicationContainer ba = bh.Install(senders.Get(i));
    ba.Start(Seconds(start));
  }

  auto wall0 = std::chrono::steady_clock::now();
  Simulator::Stop(Seconds(duration));
  Simulator::Run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  double rx = 0;
  for (auto &s : sinks) rx += double(s->GetTotalRx());
  double capBytes = br.GetBitRate() / 8.0 * duration;
  std::printf("{\"bottleneck\":\"%s\",\"duration_s\":%g,\"queue\":%u,\"utilisation\":%.6f,\"goodput\":%.6f,\"events\":%llu,\"wall_s\":%.3f}\n",
              bottleneck.c_str(), duration, queue, g_bneckBytes / capBytes, rx / capBytes,
              (unsigned long long)Simulator::GetEventCount(), wall);
  Simulator::Destroy();
  return 0;
}
