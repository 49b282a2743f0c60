// dumbbell.cc: the same dumbbell as `pseudocong tcp dumbbell`, in ns-3 3.37,
// for side-by-side validation (docs/tcp-validation.md).
//
// N senders -> access links (RTT/8) -> r1 -> bottleneck (RTT/4, the queue
// under test on r1's device) -> r2 -> access links (RTT/8) -> N receivers.
// Bulk flows start 100 ms apart. Every default that differs from ours is
// set explicitly (see the Config::SetDefault block). Prints one JSON
// object with the same keys as ours.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

struct FlowStats {
  uint64_t retrans = 0;
  uint64_t timeouts = 0;
  uint32_t maxEnd = 0;
  bool any = false;
};

static std::vector<FlowStats> g_stats;

static void OnTx(uint32_t i, Ptr<const Packet> p, const TcpHeader &h, Ptr<const TcpSocketBase>) {
  uint32_t len = p->GetSize();
  if (len == 0) return;
  FlowStats &s = g_stats[i];
  uint32_t seq = h.GetSequenceNumber().GetValue();
  uint32_t end = seq + len;
  if (s.any && int32_t(end - s.maxEnd) <= 0) {
    s.retrans++;
  } else {
    s.maxEnd = end;
    s.any = true;
  }
}

static void OnCongState(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
  if (now == TcpSocketState::CA_LOSS) g_stats[i].timeouts++;
}

static void Hook(uint32_t i, Ptr<BulkSendApplication> app) {
  Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
  if (!s) {
    std::fprintf(stderr, "flow %u: no TCP socket\n", i);
    std::exit(1);
  }
  s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
  s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
}

static std::string TcpType(const std::string &cc) {
  static const std::map<std::string, std::string> m = {
      {"newreno", "ns3::TcpNewReno"}, {"reno", "ns3::TcpLinuxReno"}, {"cubic", "ns3::TcpCubic"},
      {"bbr", "ns3::TcpBbr"},         {"vegas", "ns3::TcpVegas"},    {"bic", "ns3::TcpBic"},
      {"highspeed", "ns3::TcpHighSpeed"}, {"yeah", "ns3::TcpYeah"},  {"dctcp", "ns3::TcpDctcp"}};
  auto it = m.find(cc);
  if (it == m.end()) {
    std::fprintf(stderr, "unknown cc %s\n", cc.c_str());
    std::exit(2);
  }
  return it->second;
}

