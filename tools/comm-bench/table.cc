#include "table.h"

#include <cstdio>

#include <fmt/format.h>

#include "units.h"

namespace commbench {
namespace {

std::string timeCell(double us) { return us < 1e5 ? fmt::format("{:9.2f}", us) : fmt::format("{:9.0f}", us); }

std::string cells(const std::optional<Measurement>& m, size_t bytes, double busFactor) {
  if (!m) return fmt::format(" {:>9} {:>7} {:>7} {:>7}", "n/a", "n/a", "n/a", "n/a");
  double alg = algbw(bytes, m->timeUs);
  std::string wrong = m->wrong ? fmt::format("{}", *m->wrong) : "N/A";
  return fmt::format(" {} {:7.2f} {:7.2f} {:>7}", timeCell(m->timeUs), alg, alg * busFactor, wrong);
}

std::string busFactorText(const Collective& c, int ranks) {
  if (!c.sized) return "0 (no data)";
  return fmt::format("{} = {:.3f}", c.busFactorFormula, c.busFactor(ranks));
}

// How the calls are made and timed.
const char* callsText(const Options& o) {
  if (o.stream) {
    return o.async ? "stream-ordered calls with a handle (timed to the handle and the stream)"
                   : "stream-ordered calls (timed until the stream has passed each)";
  }
  return o.async ? "asynchronous calls (handle + wait)" : "blocking calls";
}

}  // namespace

const char* opColumn(const Row& row) { return row.op ? comm_op_name(*row.op) : "none"; }

void Table::printHeader() const {
  const Options& o = run_.options;
  fmt::print("# comm-bench {}: {} ranks, comm {}, provider {}, {} memory\n", run_.collective.name, run_.ranks,
             comm_version_string(), run_.provider, o.memory == COMM_MEMORY_CUDA ? "CUDA device" : "host");
  std::string iterations = o.iterations ? fmt::format("{} timed iterations", *o.iterations)
                                        : std::string("auto timed iterations (256 MiB per size, 10..1000)");
  fmt::print("# {}; sizes {}; {} after {} warm-up, per size and placement; check {}\n", callsText(o), o.sizesText,
             iterations, o.warmup, o.check ? "on" : "off");
  fmt::print("# time: median of the timed iterations' per-iteration times, {}{}\n", aggregateName(o.aggregate),
             o.aggregate == Aggregate::kRank0 ? "" : " (each rank's median)");
  fmt::print("# algbw = size / time, busbw = algbw x {} (nccl-tests); GB/s = 1e9 B/s\n",
             busFactorText(run_.collective, run_.ranks));
  fmt::print("#\n");
  fmt::print("# {:49}  {:^33}  {:^33}\n", "", "out-of-place", "in-place");
  fmt::print("# {:>10} {:>12} {:>10} {:>7} {:>6}  {:>9} {:>7} {:>7} {:>7}  {:>9} {:>7} {:>7} {:>7}\n", "size", "count",
             "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  fmt::print("# {:>10} {:>12} {:>10} {:>7} {:>6}  {:>9} {:>7} {:>7} {:>7}  {:>9} {:>7} {:>7} {:>7}\n", "(B)",
             "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  std::fflush(stdout);
}

void Table::printRow(const Row& row) const {
  double factor = run_.busFactor();
  fmt::print("  {:>10} {:>12} {:>10} {:>7} {:>6} {} {}\n", row.bytes, row.count, comm_dtype_name(row.dtype),
             opColumn(row), row.root, cells(row.outOfPlace, row.bytes, factor), cells(row.inPlace, row.bytes, factor));
  std::fflush(stdout);
}

void Table::printFooter(const std::vector<Row>& rows) const {
  int64_t wrong = 0;
  bool checked = false;
  double busbwSum = 0;
  int measured = 0;
  for (const Row& row : rows) {
    for (const auto* m : {&row.outOfPlace, &row.inPlace}) {
      if (!*m) continue;
      busbwSum += algbw(row.bytes, (*m)->timeUs) * run_.busFactor();
      ++measured;
      if ((*m)->wrong) {
        checked = true;
        wrong += *(*m)->wrong;
      }
    }
  }
  if (checked) {
    fmt::print("# #wrong in total: {} ({})\n", wrong, wrong == 0 ? "OK" : "FAILED");
  } else {
    fmt::print("# #wrong: not checked (-c 0)\n");
  }
  fmt::print("# Avg bus bandwidth: {:.3f} GB/s\n", measured > 0 ? busbwSum / measured : 0.0);
  std::fflush(stdout);
}

}  // namespace commbench
