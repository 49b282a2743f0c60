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

#include "common.h"

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
  pcong::TcpDefaults td;
  td.socketType = TcpType(cc);
  td.segment = segment;
  td.buffer = buffer;
  td.delack = delack;
  td.minRto = Seconds(minRto);
  pcong::SetTcpDefaults(td);
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(ecn ? TcpSocketState::On : TcpSocketState::Off));
  if (cc == "bbr") Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
  if (cc == "dctcp") Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::On));

  pcong::DumbbellSpec spec;
  spec.flows = flows;
  spec.accessRate = access;
  spec.accessDelay = MicroSeconds(int64_t(rttMs * 1000 / 8));
  spec.bottleneckRate = bottleneck;
  spec.bottleneckDelay = MicroSeconds(int64_t(rttMs * 1000 / 2)) - spec.accessDelay - spec.accessDelay;
  spec.reversePackets = std::max(queue, 1000u);
  if (qdisc == "droptail") {
    spec.fwd.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(queue) + "p"));
  } else if (qdisc == "red") {
    spec.fwd.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(std::to_string(queue) + "p"),
                              "MinTh", DoubleValue(std::max(queue / 4.0, 1.0)), "MaxTh", DoubleValue(std::max(queue * 3 / 4.0, 2.0)),
                              "LInterm", DoubleValue(10), "QW", DoubleValue(qw), "MeanPktSize", UintegerValue(segment + 52),
                              "LinkBandwidth", StringValue(bottleneck), "LinkDelay", TimeValue(spec.bottleneckDelay),
                              "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false), "Gentle", BooleanValue(false));
  } else {
    std::fprintf(stderr, "unknown qdisc %s\n", qdisc.c_str());
    return 2;
  }
  pcong::Dumbbell d = pcong::BuildDumbbell(spec);

  g_stats.resize(flows);
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < flows; i++) {
    Time start = MilliSeconds(100 * i);
    pcong::Bulk b = pcong::InstallBulk(d, i, segment, start, 0);
    sinks.push_back(b.sink);
    Simulator::Schedule(start + NanoSeconds(1), &Hook, i, b.app);
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
