#include "result_files.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "table.h"

namespace commbench {
namespace {

constexpr const char* kCsvHeader =
    "size,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,"
    "in_place_time_us,in_place_algbw_gbps,in_place_busbw_gbps,in_place_wrong";

std::ofstream openForWriting(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path));
  return out;
}

nlohmann::json measurementJson(const std::optional<Measurement>& m, size_t bytes, double busFactor) {
  if (!m) return nullptr;
  double alg = algbw(bytes, m->timeUs);
  nlohmann::json j = {{"time_us", m->timeUs},    {"algbw_gbps", alg},       {"busbw_gbps", alg * busFactor},
                      {"time_min_us", m->minUs}, {"time_avg_us", m->avgUs}, {"time_max_us", m->maxUs}};
  j["wrong"] = m->wrong ? nlohmann::json(*m->wrong) : nlohmann::json(nullptr);
  return j;
}

std::string csvCells(const std::optional<Measurement>& m, size_t bytes, double busFactor) {
  if (!m) return ",,,";
  double alg = algbw(bytes, m->timeUs);
  return fmt::format("{},{},{},{}", m->timeUs, alg, alg * busFactor, m->wrong ? fmt::format("{}", *m->wrong) : "");
}

std::string fileStem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::vector<Series> seriesFromJson(const nlohmann::json& run, const std::string& path) {
  std::map<std::string, Series> byKind;
  for (const nlohmann::json& row : run.at("rows")) {
    const nlohmann::json& m = row.at("out_of_place");
    if (m.is_null()) continue;
    std::string kind = row.at("type").get<std::string>();
    if (row.at("redop") != "none") kind += " " + row.at("redop").get<std::string>();
    Series& s = byKind[kind];
    if (s.label.empty()) {
      s.label = fmt::format("{} {}, {}, {} ranks ({})", run.at("collective").get<std::string>(), kind,
                            run.at("provider").get<std::string>(), run.at("ranks").get<int>(), fileStem(path));
    }
    s.points.emplace_back(row.at("size").get<double>(), m.at("busbw_gbps").get<double>());
  }
  std::vector<Series> series;
  for (auto& [kind, s] : byKind) series.push_back(std::move(s));
  return series;
}

std::vector<Series> seriesFromCsv(std::istream& in, const std::string& path) {
  std::string line;
  if (!std::getline(in, line) || line != kCsvHeader) {
    throw std::runtime_error(fmt::format("'{}' is neither comm-bench JSON nor comm-bench CSV", path));
  }
  std::map<std::string, Series> byKind;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (cells.size() < 8 || cells[7].empty()) continue;
    std::string kind = cells[2] + (cells[3] == "none" ? "" : " " + cells[3]);
    Series& s = byKind[kind];
    if (s.label.empty()) s.label = fmt::format("{} ({})", kind, fileStem(path));
    s.points.emplace_back(std::stod(cells[0]), std::stod(cells[7]));
  }
  std::vector<Series> series;
  for (auto& [kind, s] : byKind) series.push_back(std::move(s));
  return series;
}

}  // namespace

void writeJson(const std::string& path, const RunInfo& run, const std::vector<Row>& rows) {
  const Options& o = run.options;
  nlohmann::json j = {
      {"tool", "comm-bench"},
      {"comm_version", comm_version_string()},
      {"collective", run.collective.name},
      {"ranks", run.ranks},
      {"provider", run.provider},
      {"memory", o.memory == COMM_MEMORY_CUDA ? "cuda" : "host"},
      {"calls", o.stream  ? (o.async ? "stream+async" : "stream")
                : o.async ? "async"
                          : "blocking"},
      {"iterations", o.iterations ? nlohmann::json(*o.iterations) : nlohmann::json("auto")},
      {"warmup", o.warmup},
      {"check", o.check},
      {"time", fmt::format("median of the timed iterations' per-iteration times, {}", aggregateName(o.aggregate))},
      {"bus_factor", run.busFactor()},
  };
  nlohmann::json out = nlohmann::json::array();
  for (const Row& row : rows) {
    out.push_back({{"size", row.bytes},
                   {"count", row.count},
                   {"type", comm_dtype_name(row.dtype)},
                   {"redop", opColumn(row)},
                   {"root", row.root},
                   {"iterations", row.iterations},
                   {"out_of_place", measurementJson(row.outOfPlace, row.bytes, run.busFactor())},
                   {"in_place", measurementJson(row.inPlace, row.bytes, run.busFactor())}});
  }
  j["rows"] = std::move(out);
  openForWriting(path) << j.dump(2) << '\n';
}

void writeCsv(const std::string& path, const RunInfo& run, const std::vector<Row>& rows) {
  std::ofstream out = openForWriting(path);
  out << kCsvHeader << '\n';
  for (const Row& row : rows) {
    out << fmt::format("{},{},{},{},{},{},{}\n", row.bytes, row.count, comm_dtype_name(row.dtype), opColumn(row),
                       row.root, csvCells(row.outOfPlace, row.bytes, run.busFactor()),
                       csvCells(row.inPlace, row.bytes, run.busFactor()));
  }
}

std::vector<Series> readSeries(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read '{}'", path));
  if (in.peek() == '{') {
    try {
      return seriesFromJson(nlohmann::json::parse(in), path);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(fmt::format("'{}' is not comm-bench JSON: {}", path, e.what()));
    }
  }
  return seriesFromCsv(in, path);
}

}  // namespace commbench
