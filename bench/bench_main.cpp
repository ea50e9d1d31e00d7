// gpuraid-bench: the in-process load generator. Builds a RAID over mem,
// null, file or block drives, drives it (or the same drives without RAID)
// with a fio-like workload on one reactor per thread, and reports IOPS,
// MB/s, latency percentiles, CPU usr+sys and IOPS per CPU%, with RAID/raw
// ratios and the workload's I/O-count bound in --compare mode.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/cpu_usage.h"
#include "bench/io_bound.h"
#include "bench/load_generator.h"
#include "engine/engine.h"
#include "engine/units.h"
#include "engine/volume.h"
#include "engine/ppl/ppl_log.h"

#include "bench/bench_write_intent.h"
#include "bench/parity_report.h"
#include "bench/rebuild_mode.h"
#include "bench/runner.h"

using namespace gpuraid;
using namespace gpuraid::bench;
using json = nlohmann::json;

namespace {

int fail_usage(const std::string& msg) {
  fprintf(stderr, "gpuraid-bench: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"gpuraid-bench: in-process RAID load generator (compare against the raw member drives)"};
  app.add_option("--level", o.level, "RAID level: 0, 1, 10, 5, 6, ec, draid5, draid6")->capture_default_str();
  app.add_option("--members", o.members, "number of member drives")->capture_default_str();
  app.add_option("--parity", o.parity, "parity members m for --level ec (1..4)");
  app.add_option("--data", o.data, "draid5/draid6: data strips per stripe (D of D+P)");
  app.add_option("--distributed-spares", o.spares, "draid5/draid6: distributed spare strips per row, at least");
  app.add_option("--strip", o.strip, "strip size, 4K..1M")->capture_default_str();
  app.add_option("--drive-type", o.drive_type, "mem, null, file, block or nvme-char (NVMe passthrough on /dev/ngXnY)")->capture_default_str();
  app.add_option("--drive-size", o.drive_size, "size of each mem/null/new file drive")->capture_default_str();
  app.add_option("--drives", o.drives, "drive paths (file or block), comma-separated")->delimiter(',');
  // Drives that behave like drives (issue 34): caps per drive over any type.
  app.add_option("--drive-bw", o.drive_bw, "cap each drive's read and write bandwidth (bytes/s, e.g. 2G)");
  app.add_option("--drive-read-bw", o.drive_read_bw, "cap each drive's read bandwidth (overrides --drive-bw for reads)");
  app.add_option("--drive-write-bw", o.drive_write_bw, "cap each drive's write bandwidth (overrides --drive-bw for writes)");
  app.add_option("--drive-iops", o.drive_iops, "cap each drive's read and write IOPS (e.g. 500k)");
  app.add_option("--drive-read-iops", o.drive_read_iops, "cap each drive's read IOPS");
  app.add_option("--drive-write-iops", o.drive_write_iops, "cap each drive's write IOPS");
  app.add_option("--rw", o.rw, "randread, randwrite, randrw, read, write")->capture_default_str();
  app.add_option("--bs", o.bs, "I/O size")->capture_default_str();
  app.add_option("--rwmixread", o.rwmixread, "read share of randrw, percent")->capture_default_str();
  app.add_option("--iodepth", o.iodepth, "requests in flight per thread")->capture_default_str();
  app.add_option("--threads", o.threads, "threads, one reactor each")->capture_default_str();
  app.add_option("--runtime", o.runtime, "measured seconds per run")->capture_default_str();
  app.add_option("--warmup", o.warmup, "seconds before measuring (default: min(2, runtime/5))");
  app.add_option("--fail", o.fail, "members to fail before measuring")->capture_default_str();
  app.add_option("--state", o.state, "normal, or rebuilding: measure while member 0 is rebuilt onto a spare drive")
      ->capture_default_str();
  app.add_option("--rebuild-rate", o.rebuild_rate, "rebuild rate limit per second (0 = unlimited)")->capture_default_str();
  app.add_option("--rebuild-min", o.rebuild_min,
                 "rate the rebuild is held to while the foreground runs (md's speed_limit_min; 0 = not held)")
      ->capture_default_str();
  app.add_option("--rate-iops", o.rate_iops, "cap the foreground at this many IOPS in total (0 = as fast as it goes)");
  app.add_option("--runs", o.runs, "runs per target; --compare alternates raw and raid")->capture_default_str();
  app.add_option("--parity-backend", o.parity_backend,
                 "auto, cpu, cuda, reference, kernel-cpu (the CUDA kernels on CPU threads standing in for a GPU)")
      ->capture_default_str();
  add_accelerator_options(app, &o.gpu);
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_option("--write-gather-us", o.write_gather_us,
                 "longest a sequential write waits for the rest of its stripe (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--rebuild-run", o.rebuild_run, "member bytes per rebuild I/O (a run of stripes rebuilt together)")
      ->capture_default_str();
  app.add_flag("--no-fill", o.no_fill, "skip writing the drives once before measuring");
  auto* raw = app.add_flag("--raw", o.raw, "run on the member drives without RAID");
  app.add_flag("--compare", o.compare, "run raw and RAID in one invocation and print ratios")->excludes(raw);
  app.add_flag("--guard-compare", o.guard_compare,
               "RAID as a drive group writes (the write-hole guard and the write-intent bitmap on) against RAID "
               "with neither, in one invocation (alternated), and their ratio")
      ->excludes(raw);
  app.add_flag("--write-hole-guard,!--no-write-hole-guard", o.write_hole_guard,
               "RAID 5/6/ec writes log their partial parity first, as a drive group's do (on by default; "
               "--no-write-hole-guard measures without it, as md without PPL)")
      ->excludes(raw);
  app.add_flag("--write-intent,!--no-write-intent", o.write_intent,
               "RAID writes take the write-intent bitmap, as a drive group's do (on by default; the rebuilding "
               "state's group always has it)")
      ->excludes(raw);
  app.add_flag("--json", o.as_json, "print one JSON object");
  app.add_flag("--force", o.force, "allow writing to block devices (destroys their data)");
  CLI11_PARSE(app, argc, argv);

  Level level;
  if (!parse_level(o.level, &level)) return fail_usage("unknown --level '" + o.level + "' (" + level_numbers() + ")");
  DriveType dt;
  if (!parse_drive_type(o.drive_type, &dt)) return fail_usage("unknown --drive-type '" + o.drive_type + "'");
  Rw rw;
  if (!parse_rw(o.rw, &rw)) return fail_usage("unknown --rw '" + o.rw + "'");
  uint64_t strip, bs, dsize;
  if (!parse_size(o.strip, &strip)) return fail_usage("bad --strip '" + o.strip + "'");
  if (!parse_size(o.bs, &bs) || bs == 0 || bs % 4096 || bs > (32u << 20)) return fail_usage("--bs must be a multiple of 4K up to 32M");
  if (!parse_size(o.drive_size, &dsize)) return fail_usage("bad --drive-size '" + o.drive_size + "'");
  if (std::string why; !parse_drive_limits(&o, &why)) return fail_usage(why);
  if (o.iodepth == 0 || o.iodepth > 4096) return fail_usage("--iodepth must be 1..4096");
  if (o.threads == 0 || o.threads > 64) return fail_usage("--threads must be 1..64");
  if (o.rwmixread > 100) return fail_usage("--rwmixread must be 0..100");
  if (o.runtime <= 0 || o.runs == 0) return fail_usage("--runtime and --runs must be positive");
  const bool device = dt == DriveType::Block || dt == DriveType::NvmeChar;
  if (device && !o.force) return fail_usage("--drive-type " + o.drive_type + " writes over the devices' data: add --force");
  if (device && o.drives.size() != o.members) return fail_usage("--drive-type " + o.drive_type + " needs --drives with one path per member");
  if (!o.drives.empty() && o.drives.size() != o.members) return fail_usage("--drives lists " + std::to_string(o.drives.size()) + " paths for " + std::to_string(o.members) + " members");
  ParityBackendKind pk;
  if (!parse_parity_backend(o.parity_backend, &pk)) return fail_usage("unknown --parity-backend");
  AcceleratorSettings gpu;
  if (std::string why; !o.gpu.settings(&gpu, &why)) return fail_usage(why);
  if (o.state != "normal" && o.state != "rebuilding") return fail_usage("--state must be normal or rebuilding");
  uint64_t rebuild_rate;
  if (!parse_size(o.rebuild_rate, &rebuild_rate)) return fail_usage("bad --rebuild-rate '" + o.rebuild_rate + "'");
  uint64_t rebuild_min;
  if (!parse_size(o.rebuild_min, &rebuild_min)) return fail_usage("bad --rebuild-min '" + o.rebuild_min + "'");
  if (o.state == "rebuilding" && (dt != DriveType::Mem && dt != DriveType::File))
    return fail_usage("--state rebuilding needs mem or file drives (a rebuilt group keeps metadata on its members)");
  if (o.state == "rebuilding" && o.fail) return fail_usage("--state rebuilding fails member 0 itself: drop --fail");

  std::string err;
  EngineConfig ec;
  ec.reactors = o.threads;
  ec.nvme_passthru = dt == DriveType::NvmeChar;
  ec.write_gather_us = o.write_gather_us;
  uint64_t rebuild_run = 0;
  if (!parse_size(o.rebuild_run, &rebuild_run) || rebuild_run < 4096 || rebuild_run > (64u << 20))
    return fail_usage("bad --rebuild-run '" + o.rebuild_run + "' (4K to 64M)");
  ec.rebuild_run_bytes = uint32_t(rebuild_run);
  ec.arena_bytes = std::max<size_t>(64u << 20, size_t(o.iodepth) * bs * 2 + (32u << 20));
  std::string backend_name;
  ec.parity_factory = [&] {
    auto b = make_parity_backend(pk, gpu, &err);
    if (b) backend_name = b->name();
    return b;
  };
  auto engine = Engine::create(ec, &err);
  if (!engine) return fail_usage(err);

  std::string tmpdir;
  std::vector<std::unique_ptr<Drive>> drives;
  std::vector<Drive*> members;
  if (dt == DriveType::File && o.drives.empty()) {
    char t[] = "/tmp/gpuraid-bench-XXXXXX";
    if (!mkdtemp(t)) return fail_usage("mkdtemp failed");
    tmpdir = t;
  }
  const uint32_t ndrives = o.members + (o.state == "rebuilding" ? 1 : 0);  // + the replacement
  for (uint32_t i = 0; i < ndrives; i++) {
    DriveSpec s;
    s.type = dt;
    s.size_bytes = dsize;
    s.create = dt == DriveType::File;
    if (!o.drives.empty() && i < o.drives.size()) s.path = o.drives[i];
    else if (dt == DriveType::File) s.path = tmpdir + "/d" + std::to_string(i);
    auto d = Drive::open(s, &err);
    if (!d) return fail_usage(err);
    d->set_limits(o.limits);
    members.push_back(d.get());
    drives.push_back(std::move(d));
  }
  auto cleanup = [&] {
    drives.clear();
    if (!tmpdir.empty()) {
      for (uint32_t i = 0; i < ndrives; i++) unlink((tmpdir + "/d" + std::to_string(i)).c_str());
      rmdir(tmpdir.c_str());
    }
  };
  Workload w;
  w.rw = rw;
  w.bs = uint32_t(bs);
  w.rwmixread = o.rwmixread;
  w.iodepth = o.iodepth;
  w.rate_iops = o.rate_iops / o.threads;
  if (o.state == "rebuilding") {
    RebuildSetup rs{level, o.parity, uint32_t(strip), {o.data, o.spares}, rebuild_rate, rebuild_min};
    int rc = level_description(level).declustered ? run_room_rebuild_mode(*engine, std::move(drives), rs, w, o, backend_name)
                                                  : run_rebuild_mode(*engine, std::move(drives), rs, w, o, backend_name);
    cleanup();
    return rc;
  }
  Geometry g;
  std::string note;
  if (!Volume::fit_geometry(level, o.parity, uint32_t(strip), members, 0, &g, &note, &err, 0, {o.data, o.spares})) {
    cleanup();
    return fail_usage(err);
  }
  // What a drive group does (gpuraidd's defaults): the write-hole guard on
  // parity levels, its log after the member data as a group puts it; the
  // write-intent bitmap wherever there is redundancy to resync.
  const bool guard = o.write_hole_guard && g.has_parity();
  const bool bitmap = o.write_intent && (g.has_parity() || g.is_mirror());
  if (o.guard_compare && !guard && !bitmap)
    return fail_usage("--guard-compare: nothing to compare (neither the write-hole guard nor the bitmap is on for " +
                      std::string(level_name(g.level)) + " with these flags)");
  PplLayout ppl_layout;
  if (guard) {
    ppl_layout = PplLayout::for_new_group(g.strip_bytes, g.member_data_bytes, 0);
    if (!Geometry::make(g.level, g.members, g.level == Level::EC ? g.parity : 0, g.strip_bytes,
                        (g.member_data_bytes - ppl_layout.bytes()) / g.strip_bytes * g.strip_bytes, &g, &err,
                        g.subgroups, g.declustered))
      return fail_usage(err);
    ppl_layout.offset = g.member_data_bytes;
  }
  auto vol = Volume::create(*engine, g, members, 0, &err);
  if (!vol) {
    cleanup();
    return fail_usage(err);
  }
  std::unique_ptr<PplLog> ppl;
  if (guard) ppl = std::make_unique<PplLog>(*vol, ppl_layout, std::array<uint8_t, 16>{1}, 1);
  BenchWriteIntent wi;
  if (bitmap && !wi.attach(*engine, *vol, &err)) {
    cleanup();
    return fail_usage(err);
  }
  // Between runs nothing is in flight: the guard and bitmap may be switched.
  auto as_a_group = [&](bool on) {
    vol->ppl = on && guard ? ppl.get() : nullptr;
    wi.enable(*vol, on && bitmap);
  };
  as_a_group(true);
  if (bs > g.stripe_data_bytes() * 64) return fail_usage("--bs is larger than 64 stripes");
  try {
    if (dt != DriveType::Null && !o.no_fill) fill(*engine, *vol);
  } catch (const std::exception& ex) {
    cleanup();
    return fail_usage(ex.what());
  }
  uint64_t failed = 0;
  for (uint32_t f = 0; f < o.fail; f++) {
    uint32_t m = g.level == Level::R10 ? f * 2 : f;
    if (m >= g.members || !g.survives(failed | 1ull << m)) {
      cleanup();
      return fail_usage("--fail " + std::to_string(o.fail) + " is more than " + level_name(g.level) + " survives");
    }
    failed |= 1ull << m;
    vol->fail_member(m, -EIO);
  }

  RaidTarget raid(*vol);
  RawTarget rawt(*vol, uint32_t(bs));
  std::vector<RunResult> raws, raids, plain;  // plain: --guard-compare's runs without guard and bitmap
  ParityCounters parity_before, parity_after;
  try {
    if (o.raw || o.compare) warm_up(*engine, rawt, w, o, o.seed);
    if (!o.raw) warm_up(*engine, raid, w, o, o.seed);
    parity_before = engine->parity_counters();
    for (uint32_t run = 0; run < o.runs; run++) {
      if (o.raw || o.compare) raws.push_back(run_once(*engine, rawt, w, o, o.seed + run));
      // --guard-compare alternates in ABBA order (on off, off on, ...): a
      // machine that speeds up or slows down over the invocation (measured
      // here: 25, 32, 38 k IOPS in one side's three runs) weighs on both alike.
      const bool plain_first = o.guard_compare && run % 2 == 1;
      auto run_plain = [&] {
        as_a_group(false);
        plain.push_back(run_once(*engine, raid, w, o, o.seed + run));
        plain.back().target = "raid-plain";
        as_a_group(true);
      };
      if (plain_first) run_plain();
      if (!o.raw) raids.push_back(run_once(*engine, raid, w, o, o.seed + run));
      if (o.guard_compare && !plain_first) run_plain();
    }
    parity_after = engine->parity_counters();
  } catch (const std::exception& ex) {
    cleanup();
    return fail_usage(ex.what());
  }
  const ParityCounters parity = parity_delta(parity_after, parity_before);
  const double bound = io_count_bound(g, rw, uint32_t(bs), o.rwmixread, failed);
  json out;
  out["config"] = {{"level", level_name(g.level)}, {"members", g.members}, {"data_strips", g.data_strips()},
                   {"parity", g.is_mirror() ? 0 : g.parity}, {"strip", g.strip_bytes}, {"drive_type", o.drive_type}, {"drive_limits", limits_json(o.limits)},
                   {"drive_size", dsize}, {"rw", rw_name(rw)}, {"bs", bs}, {"rwmixread", o.rwmixread},
                   {"iodepth", o.iodepth}, {"threads", o.threads}, {"runtime", o.runtime}, {"runs", o.runs},
                   {"failed_members", o.fail}, {"parity_backend", parity_ran(backend_name, parity)},
                   {"write_gather_us", o.write_gather_us}, {"write_hole_guard", guard},
                   {"write_intent", bitmap}};
  out["io_count_bound"] = bound;
  out["parity"] = parity_json(backend_name, parity);
  RunResult mraw, mraid;
  for (auto& r : raws) out["raw_runs"].push_back(to_json(r));
  for (auto& r : raids) out["raid_runs"].push_back(to_json(r));
  if (!raws.empty()) {
    out["raw"] = to_json(mraw = median(raws));
    out["raw"]["iops_cov"] = cov(raws);
  }
  if (!raids.empty()) {
    out["raid"] = to_json(mraid = median(raids));
    out["raid"]["iops_cov"] = cov(raids);
    const VolumeStats& st = vol->stats();
    out["raid"]["engine"] = {{"full_stripe_writes", st.full_stripe_writes}, {"rmw_writes", st.rmw_writes},
                             {"rcw_writes", st.rcw_writes}, {"degraded_writes", st.degraded_writes},
                             {"degraded_reads", st.degraded_reads}, {"merged_writes", st.merged_writes},
                             {"merged_reads", st.merged_reads}, {"held_writes", st.held_writes},
                             {"held_reads", st.held_reads}, {"held_expired", st.held_expired},
                             {"guard_logged_writes", guard ? ppl->logged_writes() : 0},
                             {"bitmap_dirty_regions", wi.dirty_regions()}};
  }
  if (o.compare && mraw.iops > 0) {
    const double r_iops = mraid.iops / mraw.iops;
    out["ratio"] = {{"iops", r_iops},
                    {"mbps", mraw.mbps > 0 ? mraid.mbps / mraw.mbps : 0},
                    {"iops_per_cpu_pct", mraw.iops_per_cpu() > 0 ? mraid.iops_per_cpu() / mraw.iops_per_cpu() : 0},
                    {"fraction_of_bound", r_iops / bound}};
  }
  RunResult mplain;
  if (!plain.empty()) {
    for (auto& r : plain) out["plain_runs"].push_back(to_json(r));
    out["plain"] = to_json(mplain = median(plain));
    out["plain"]["iops_cov"] = cov(plain);
    json cost = {{"iops", mplain.iops > 0 ? mraid.iops / mplain.iops : 0},
                 {"mbps", mplain.mbps > 0 ? mraid.mbps / mplain.mbps : 0},
                 {"iops_per_cpu_pct", mplain.iops_per_cpu() > 0 ? mraid.iops_per_cpu() / mplain.iops_per_cpu() : 0}};
    if (ppl)
      cost.update({{"log_writes", ppl->logged_writes()},
                   {"log_batches", ppl->batches()},
                   {"log_waits", ppl->waits()},
                   {"log_flush_rounds", ppl->flush_rounds()},
                   {"log_tail_writes", ppl->tail_writes()}});
    out["guard_cost"] = cost;
  }
  if (o.as_json) {
    printf("%s\n", out.dump(2).c_str());
  } else {
    printf("gpuraid-bench: %s, %u x %s %s, %s bs=%s iodepth=%u threads=%u runtime=%.0fs runs=%u%s, parity %s%s\n",
           g.describe().c_str(), g.members, o.drive_type.c_str(), format_size(dsize).c_str(), rw_name(rw),
           format_size(bs).c_str(), o.iodepth, o.threads, o.runtime, o.runs,
           o.fail ? (" failed=" + std::to_string(o.fail)).c_str() : "", parity_ran(backend_name, parity).c_str(),
           std::string(guard ? ", write-hole guard on" : ", write-hole guard off")
               .append(bitmap ? ", write-intent bitmap on" : ", write-intent bitmap off")
               .c_str());
    if (!note.empty()) printf("note: %s\n", note.c_str());
    if (parity.device_jobs || parity.zero_copy_batches || parity.staged_batches || parity.fallback_jobs)
      printf("parity: %llu zero-copy / %llu staged batches, %llu jobs on the device, on the CPU %llu routed, "
             "%llu capped, %llu unsupported, %llu fallen back; %llu device errors, %llu timeouts\n",
             (unsigned long long)parity.zero_copy_batches, (unsigned long long)parity.staged_batches,
             (unsigned long long)parity.device_jobs, (unsigned long long)parity.routed_jobs,
             (unsigned long long)parity.capped_jobs, (unsigned long long)parity.unsupported_jobs,
             (unsigned long long)parity.fallback_jobs, (unsigned long long)parity.device_errors,
             (unsigned long long)parity.device_timeouts);
    print_header();
    if (!raws.empty()) print_row(mraw);
    if (!raids.empty()) print_row(mraid);
    if (!plain.empty()) {
      print_row(mplain);
      printf("as a group writes / without guard and bitmap: IOPS %.3f, MB/s %.3f", mplain.iops > 0 ? mraid.iops / mplain.iops : 0,
             mplain.mbps > 0 ? mraid.mbps / mplain.mbps : 0);
      if (ppl)
        printf(" (write-hole log: %llu writes in %llu batches, %llu waits for room, "
               "%llu flush rounds, %llu tail writes)",
               (unsigned long long)ppl->logged_writes(), (unsigned long long)ppl->batches(),
               (unsigned long long)ppl->waits(),
               (unsigned long long)ppl->flush_rounds(), (unsigned long long)ppl->tail_writes());
      printf("\n");
    }
    if (o.compare && mraw.iops > 0)
      printf("raid/raw: IOPS %.3f, MB/s %.3f, IOPS/CPU%% %.3f; I/O-count bound %.3f -> %.0f%% of bound\n",
             mraid.iops / mraw.iops, mraid.mbps / mraw.mbps,
             mraw.iops_per_cpu() > 0 ? mraid.iops_per_cpu() / mraw.iops_per_cpu() : 0, bound,
             100 * mraid.iops / mraw.iops / bound);
  }
  const bool errors = mraw.errors || mraid.errors || mplain.errors;
  if (ppl && !ppl->shutdown()) (void)ppl.release();  // its flushes end before the volume goes
  vol.reset();
  cleanup();
  if (errors) {
    fprintf(stderr, "gpuraid-bench: I/O errors during the run\n");
    return 1;
  }
  return 0;
}
