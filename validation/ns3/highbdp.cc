// highbdp.cc: paper 002's high-BDP dumbbell (experiments/highbdp) in
// ns-3 3.37, for the side-by-side check in docs/high-bdp.md.
//
// 10 long bulk flows (flow 0 at t = 0, the others at uniform random times
// in [0, 5 s), or at --starts: ours' times, so that both simulators run
// the same instance), 3 short bulk transfers of share·capacity·duration bytes at
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

#include "common.h"

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
  std::string starts;
  cmd.AddValue("starts", "comma-separated start times (s) of the long flows, instead of ns-3's draws (ours: Scenario.LongStarts)", starts);
  cmd.Parse(argc, argv);
  RngSeedManager::SetRun(seed);

  const uint32_t segment = 1460, nLong = 10, nShort = 3;
  const double shortShare[nShort] = {0.005, 0.01, 0.015}, shortStart[nShort] = {0.2, 0.4, 0.6};
  DataRate br(bottleneck);
  double bdpBytes = br.GetBitRate() * 0.114 / 8;
  pcong::TcpDefaults td;
  td.socketType = "ns3::TcpNewReno";
  td.segment = segment;
  td.buffer = std::max<uint32_t>(4 << 20, uint32_t(2 * bdpBytes));
  td.initialCwnd = 2;
  td.initialSsthresh = 65535;
  td.delack = delack;
  td.delackTimeout = MilliSeconds(100);
  td.minRto = MilliSeconds(200);
  td.sack = td.timestamps = false;
  pcong::SetTcpDefaults(td);

  pcong::DumbbellSpec spec;
  spec.flows = nLong + nShort;
  spec.accessDelay = MilliSeconds(2);
  spec.bottleneckRate = bottleneck;
  spec.bottleneckDelay = MilliSeconds(53);
  spec.fwd.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(queue) + "p"));
  spec.reversePackets = 100000;
  pcong::Dumbbell d = pcong::BuildDumbbell(spec);
  d.core.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBneckTx));

  // The draws happen either way, so that --starts changes nothing else.
  std::vector<double> given;
  for (size_t p = 0; p < starts.size();) {
    size_t q = starts.find(',', p);
    if (q == std::string::npos) q = starts.size();
    given.push_back(std::stod(starts.substr(p, q - p)));
    p = q + 1;
  }
  if (!given.empty() && given.size() != nLong) {
    std::fprintf(stderr, "--starts: want %u values, got %zu\n", nLong, given.size());
    return 2;
  }
  Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < spec.flows; i++) {
    double start = 0;
    uint64_t maxBytes = 0;
    if (i > 0 && i < nLong) start = u->GetValue(0, 5);
    if (i < nLong && i < given.size()) start = given[i];
    if (i >= nLong) {
      start = shortStart[i - nLong] * duration;
      maxBytes = uint64_t(br.GetBitRate() / 8.0 * duration * shortShare[i - nLong] * shareScale);
    }
    sinks.push_back(pcong::InstallBulk(d, i, segment, Seconds(start), maxBytes).sink);
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