int main(int argc, char *argv[]) {
  uint32_t flows = 1, queue = 100, segment = 1448, seed = 1;
  std::string cc = "newreno", bottleneck = "10Mbps", access = "1Gbps", qdisc = "droptail";
  double rttMs = 40, duration = 30, qw = 0.002, minRto = 1.0;
  bool ecn = false, delack = true;
  uint32_t buffer = 4 << 20;
  CommandLine cmd;
  cmd.AddValue("flows", "flows", flows);
  cmd.AddValue("cc", "congestion control (our names)", cc);
  cmd.AddValue("bottleneck", "bottleneck rate (ns-3 DataRate)", bottleneck);
  cmd.AddValue("access", "access rate", access);
  cmd.AddValue("rttMs", "base RTT in ms", rttMs);
  cmd.AddValue("queue", "bottleneck queue, packets", queue);
  cmd.AddValue("qdisc", "droptail or red", qdisc);
  cmd.AddValue("qw", "RED EWMA weight", qw);
  cmd.AddValue("ecn", "ECN on the endpoints", ecn);
  cmd.AddValue("delack", "delayed ACKs", delack);
  cmd.AddValue("duration", "simulated seconds", duration);
  cmd.AddValue("segment", "payload bytes per segment", segment);
  cmd.AddValue("buffer", "socket buffers, bytes", buffer);
  cmd.AddValue("minRto", "minimum RTO, s", minRto);
  cmd.AddValue("seed", "RNG run number", seed);
  cmd.Parse(argc, argv);
  RngSeedManager::SetRun(seed);

  // Defaults that differ between ns-3 and us, set the same on both sides.
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(TcpType(cc))));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buffer));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buffer));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delack ? 2 : 1));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
  Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(3)));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false)); // we have none
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(ecn ? TcpSocketState::On : TcpSocketState::Off));
  if (cc == "bbr") Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
  if (cc == "dctcp") Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::On));

  NodeContainer senders, receivers, routers;
  senders.Create(flows);
  receivers.Create(flows);
  routers.Create(2);
  InternetStackHelper stack;
  stack.InstallAll();

  Time accessDelay = MicroSeconds(int64_t(rttMs * 1000 / 8));
  Time bneckDelay = MicroSeconds(int64_t(rttMs * 1000 / 2)) - accessDelay - accessDelay;
  PointToPointHelper acc;
  acc.SetDeviceAttribute("DataRate", StringValue(access));
  acc.SetChannelAttribute("Delay", TimeValue(accessDelay));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
  PointToPointHelper bn;
  bn.SetDeviceAttribute("DataRate", StringValue(bottleneck));
  bn.SetChannelAttribute("Delay", TimeValue(bneckDelay));
  bn.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p")); // the qdisc holds the queue

  Ipv4AddressHelper addr;
  NetDeviceContainer core = bn.Install(routers.Get(0), routers.Get(1));
  TrafficControlHelper tch;
  if (qdisc == "droptail") {
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(queue) + "p"));
  } else if (qdisc == "red") {
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(std::to_string(queue) + "p"),
                         "MinTh", DoubleValue(std::max(queue / 4.0, 1.0)), "MaxTh", DoubleValue(std::max(queue * 3 / 4.0, 2.0)),
                         "LInterm", DoubleValue(10), "QW", DoubleValue(qw), "MeanPktSize", UintegerValue(segment + 52),
                         "LinkBandwidth", StringValue(bottleneck), "LinkDelay", TimeValue(bneckDelay),
                         "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false), "Gentle", BooleanValue(false));
  } else {
    std::fprintf(stderr, "unknown qdisc %s\n", qdisc.c_str());
    return 2;
  }
  // Before the addresses: Ipv4AddressHelper::Assign installs a default
  // qdisc on a device that has none.
  tch.Install(core.Get(0));
  TrafficControlHelper big;
  big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(std::max(queue, 1000u)) + "p"));
  big.Install(core.Get(1));
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
    Ipv4InterfaceContainer ib = addr.Assign(b);
    rcvAddr.push_back(ib.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  g_stats.resize(flows);
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < flows; i++) {
    uint16_t port = 5001;
    PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sh.Install(receivers.Get(i));
    sa.Start(Seconds(0));
    sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
    BulkSendHelper bh("ns3::TcpSocketFactory", InetSocketAddress(rcvAddr[i], port));
    bh.SetAttribute("MaxBytes", UintegerValue(0));
    bh.SetAttribute("SendSize", UintegerValue(segment));
    ApplicationContainer ba = bh.Install(senders.Get(i));
    Time start = MilliSeconds(100 * i);
    ba.Start(start);
    Simulator::Schedule(start + NanoSeconds(1), &Hook, i, DynamicCast<BulkSendApplication>(ba.Get(0)));
  }

  auto wall0 = std::chrono::steady_clock::now();
  Simulator::Stop(Seconds(duration));
  Simulator::Run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  double total = 0, s = 0, s2 = 0;
  std::printf("{\"flows\":[");
  for (uint32_t i = 0; i < flows; i++) {
    double active = duration - 0.1 * i;
    double bits = double(sinks[i]->GetTotalRx()) * 8;
    double g = active > 0 ? bits / active / 1e6 : 0;
    total += bits;
    s += g;
    s2 += g * g;
    std::printf("%s{\"cc\":\"%s\",\"goodput_mbps\":%.6f,\"retransmits\":%llu,\"timeouts\":%llu}", i ? "," : "", cc.c_str(), g,
                (unsigned long long)g_stats[i].retrans, (unsigned long long)g_stats[i].timeouts);
  }
  DataRate br(bottleneck);
  double util = total / (double(br.GetBitRate()) * duration);
  double jain = s2 > 0 ? s * s / (flows * s2) : 0;
  std::printf("],\"utilisation\":%.6f,\"jain\":%.6f,\"events\":%llu,\"wall_s\":%.6f}\n", util, jain,
              (unsigned long long)Simulator::GetEventCount(), wall);
  Simulator::Destroy();
  return 0;
}
